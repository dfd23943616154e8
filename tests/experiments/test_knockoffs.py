"""Knockoffs keep their false discovery rate: the thresholds as their papers define them
(against brute force), the corner where a library's e-BH fell back to its largest e-value,
and the whole selection on planted designs and on real columns with appended probes."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import Dataset, load, make_planted_logistic
from explorer.experiments import knockoff_selection
from explorer.experiments.fdr import ebh, knockoff_evalues, knockoff_plus_threshold
from explorer.experiments.knockoffs import select_knockoffs


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def brute_threshold(W, q):
    """Knockoff+ from its definition: the smallest t > 0 among the |W_j| with
    (1 + #{W ≤ −t}) / max(1, #{W ≥ t}) ≤ q."""
    for t in sorted({abs(w) for w in W if w != 0}):
        if (1 + sum(w <= -t for w in W)) / max(1, sum(w >= t for w in W)) <= q:
            return t
    return math.inf


def brute_ebh(e, alpha):
    """e-BH from its definition: k* = max{k : k·e_(k) ≥ p/α}, the k* largest."""
    p = len(e)
    order = sorted(range(p), key=lambda j: -e[j])
    best = 0
    for k in range(1, p + 1):
        if k * e[order[k - 1]] >= p / alpha * (1 - 1e-12):
            best = k
    return sorted(order[:best])


@pytest.mark.parametrize("seed", range(40))
def test_the_thresholds_are_their_definitions(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(5, 60))
    # ties and zeros, as a path statistic gives them
    W = np.round(rng.normal(0.8 * rng.random(), 1.0, p) * 2) / 2
    W[rng.random(p) < 0.3] = 0.0
    for q in (0.05, 0.1, 0.2, 0.5):
        assert knockoff_plus_threshold(W, q) == brute_threshold(W.tolist(), q)
        e = knockoff_evalues(W, q)
        assert ebh(e, q).tolist() == brute_ebh(e.tolist(), q)
        e_mix = rng.choice([0.0, p / 3, p / 2, p, 2.0 * p], size=p)
        assert ebh(e_mix, q).tolist() == brute_ebh(e_mix.tolist(), q)


def test_ebh_selects_nothing_where_no_cut_qualifies():
    # three features tied at the largest e-value, below what e-BH needs: none qualifies.
    # hidimstat 0.4 fell back to its largest e-value and "selected" the three.
    p, alpha = 50, 0.1
    e = np.zeros(p)
    e[[3, 7, 9]] = 0.9 * p / (3 * alpha)
    assert ebh(e, alpha).size == 0
    from hidimstat.statistical_tools.multiple_testing import fdr_threshold

    assert np.count_nonzero(e >= fdr_threshold(e, fdr=alpha, method="ebh")) == 3
    e[[3, 7, 9]] = p / (3 * alpha)  # exactly enough
    assert ebh(e, alpha).tolist() == [3, 7, 9]


@pytest.mark.parametrize("seed", range(20))
def test_a_knockoff_selection_is_empty_or_at_least_one_over_the_level(seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(0.5, 1.0, (int(rng.integers(1, 6)), 80))
    for fdr in (0.05, 0.1, 0.2):
        chosen, _ = select_knockoffs(W, fdr)
        assert chosen.size == 0 or chosen.size >= math.ceil(1 / fdr - 1e-9)


def test_bad_levels_and_statistics_are_refused():
    with pytest.raises(ValueError, match="fdr"):
        knockoff_plus_threshold([1.0, -1.0], 0.0)
    with pytest.raises(ValueError, match="finite"):
        knockoff_plus_threshold([1.0, np.nan], 0.1)
    with pytest.raises(ValueError, match="non-negative"):
        ebh([1.0, -1.0], 0.1)
    with pytest.raises(ValueError, match="fdr"):
        ebh([1.0], 1.0)


def _fdp_power(selected, data):
    chosen = set(np.asarray(selected).tolist())
    if data.probes is not None:
        false = chosen & set(data.probes.tolist())
        return len(false) / max(1, len(chosen)), None
    truth = set(data.truth.tolist())
    return len(chosen - truth) / max(1, len(chosen)), len(chosen & truth) / len(truth)


LEVELS = (0.05, 0.1, 0.2)


def test_knockoffs_keep_their_rate_on_planted_designs_and_find_the_signal():
    fdp = {level: [] for level in LEVELS}
    power = {level: [] for level in LEVELS}
    for seed in range(6):
        data = make_planted_logistic(400, 60, 10, 0.5, seed=seed)
        result = knockoff_selection("fsa", data, fdr=0.1, seed=seed)
        for level in LEVELS:  # the same statistics, each level's threshold
            chosen, _ = select_knockoffs(result.statistic, level)
            f, pw = _fdp_power(chosen, data)
            fdp[level].append(f)
            power[level].append(pw)
        assert _fdp_power(result.selected, data)[0] == fdp[0.1][-1]
    for level in LEVELS:
        se = np.std(fdp[level], ddof=1) / np.sqrt(len(fdp[level]))
        assert np.mean(fdp[level]) <= level + se, (level, fdp[level])
    assert np.mean(power[0.2]) >= 0.5
    assert "at most 0.1" in result.verdict() and "Gaussian" in result.verdict()


def test_knockoffs_select_nothing_on_permuted_labels():
    empty = 0
    for seed in range(10):
        data = make_planted_logistic(400, 60, 10, 0.5, null=True, seed=seed)
        result = knockoff_selection("fsa", data, fdr=0.2, seed=seed)
        empty += result.selected.size == 0
    assert empty >= 9


def test_knockoffs_keep_their_rate_on_real_columns_with_probes():
    # breast cancer's 30 columns with 60 permuted copies (known nulls). Five draws
    # aggregated by e-values: where hidimstat's e-BH fell back to its largest e-value,
    # 10 features were "selected" at fdr 0.2, a probe among them (seed 0).
    fdp = {level: [] for level in LEVELS}
    for seed in range(5):
        data = load("breast-cancer-probes", seed=seed)
        result = knockoff_selection("fsa", data, fdr=0.2, n_repeats=5, seed=seed)
        assert not set(result.selected.tolist()) & set(data.probes.tolist())
        single = knockoff_selection("fsa", data, fdr=0.1, seed=seed)
        for level in LEVELS:
            fdp[level].append(_fdp_power(select_knockoffs(single.statistic, level)[0],
                                         data)[0])
    for level in LEVELS:
        se = np.std(fdp[level], ddof=1) / np.sqrt(len(fdp[level]))
        assert np.mean(fdp[level]) <= level + se, (level, fdp[level])


def test_knockoffs_refuse_a_design_they_cannot_use():
    data = make_planted_logistic(300, 500, 20, 0.5, seed=0)  # p ≥ n
    result = knockoff_selection("fsa", data)
    assert result.refused and "p = 500 features ≥ n" in result.refused
    assert result.selected.size == 0 and result.verdict().startswith("knockoffs not used")
    sparse = Dataset(X=sp.random(400, 50, density=0.1, format="csr", random_state=0),
                     y=np.r_[np.zeros(200), np.ones(200)])
    assert "sparse" in knockoff_selection("fsa", sparse).refused
    with pytest.raises(ValueError, match="fdr"):
        knockoff_selection("fsa", data, fdr=1.5)


def test_the_verdict_says_the_smallest_selection():
    data = make_planted_logistic(300, 40, 3, 0.5, seed=1)
    result = knockoff_selection("fsa", data, fdr=0.2, seed=1)
    assert "either nothing or at least 5 features" in result.verdict()
    assert result.statistic.shape == (40,)


def test_constant_columns_and_pinned_features_stay_out_of_the_selection():
    data = load("digits-3v8")  # border pixels are always 0: the covariance is singular there
    constant = np.flatnonzero(np.ptp(np.asarray(data.split().X), axis=0) == 0)
    result = knockoff_selection("fsa", data, fdr=0.2, always_include=[36], exclude=[20])
    assert constant.size and np.all(result.statistic[constant] == 0)
    assert result.statistic[36] == 0 and result.statistic[20] == 0
    assert 36 not in result.selected and 20 not in result.selected
    assert "always-included feature is in the model, outside this selection" in \
        result.verdict()
    assert "the sample covariance" in result.verdict()
