"""FSA's compiled pieces beside its engine, against numpy and libm."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.engines.fsa._compiled import (
    _columns_dot,
    _columns_times,
    _csc_columns_dot,
    _csc_columns_times,
    _exp_neg_inplace,
)


def test_vectorised_exp_neg_is_libm_to_an_ulp():
    """FSA's logistic steps use a polynomial exp(−v) that vectorises; it must equal libm's to
    rounding over the whole range the margins take, and not turn large margins into NaN."""
    rng = np.random.default_rng(0)
    v = np.concatenate([np.abs(rng.standard_normal(100_000)) * 30, rng.uniform(0, 1e-3, 1000),
                        [0.0, 1e-300, 0.5 * np.log(2), np.log(2), 700.0, 707.9]])
    got = v.copy()
    _exp_neg_inplace(got, np.empty_like(got))
    np.testing.assert_allclose(got, np.exp(-v), rtol=4e-16, atol=0)
    huge = np.array([708.5, 745.0, 1e6, np.inf])
    _exp_neg_inplace(huge, np.empty_like(huge))
    assert np.all(np.isfinite(huge)) and np.all((huge >= 0) & (huge < 1e-307))


@pytest.mark.parametrize("count", [0, 1, 4, 7, 9])
def test_blocked_column_products_match_numpy(count):
    """The four-column sweeps of FSA's column-major steps: f += X[:, cols] w and
    g[cols] = X[:, cols]ᵀ r, whatever the remainder after blocks of four."""
    rng = np.random.default_rng(count)
    X = np.asfortranarray(rng.standard_normal((37, 12)))
    cols = np.sort(rng.choice(12, count, replace=False)).astype(np.int64)
    w, r = rng.standard_normal(12), rng.standard_normal(37)
    f = rng.standard_normal(37)
    expected = f + X[:, cols] @ w[cols]
    _columns_times(X, cols, count, w, f)
    np.testing.assert_allclose(f, expected, rtol=1e-13, atol=1e-13)
    g = np.full(12, np.nan)
    _columns_dot(X, cols, count, r, g)
    np.testing.assert_allclose(g[cols], X[:, cols].T @ r, rtol=1e-13, atol=1e-13)
    assert np.isnan(np.delete(g, cols)).all()  # other columns untouched


@pytest.mark.parametrize("count", [0, 1, 5])
def test_csc_column_products_match_numpy(count):
    """The CSC steps' f += X[:, cols] w and g[cols] = X[:, cols]ᵀ r read stored values only,
    empty columns included."""
    rng = np.random.default_rng(count)
    dense = rng.standard_normal((29, 10)) * (rng.random((29, 10)) < 0.2)
    dense[:, 3] = 0.0  # an empty column
    X = sp.csc_matrix(dense)
    cols = np.sort(rng.choice(10, count, replace=False)).astype(np.int64)
    if count:
        cols[0] = 3
        cols.sort()
    w, r = rng.standard_normal(10), rng.standard_normal(29)
    f = rng.standard_normal(29)
    expected = f + dense[:, cols] @ w[cols]
    _csc_columns_times(X.data, X.indices, X.indptr, cols, count, w, f)
    np.testing.assert_allclose(f, expected, rtol=1e-13, atol=1e-13)
    g = np.full(10, np.nan)
    _csc_columns_dot(X.data, X.indices, X.indptr, cols, count, r, g)
    np.testing.assert_allclose(g[cols], dense[:, cols].T @ r, rtol=1e-13, atol=1e-13)
    assert np.isnan(np.delete(g, cols)).all()
