"""Input validation: every NaN or inf is found and named, whatever the layout, and finite
matrices whose sum overflows are accepted."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import DataError
from explorer.data._validation import check_finite


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "csr"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_entry_is_named_by_row_and_column(dtype, layout, bad):
    X = np.random.default_rng(0).standard_normal((40, 30)).astype(dtype)
    X[17, 23] = bad
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "strided":
        X = np.repeat(X, 2, axis=1)[:, ::2]
    elif layout == "csr":
        X = sp.csr_matrix(X)
    kind = "missing value \\(NaN\\)" if np.isnan(bad) else "infinite value"
    with pytest.raises(DataError, match=f"{kind} at row 18, column 24"):
        check_finite(X)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_finite_values_whose_sum_overflows_are_accepted(dtype):
    big = np.finfo(dtype).max / 2
    X = np.full((8, 3), big, dtype=dtype)
    check_finite(X)
    check_finite(np.asfortranarray(X))
    X[0, 0], X[1, 0] = np.inf, -np.inf  # the sum is NaN, not inf: still found
    with pytest.raises(DataError, match="infinite value at row 1, column 1"):
        check_finite(X)
