"""Shared fixtures: small seeded datasets in dense and sparse form."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import make


@pytest.fixture(scope="session")
def digits38():
    return make("digits-3v8").split(test_size=0.3, seed=0)


@pytest.fixture(scope="session")
def easy_sparse():
    """A small sparse binary problem with 5 informative columns among 300."""
    rng = np.random.default_rng(0)
    X = sp.random(400, 300, density=0.05, format="csr", random_state=1)
    X = X + sp.csr_matrix((rng.random(400 * 5), (np.repeat(np.arange(400), 5),
                                                 np.tile(np.arange(5), 400))), shape=(400, 300))
    w = np.zeros(300)
    w[:5] = [2, -2, 1.5, -1.5, 1]
    y = np.where(X @ w > np.median(X @ w), 1, -1)
    return sp.csr_matrix(X), y


def as_layout(X, layout: str, dtype=np.float64):
    """Return X as a dense array or a CSR/CSC matrix of the given dtype."""
    if layout == "dense":
        return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=dtype)
    M = sp.csr_matrix(X, dtype=dtype)
    return M if layout == "csr" else M.tocsc()
