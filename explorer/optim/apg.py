"""Accelerated proximal gradient over column blocks (Alg. 4 of Tan et al., FGM), with the
selected columns cached and the line-search cache of §5.3.

The objective is ``C Σ_i l(y_i f_i) + Ω(ω)`` with ``f = Σ_t A_t ω_t + b``, where the prox of Ω
scales each block (``prox(g)_t = c_t g_t``, as the ℓ1² Moreau projection does). Because a trial
point is ``c_t (v_t − ∇_t/τ)`` block by block, its margins are ``Σ_t c_t (A_t v_t − A_t∇_t/τ)``:
with the n×T products ``A_t v_t`` and ``A_t ∇_t`` cached, every line-search step costs O(nT),
not a pass over the cached columns. One iteration makes two passes over the cache (``A_tᵀ r``
and ``A_t ∇_t``), whatever the number of line-search steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .losses import MarginLoss


class BlockCache:
    """The columns of the selected blocks, stored once (dense float64 or sparse CSC).

    Dense columns go into one Fortran-ordered buffer grown by doubling, so the whole cache is a
    contiguous n×W array and ``Aᵀr`` is a single BLAS call.
    """

    def __init__(self, n_samples: int, sparse: bool):
        self.n = n_samples
        self.sparse = sparse
        self.bounds: list[tuple[int, int]] = []
        self._buffer = np.empty((n_samples, 0), order="F")
        self._sparse_blocks: list[sp.csc_matrix] = []
        self._stacked: sp.csc_matrix | None = None
        self.width = 0

    def add(self, columns) -> int:
        """Append a block of columns; returns its index."""
        w = columns.shape[1]
        start = self.width
        if self.sparse:
            block = sp.csc_matrix(columns, dtype=np.float64)
            self._sparse_blocks.append(block)
            self._stacked = None
        else:
            if start + w > self._buffer.shape[1]:
                grown = np.empty((self.n, max(2 * self._buffer.shape[1], start + w, 16)),
                                 order="F")
                grown[:, :start] = self._buffer[:, :start]
                self._buffer = grown
            dense = columns.toarray() if sp.issparse(columns) else columns
            self._buffer[:, start:start + w] = dense
        self.width = start + w
        self.bounds.append((start, start + w))
        return len(self.bounds) - 1

    @property
    def n_blocks(self) -> int:
        return len(self.bounds)

    def matrix(self):
        """All cached columns as one n×W matrix."""
        if self.sparse:
            if self._stacked is None:
                self._stacked = sp.hstack(self._sparse_blocks, format="csc") \
                    if self._sparse_blocks else sp.csc_matrix((self.n, 0))
            return self._stacked
        return self._buffer[:, :self.width]

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Aᵀr over all cached columns (one pass)."""
        return np.asarray(self.matrix().T @ r).ravel()

    def block_products(self, coef: np.ndarray) -> np.ndarray:
        """The n×T matrix whose column t is A_t coef_t (one pass)."""
        out = np.empty((self.n, self.n_blocks))
        if self.sparse:
            for t, block in enumerate(self._sparse_blocks):
                a, b = self.bounds[t]
                out[:, t] = block @ coef[a:b]
        else:
            A = self._buffer
            for t, (a, b) in enumerate(self.bounds):
                out[:, t] = A[:, a:b] @ coef[a:b]
        return out

    def nbytes(self) -> int:
        if self.sparse:
            return sum(b.data.nbytes + b.indices.nbytes + b.indptr.nbytes
                       for b in self._sparse_blocks)
        return self._buffer.nbytes


@dataclass
class APGResult:
    """Solution and trace of one APG solve."""

    coef: np.ndarray
    intercept: float
    objective: float
    trace: list[float] = field(default_factory=list)
    n_iter: int = 0
    tau: float = 1.0
    margins: np.ndarray | None = None
    converged: bool = False


def block_norms(coef: np.ndarray, bounds) -> np.ndarray:
    return np.array([np.linalg.norm(coef[a:b]) for a, b in bounds])


def apg_blocks(cache: BlockCache, y: np.ndarray, loss: MarginLoss, C: float, *,
               block_scales: Callable[[np.ndarray, float], np.ndarray],
               penalty: Callable[[np.ndarray], float],
               coef0: np.ndarray | None = None, intercept0: float = 0.0,
               fit_intercept: bool = True, tau0: float | None = None, eta: float = 0.7,
               tol: float = 1e-4, max_iter: int = 2000, min_iter: int = 2,
               refresh: int = 100, interrupt: Callable[[], bool] | None = None) -> APGResult:
    """Minimise ``C Σ l(y_i f_i) + penalty(block norms)`` by APG with backtracking.

    Parameters
    ----------
    cache : BlockCache
        The columns A_t of every block.
    block_scales : callable
        ``(norms, step) -> scales``: the prox of the penalty with step ``1/τ`` as per-block
        scales of g_t (the ℓ1² Moreau projection: :func:`l1_squared_block_scales`).
    penalty : callable
        The penalty as a function of the block norms (ℓ1²: ``½(Σ u_t)²``).
    tau0 : float
        First guess of the Lipschitz constant (the paper's ``L_0 = 0.1 n C``, then warm).
    eta : float
        Line-search factor in (0, 1): each step first tries ``η τ`` and multiplies τ by
        ``1/η`` until the quadratic model majorises (Alg. 4).
    tol : float
        Stop when the relative change of the objective is at most ``tol`` (the paper: 1e-4).
    interrupt : callable, optional
        Polled before every step; when it returns True the current iterate is returned
        (a user's *Stop* lands within one step).

    Notes
    -----
    Momentum is restarted when the objective goes up (adaptive restart), which keeps the
    objective trace monotone in practice without changing the fixed point.
    """
    bounds = cache.bounds
    W = cache.width
    n = cache.n
    y = np.asarray(y, dtype=np.float64)
    coef = np.zeros(W) if coef0 is None else np.asarray(coef0, dtype=np.float64).copy()
    b = float(intercept0) if fit_intercept else 0.0
    tau = float(tau0) if tau0 else max(1e-8, 0.1 * n * C)

    P = cache.block_products(coef)  # n×T: A_t ω_t
    f = P.sum(axis=1) + b
    F = C * float(loss.value(y * f).sum()) + penalty(block_norms(coef, bounds))
    trace = [F]
    prev_coef, prev_P, prev_b = coef.copy(), P.copy(), b
    rho = 1.0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        if interrupt is not None and interrupt():
            it -= 1
            break
        rho_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * rho * rho))
        beta = (rho - 1.0) / rho_next
        v = coef + beta * (coef - prev_coef)
        Pv = P + beta * (P - prev_P)
        bv = b + beta * (b - prev_b)
        fv = Pv.sum(axis=1) + bv
        zv = y * fv
        pv = C * float(loss.value(zv).sum())
        r = C * y * loss.derivative(zv)
        grad = cache.rmatvec(r)
        grad_b = float(r.sum()) if fit_intercept else 0.0
        G = cache.block_products(grad)

        trial_tau = eta * tau
        for _ in range(60):
            g = v - grad / trial_tau
            norms = block_norms(g, bounds)
            scales = block_scales(norms, 1.0 / trial_tau)
            new = np.concatenate([scales[t] * g[a:c] for t, (a, c) in enumerate(bounds)]) \
                if bounds else g
            new_P = (Pv - G / trial_tau) * scales[None, :]
            new_b = bv - grad_b / trial_tau if fit_intercept else 0.0
            new_f = new_P.sum(axis=1) + new_b
            p_new = C * float(loss.value(y * new_f).sum())
            d = new - v
            db = new_b - bv
            model = pv + float(grad @ d) + grad_b * db + 0.5 * trial_tau * (float(d @ d) + db * db)
            if p_new <= model + 1e-12 * max(1.0, abs(model)):
                break
            trial_tau /= eta
        tau = trial_tau
        F_new = p_new + penalty(block_norms(new, bounds))
        prev_coef, prev_P, prev_b = coef, P, b
        coef, P, b = new, new_P, new_b
        if it % refresh == 0:
            P = cache.block_products(coef)  # undo drift of the cached products
        if F_new > trace[-1]:
            rho = 1.0  # adaptive restart
        else:
            rho = rho_next
        change = abs(trace[-1] - F_new)
        trace.append(F_new)
        if it >= min_iter and change <= tol * max(abs(F_new), 1e-12):
            converged = True
            break
    P = cache.block_products(coef)
    f = P.sum(axis=1) + b
    F = C * float(loss.value(y * f).sum()) + penalty(block_norms(coef, bounds))
    trace[-1] = F
    return APGResult(coef=coef, intercept=b, objective=F, trace=trace, n_iter=it, tau=tau,
                     margins=f, converged=converged)


NUMBA_MAX_CELLS = 60_000
_NEVER = np.zeros(1, dtype=np.int8)  # a stop flag nobody sets


def apg_l1_squared(cache: BlockCache, y: np.ndarray, loss: MarginLoss, C: float, *,
                   coef0=None, intercept0: float = 0.0, fit_intercept: bool = True,
                   tau0: float | None = None, eta: float = 0.7, tol: float = 1e-4,
                   max_iter: int = 2000, min_iter: int = 2, refresh: int = 100,
                   interrupt: Callable[[], bool] | None = None,
                   stop_flag: np.ndarray | None = None) -> APGResult:
    """FGM's restricted master: :func:`apg_blocks` with the ℓ1² penalty.

    Small dense caches (n·W ≤ ``NUMBA_MAX_CELLS``) run in the numba kernel
    :func:`explorer.kernels._numba.apg_l1sq_dense`, where Python's per-iteration overhead
    would dominate; larger ones run in numpy, whose two passes per iteration are BLAS calls
    that beat single-threaded loops. Both compute the same iterates (tested). ``interrupt``
    is polled between steps on the numpy path; the numba kernel, which cannot call Python,
    reads ``stop_flag[0]`` (set to 1 by the thread that cancels) before every step."""
    from ..kernels import _numba

    codes = {"squared_hinge": 0, "logistic": 1}
    if cache.sparse or loss.name not in codes or cache.n * cache.width > NUMBA_MAX_CELLS:
        from .prox import l1_squared_block_scales

        return apg_blocks(cache, y, loss, C, block_scales=l1_squared_block_scales,
                          penalty=l1_squared_penalty, coef0=coef0, intercept0=intercept0,
                          fit_intercept=fit_intercept, tau0=tau0, eta=eta, tol=tol,
                          max_iter=max_iter, min_iter=min_iter, refresh=refresh,
                          interrupt=interrupt)
    W = cache.width
    coef = np.zeros(W) if coef0 is None else np.ascontiguousarray(coef0, dtype=np.float64)
    bounds = np.array(cache.bounds, dtype=np.int64).reshape(-1, 2)
    trace = np.empty(max_iter + 1)
    tau = float(tau0) if tau0 else max(1e-8, 0.1 * cache.n * C)
    out = _numba.apg_l1sq_dense(cache.matrix(), bounds, np.ascontiguousarray(y, np.float64),
                                codes[loss.name], float(C), coef, float(intercept0),
                                bool(fit_intercept), tau, float(eta), float(tol),
                                int(max_iter), int(min_iter), int(refresh), trace,
                                stop_flag if stop_flag is not None else _NEVER)
    coef, b, F, it, tau, converged, margins = out
    return APGResult(coef=coef, intercept=float(b), objective=float(F),
                     trace=trace[:it + 1].tolist(), n_iter=int(it), tau=float(tau),
                     margins=margins, converged=bool(converged))


def l1_squared_penalty(norms: np.ndarray) -> float:
    """½(Σ_t ‖ω_t‖)²."""
    return 0.5 * float(np.sum(norms)) ** 2
