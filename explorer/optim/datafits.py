"""Data-fit terms as functions of the model outputs f (value and gradient with respect to f).

FSA (Barbu et al.) uses them as the *mean* over examples (or pairs), which is what makes its
learning rates (η = 20 for the logistic loss, 1 otherwise) meaningful on standardised data:
``L(β) = (1/N) Σ_i ℓ(y_i, f_i) + ρ(β)``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .losses import MarginLoss


class Datafit:
    """``scale · Σ_i l(y_i, f_i)``, or its mean over examples (FSA eqs. 4–8), for a loss of the
    table in :mod:`explorer.optim.losses`; y in {−1, +1} for margin losses, real for squared.

    ``curvature`` bounds the Hessian's diagonal factor: the gradient's Lipschitz constant with
    respect to f (a step-size bound once multiplied by ‖X‖₂²)."""

    def __init__(self, loss: MarginLoss, y: np.ndarray, *, scale: float = 1.0,
                 mean: bool = True):
        self.loss = loss
        self.y = np.asarray(y, dtype=np.float64)
        self.n = self.y.shape[0]
        self.weight = float(scale) / (self.n if mean else 1.0)

    @property
    def curvature(self) -> float:
        return self.weight * self.n * self.loss.curvature if self.weight else 0.0

    @property
    def point_curvature(self) -> float:
        """c with the data term's curvature along any change Δf of the outputs at most
        c·‖Δf‖²: the weight of an example times the loss's curvature bound."""
        return self.weight * self.loss.curvature

    def value(self, f: np.ndarray) -> float:
        return self.weight * float(np.sum(self.loss.value_at(self.y, f)))

    def gradient(self, f: np.ndarray) -> np.ndarray:
        return self.weight * self.loss.grad_at(self.y, f)

    def best_constant(self) -> np.ndarray | float:
        """argmin_c Σ_i l(y_i, c) per column of y: the empty model's intercept (the root of
        the monotone derivative, by Brent's method in a doubling bracket)."""
        from scipy.optimize import brentq

        if self.y.ndim == 2:
            return np.array([Datafit(self.loss, self.y[:, t]).best_constant()
                             for t in range(self.y.shape[1])])
        closed = self.loss.best_constant(self.y)
        if closed is not None:
            return closed

        def slope(c):
            return float(np.sum(self.loss.grad_at(self.y, np.full(self.n, c))))

        lo, hi = -1.0, 1.0
        for _ in range(60):
            if slope(lo) <= 0 <= slope(hi):
                break
            lo, hi = 2 * lo, 2 * hi
        else:
            raise ValueError("the loss has no finite best constant for these labels")
        if slope(lo) == 0:
            return lo
        return float(brentq(slope, lo, hi, xtol=1e-12))


class PairwiseDatafit:
    """The pairwise ranking loss of FSA eq. (9), as a mean over pairs.

    Pairs are the (i, j) inside one query with different relevance; with d = f_i − f_j and
    r_ij = 1 when y_i > y_j (i more relevant), the loss ``ln(1 + e^d) − r_ij d`` is the logistic
    loss of the pair. The paper writes r_ij = 1 for "x_i worse", which scores badness; flipping
    the convention makes higher scores mean more relevant, as ``predict`` promises.
    """

    def __init__(self, y: np.ndarray, query: np.ndarray | None = None, max_pairs: int = 2_000_000):
        y = np.asarray(y, dtype=np.float64)
        query = np.zeros(y.size, dtype=np.int64) if query is None else np.asarray(query)
        first, second = [], []
        for q in np.unique(query):
            rows = np.flatnonzero(query == q)
            yi = y[rows]
            a, b = np.nonzero(yi[:, None] > yi[None, :])
            first.append(rows[a])
            second.append(rows[b])
        self.i = np.concatenate(first) if first else np.zeros(0, dtype=np.int64)
        self.j = np.concatenate(second) if second else np.zeros(0, dtype=np.int64)
        if self.i.size == 0:
            raise ValueError("no pair of examples with different relevance inside a query")
        if self.i.size > max_pairs:
            raise ValueError(f"{self.i.size:,} training pairs exceed {max_pairs:,}; use fewer "
                             "documents per query")
        self.n = y.size
        self.n_pairs = self.i.size

    curvature = 0.5  # the logistic loss of a difference f_i − f_j: 2 × 0.25

    @property
    def point_curvature(self) -> float:
        """c with the mean pairwise loss's curvature along Δf at most c·‖Δf‖²: its Hessian
        is 0.25/P times a graph Laplacian over the pairs, whose norm is at most twice the
        largest number of pairs an example is in."""
        degree = np.bincount(np.concatenate([self.i, self.j]), minlength=self.n).max()
        return 0.25 * 2.0 * float(degree) / self.n_pairs

    def value(self, f):
        d = f[self.i] - f[self.j]  # every pair has r = 1 (i is the more relevant one)
        return float(np.mean(np.logaddexp(0.0, -d)))

    def gradient(self, f):
        d = f[self.i] - f[self.j]
        w = -expit(-d) / self.n_pairs
        g = np.bincount(self.i, weights=w, minlength=self.n)
        g -= np.bincount(self.j, weights=w, minlength=self.n)
        return g
