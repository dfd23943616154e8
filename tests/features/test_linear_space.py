"""Feature spaces against brute force: scores, the top-k worst-case analysis and the columns
they hand to the masters, for dense and sparse X in float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.features import LinearSpace
from tests.conftest import as_layout

LAYOUTS = ["dense", "csr", "csc"]


def _X(layout, dtype, seed=0, shape=(30, 50)):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape) * (rng.random(shape) < 0.3)
    X = X.astype(dtype)
    return X if layout == "dense" else getattr(sp, f"{layout}_matrix")(X)


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scaling", [None, "norm"])
def test_scores_and_top_equal_brute_force(layout, dtype, scaling):
    X = _X(layout, dtype)
    s = np.random.default_rng(1).standard_normal(X.shape[0])
    space = LinearSpace(X, scaling=scaling)
    D = _dense(X).astype(np.float64)
    lam = 1.0 / np.where(np.linalg.norm(D, axis=0) > 0, np.linalg.norm(D, axis=0), np.inf) \
        if scaling else np.ones(D.shape[1])
    expected = (lam * (D.T @ s)) ** 2
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(space.scores(s), expected, rtol=rtol, atol=1e-12)
    ids, vals = space.top(s, 7)
    assert set(ids.tolist()) == set(np.argsort(-expected)[:7].tolist())
    np.testing.assert_allclose(np.sort(vals), np.sort(expected[ids]), rtol=rtol)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_columns_are_the_chosen_scaled_features(layout):
    X = _X(layout, np.float64)
    space = LinearSpace(X, scaling="norm")
    ids = np.array([3, 17, 40])
    cols = space.columns(ids)
    D = _dense(X)
    expected = D[:, ids] / np.linalg.norm(D[:, ids], axis=0)
    np.testing.assert_allclose(_dense(cols.matrix), expected, atol=1e-12)
    np.testing.assert_array_equal(cols.candidate, ids)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_group_scores_are_sums_of_squares_over_members(layout):
    X = _X(layout, np.float64, shape=(20, 12))
    groups = np.repeat(np.arange(4), 3)
    weights = np.array([1.0, 2.0, 0.5, 1.5])
    s = np.random.default_rng(2).standard_normal(20)
    space = LinearSpace(X, groups=groups, group_weights=weights)
    v = _dense(X).T @ s
    expected = [weights[g] ** 2 * np.sum(v[groups == g] ** 2) for g in range(4)]
    np.testing.assert_allclose(space.scores(s), expected, rtol=1e-10)


def test_one_pass_per_scoring():
    X = _X("csr", np.float64)
    space = LinearSpace(X)
    s = np.ones(X.shape[0])
    space.top(s, 3)
    space.top(s, 3)
    assert space.passes == 2


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_a_column_of_rounding_residue_is_never_scaled_up(layout):
    """pd-speech's wavelet means are zeros written as 1e-21: scaled to unit RMS they became
    rounding noise at the size of a real feature (FGM, FS-multi and FSA selected them with
    weights of 1e20). Such a column counts as empty; a small but real one (1e-6) is scaled."""
    from explorer.engines.fsa.designs import standard_moments
    from explorer.features import NEGLIGIBLE_RMS, auto_scaling, negligible

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4)) * np.array([1.0, 1e3, 1e-6, 1.0])
    X[:, 3] = rng.standard_normal(50) * 1e-21
    X = as_layout(X, layout)
    assert negligible([1e-21, 1e-18, NEGLIGIBLE_RMS / 2]).all()
    assert not negligible([1e-6, NEGLIGIBLE_RMS]).any()
    space = LinearSpace(X, scaling="rms")
    assert space.lam[3] == 0.0 and np.all(space.lam[:3] > 0)
    np.testing.assert_allclose(space.lam[2] * 1e-6, 1.0, rtol=0.3)  # 1e-6 is scaled up
    scaling, _ = auto_scaling(X)
    assert scaling == "rms"  # the 1e3 against 1e-6 columns, whatever the residue
    _, scale = standard_moments(X)
    assert scale[3] == 1.0 and scale[2] < 1e-5
