"""Prune-and-refit: from an over-complete selection to the k features a best-subset method
would keep, then the restricted model on exactly those k.

Two published pieces, composed:

* the *backward sacrifice* of abess's splicing (Zhu et al., PNAS 2020, eq. 5): dropping feature
  j from a fitted model raises the loss by about ``½ h_j w_j²``, h_j the loss's curvature along
  x_j (``1 + C Σ_i l″(z_i) x_ij²`` for FGM's restricted objective ½‖w‖² + C Σ l). Keeping the
  k largest sacrifices of a generous selection is abess's backward step applied once;
* the de-biasing retrain of Tan et al.'s Fig. 4: the kept features get the restricted ℓ2 model
  (FGM's master with one block, certified like every master).

FGM grows its ℓ1² path past k (blocks of ⌈1.5·B⌉) and hands the result here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .cache import BlockCache
from .l12 import solve_l12
from .losses import MarginLoss
from .stopping import Stopping

OVERSELECT = 1.5  # blocks of ⌈1.5·B⌉: the selection pruned back to the paper's size


def curvature_weights(loss: MarginLoss, y: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """l″(y_i f_i) per example (the squared hinge's generalised second derivative: 1 where
    the margin is violated)."""
    z = y * margins
    if loss.name == "squared_hinge":
        return (z < 1.0).astype(np.float64)
    if loss.name == "logistic":
        p = 1.0 / (1.0 + np.exp(-np.abs(z)))
        return p * (1.0 - p)
    return np.full(z.shape, float(loss.curvature))


def sacrifices(X, columns: np.ndarray, coef: np.ndarray, loss: MarginLoss, C: float,
               y: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """``½ h_j w_j²`` for the given columns: the objective's rise when each alone is dropped
    (second-order estimate), h_j = 1 + C Σ_i l″(z_i) x_ij²."""
    curv = curvature_weights(loss, y, margins)
    sub = X[:, columns]
    sq = sub.multiply(sub) if sp.issparse(sub) else np.square(sub, dtype=np.float64)
    h = 1.0 + C * np.asarray(sq.T @ curv).ravel()
    return 0.5 * h * np.square(coef)


def restricted_fit(X, columns: np.ndarray, y: np.ndarray, loss: MarginLoss, C: float, *,
                   fit_intercept: bool, stopping: Stopping, interrupt=None):
    """The ℓ2 model ½‖w‖² + C Σ l(y_i (x_iᵀw + b)) on the given columns (FGM's master with one
    block, centred when it has an intercept); returns (coef, intercept, result)."""
    cache = BlockCache(X.shape[0], sp.issparse(X), center=fit_intercept)
    sub = X[:, columns]
    cache.add(sub if sp.issparse(sub) else np.asarray(sub, dtype=np.float64))
    result = solve_l12(cache, y, loss, C, fit_intercept=fit_intercept, stopping=stopping,
                       interrupt=interrupt)
    coef = result.x[0]
    intercept = float(result.x[1][0]) - float(cache.means @ coef)
    return coef, intercept, result


def prune_and_refit(X, y, loss: MarginLoss, C: float, support: np.ndarray, coef: np.ndarray,
                    margins: np.ndarray, k: int, *, fit_intercept: bool, stopping: Stopping,
                    interrupt=None):
    """Keep the k selected features of largest sacrifice and refit on them.

    Returns (kept columns, their coefficients, intercept, solver result)."""
    support = np.asarray(support, dtype=np.int64)
    k = int(min(k, support.size))
    score = sacrifices(X, support, coef[support], loss, C, y, margins)
    kept = np.sort(support[np.argsort(-score, kind="stable")[:k]])
    weights, intercept, result = restricted_fit(X, kept, y, loss, C,
                                                fit_intercept=fit_intercept,
                                                stopping=stopping, interrupt=interrupt)
    return kept, weights, intercept, result
