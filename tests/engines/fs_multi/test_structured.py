"""The most violated labelings of FS-multi's multivariate losses (eq. 14) against brute force
over every labeling, Joachims' O(P·N) grid, and their tie and input rules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from explorer.engines.fs_multi.structured import (
    allowed,
    default_k,
    delta,
    most_violated,
    most_violated_grid,
)

MEASURES = ["f1", "prbep", "rec@k", "hamming"]


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("seed", range(8))
def test_most_violated_labeling_equals_brute_force_at_n_10(measure, seed):
    rng = np.random.default_rng(seed)
    n = 10
    y = -np.ones(n)
    y[rng.choice(n, rng.integers(1, 5), replace=False)] = 1.0
    f = rng.normal(size=n) * rng.uniform(0.1, 5)
    k = default_k(y)
    best = -np.inf
    for labels in itertools.product([-1.0, 1.0], repeat=n):
        yb = np.array(labels)
        if allowed(y, yb, measure, k):
            best = max(best, delta(y, yb, measure, k) + yb @ f / n)
    yb, d = most_violated(y, f, measure, k)
    assert allowed(y, yb, measure, k)
    assert d == pytest.approx(delta(y, yb, measure, k))
    assert d + yb @ f / n == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("measure", ["f1", "prbep", "rec@k"])
def test_sorted_search_equals_joachims_grid(measure):
    rng = np.random.default_rng(1)
    y = np.where(rng.random(400) < 0.1, 1.0, -1.0)
    for _ in range(5):
        f = rng.normal(size=400) + y * rng.uniform(0, 2)
        a = most_violated(y, f, measure, default_k(y))
        b = most_violated_grid(y, f, measure, default_k(y))
        assert a[1] + a[0] @ f / 400 == pytest.approx(b[1] + b[0] @ f / 400, abs=1e-12)


@pytest.mark.parametrize("measure", ["f1", "prbep", "rec@k"])
def test_tied_scores_are_labelled_in_index_order(measure):
    """On sparse text most rows have no selected word, so their scores tie exactly. The
    labeling with a positives and b negatives at +1 is then the first a (b) of a stable sort
    by decreasing score — the cut a fit adds, so the same fit on every run and version — and
    its Δ is the measure's on it."""
    rng = np.random.default_rng(2)
    n = 300
    y = np.where(rng.random(n) < 0.1, 1.0, -1.0)
    for level in (0.0, -0.0, 0.3):
        f = np.where(rng.random(n) < 0.6, level, rng.normal(size=n).round(1))
        yb, d = most_violated(y, f, measure, default_k(y))
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y <= 0)
        a, b = int(np.sum(yb[pos] > 0)), int(np.sum(yb[neg] > 0))
        assert 0 < b < neg.size  # the ties are split: the order among them matters
        expected = -np.ones(n)
        expected[pos[np.argsort(-f[pos], kind="stable")[:a]]] = 1.0
        expected[neg[np.argsort(-f[neg], kind="stable")[:b]]] = 1.0
        np.testing.assert_array_equal(yb, expected)
        assert d == delta(y, yb, measure, default_k(y))


@pytest.mark.parametrize("measure", ["f1", "prbep", "rec@k"])
def test_non_finite_scores_are_refused(measure):
    y = np.array([1.0, -1.0, -1.0, 1.0])
    for bad in (np.nan, np.inf):
        with pytest.raises(FloatingPointError, match="not finite"):
            most_violated(y, np.array([0.5, bad, 0.1, 0.2]), measure, 2)
