"""Plain-numpy twins of the numba kernels: slower, obviously right, used by the tests."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def xts(X, s) -> np.ndarray:
    """Xᵀs by the definition (densifies: small inputs only)."""
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    return dense.astype(np.float64).T @ np.asarray(s, dtype=np.float64)


def group_sumsq(values, groups, weights) -> np.ndarray:
    """weights[g]² Σ_{j∈G_g} values[j]² for a list of index arrays."""
    return np.array([w**2 * np.sum(np.square(values[np.asarray(g)]))
                     for g, w in zip(groups, weights)])


def top_k(scores, k, excluded=None) -> np.ndarray:
    """Ids of the k largest scores (ties: smaller id first), skipping excluded ids."""
    scores = np.asarray(scores, dtype=np.float64).copy()
    if excluded is not None and len(excluded):
        scores[np.asarray(excluded, dtype=bool)] = -np.inf
    order = np.lexsort((np.arange(scores.size), -scores))
    order = order[np.isfinite(scores[order])]
    return order[:k]


def poly2_scores(X, s, gamma: float, r: float) -> np.ndarray:
    """Scores of every degree-2 column (linear, then per a: square, pairs) by expanding X."""
    dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    n, m = dense.shape
    cols = [np.sqrt(2 * gamma * r) * dense[:, a] for a in range(m)]
    for a in range(m):
        cols.append(gamma * dense[:, a] ** 2)
        for c in range(a + 1, m):
            cols.append(np.sqrt(2) * gamma * dense[:, a] * dense[:, c])
    Phi = np.column_stack(cols)
    return (Phi.T @ s) ** 2


def pl_design(bins, frac, n_basis) -> np.ndarray:
    """The explicit piecewise-linear design matrix, n × (m·n_basis), column j·n_basis + k."""
    n, m = bins.shape
    U = np.zeros((n, m * n_basis))
    rows = np.arange(n)
    for j in range(m):
        U[rows, j * n_basis + bins[:, j]] += 1.0 - frac[:, j]
        U[rows, j * n_basis + bins[:, j] + 1] += frac[:, j]
    return U


def lp_ball_projection(v, radius: float, p: float) -> np.ndarray:
    """Projection onto the ℓ_p ball by a generic bounded minimiser (the numba kernel's twin)."""
    from scipy.optimize import minimize

    v = np.asarray(v, dtype=np.float64)
    if np.sum(np.abs(v) ** p) ** (1 / p) <= radius:
        return v.copy()
    cons = {"type": "ineq", "fun": lambda x: radius ** p - np.sum(np.abs(x) ** p)}
    res = minimize(lambda x: 0.5 * np.sum((x - v) ** 2), v * 0.5, constraints=[cons],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    return res.x


def dense_take_columns(X, columns, scale, out, start, stop):
    """Rows start..stop of X[:, columns]·scale into ``out`` (float64)."""
    out[start:stop] = np.asarray(X[start:stop][:, columns], dtype=np.float64) * scale


def dense_take_rows(A, rows, scale, out):
    """A[rows]·scale (per row) into ``out``."""
    out[:] = A[rows] * np.asarray(scale)[:, None]


def l1sq_scales(norms, step, out):
    """The scales of prox of ½(Σ_t‖ω_t‖)² (Alg. 3 of Tan et al.), written with numpy."""
    u = np.asarray(norms, dtype=np.float64)
    out[:] = 0.0
    if u.size == 0:
        return out
    order = np.argsort(-u, kind="stable")
    csum = np.cumsum(u[order])
    j = np.arange(1, u.size + 1)
    positive = u[order] - step / (1.0 + j * step) * csum > 0
    if positive.any():
        rho = int(np.flatnonzero(positive)[-1]) + 1
        threshold = step / (1.0 + rho * step) * csum[rho - 1]
        above = u > threshold
        out[above] = (u[above] - threshold) / u[above]
    return out


def scaled_trial(Pv, G, step, scales, out):
    """(Pv − step·G)·scales, column by column, into ``out``."""
    out[:] = (G * -step + Pv) * scales
    return out
