"""Piecewise-linear basis responses per variable (FSA §2.5.1).

Each variable j is described on its training range [x_min, x_max] by B bins of length
b = (x_max − x_min)/B; a value x (clipped to the range) falls in bin j(x) at relative position
α(x), and the B+1 hat functions give u_{j(x)} = 1 − α, u_{j(x)+1} = α. The response
f_β(x) = Σ_k β_k u_k(x) is linear between the knots. Only the bin index and α are stored
(n×m int16 + float32, column-major), never the n × m(B+1) design matrix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels import pl_forward, pl_gradient


class PiecewiseLinearBasis:
    """Knots fitted on training data; encodes any matrix as (bins, fractions)."""

    def __init__(self, n_bins: int = 10):
        if not 1 <= int(n_bins) <= 1000:
            raise ValueError("bins must be between 1 and 1000")
        self.n_bins = int(n_bins)

    @property
    def n_basis(self) -> int:
        return self.n_bins + 1

    def fit(self, X) -> PiecewiseLinearBasis:
        if sp.issparse(X):
            self.low = np.asarray(X.min(axis=0).toarray()).ravel().astype(np.float64)
            self.high = np.asarray(X.max(axis=0).toarray()).ravel().astype(np.float64)
        else:
            self.low = np.min(X, axis=0).astype(np.float64)
            self.high = np.max(X, axis=0).astype(np.float64)
        width = self.high - self.low
        self.step = np.where(width > 0, width / self.n_bins, 1.0)
        return self

    def encode(self, X, columns: np.ndarray | None = None):
        """(bins, fractions) of X's columns (all, or ``columns``), column-major."""
        cols = np.arange(self.low.size) if columns is None else np.asarray(columns)
        dense = X[:, cols]
        dense = dense.toarray() if sp.issparse(dense) else np.asarray(dense, dtype=np.float64)
        pos = (np.clip(dense, self.low[cols], self.high[cols]) - self.low[cols]) / self.step[cols]
        bins = np.minimum(np.floor(pos), self.n_bins - 1).astype(np.int16)
        frac = (pos - bins).astype(np.float32)
        return np.asfortranarray(bins), np.asfortranarray(frac)

    @staticmethod
    def forward(bins, frac, beta) -> np.ndarray:
        """f_i = Σ_j u(x_ij)ᵀ β_j (numba)."""
        out = np.empty(bins.shape[0])
        return pl_forward(bins, frac, np.ascontiguousarray(beta, dtype=np.float64), out)

    def gradient(self, bins, frac, r) -> np.ndarray:
        """Σ_i r_i u(x_ij) for every kept variable j: an m × (B+1) array (numba)."""
        out = np.empty((bins.shape[1], self.n_basis))
        return pl_gradient(bins, frac, np.ascontiguousarray(r, dtype=np.float64), out)

    def response(self, j: int, beta_j: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The learned response curve of variable j at values x."""
        pos = (np.clip(x, self.low[j], self.high[j]) - self.low[j]) / self.step[j]
        b = np.minimum(np.floor(pos), self.n_bins - 1).astype(int)
        a = pos - b
        return (1 - a) * beta_j[b] + a * beta_j[b + 1]

    def knots(self, j: int) -> np.ndarray:
        return self.low[j] + self.step[j] * np.arange(self.n_basis)


def second_difference(n_basis: int) -> np.ndarray:
    """The (B−1) × (B+1) second-difference operator of the smoothness prior (FSA eq. 13)."""
    D = np.zeros((max(0, n_basis - 2), n_basis))
    for k in range(n_basis - 2):
        D[k, k:k + 3] = (1.0, -2.0, 1.0)
    return D
