"""The ℓ1²-regularised restricted master over a column cache (FGM Theorem 4, eq. 31) as an APG
problem, with its certified duality gap.

    P(ω, b) = ½(Σ_t ‖ω_t‖)² + C Σ_i l(y_i f_i),   f = Σ_t A_t ω_t + b

Its dual at α (α_i = −C l′(y_i f_i), recovered from the margins, FGM §5 Remark 4) is

    D(α) = −C Σ_i l*(−α_i/C) − ½ max_t ‖A_tᵀ(α ⊙ y)‖²

(the conjugate of ½‖·‖²_{2,1} is ½‖·‖²_{2,∞}); with an intercept α must satisfy Σ α_i y_i = 0,
which :func:`balance` enforces by scaling down one class. Any such α gives D(α) ≤ min P, so
``(P − D)/P`` certifies how far the iterate is from the optimum, whatever solved it.
"""

from __future__ import annotations

import numpy as np

from ...kernels import scaled_trial
from ...optim import (
    BlockCache,
    Composite,
    L1Squared,
    MarginLoss,
    SolverResult,
    Stopping,
    apg,
    relative_gap,
)
from ._compiled import DenseMaster, Momentum, StepPlan, apg_l1sq_dense

NUMBA_MAX_CELLS = 60_000  # n·W up to which the compiled steps beat numpy's BLAS passes
_NEVER = np.zeros(1, dtype=np.int8)  # a stop flag nobody sets


class L12Problem(Composite):
    """A point is (coef, [b], P) with P the n×T block products A_t ω_t (a cache)."""

    n_parts = 2

    def __init__(self, cache: BlockCache, y: np.ndarray, loss: MarginLoss, C: float, *,
                 fit_intercept: bool = True, stop_flag: np.ndarray | None = None,
                 compiled: bool | None = None):
        self.cache = cache
        self.y = np.asarray(y, dtype=np.float64)
        self.loss = loss
        self.C = float(C)
        self.fit_intercept = bool(fit_intercept)
        self.omega = L1Squared(cache.bounds)
        if compiled is None:
            compiled = (not cache.sparse and loss.code >= 0
                        and cache.n * cache.width <= NUMBA_MAX_CELLS)
        self.stop_flag = stop_flag if stop_flag is not None else _NEVER
        if compiled:
            self.compiled_steps = self._compiled_steps

    # ------------------------------------------------------------------ values
    def point(self, coef, b: float) -> tuple:
        coef = np.asarray(coef, dtype=np.float64).copy()
        return self.refresh((coef, np.array([float(b) if self.fit_intercept else 0.0]), None))

    def refresh(self, x):
        return (x[0], x[1], self.cache.block_products(x[0]))

    def margins(self, x) -> np.ndarray:
        P = x[2]
        f = P @ self._ones(P.shape[1])
        f += x[1][0]
        return f

    def _ones(self, T: int) -> np.ndarray:
        if getattr(self, "_ones_cache", np.zeros(0)).size != T:
            self._ones_cache = np.ones(T)
        return self._ones_cache

    def _loss_sum(self, f) -> float:
        return self.C * float(self.loss.value(self.y * f).sum())

    def penalty(self, x) -> float:
        return self.omega.value(x[0])

    def objective(self, x) -> float:
        return self._loss_sum(self.margins(x)) + self.penalty(x)

    def smooth(self, x):
        f = self.margins(x)
        z = self.y * f
        r = self.C * self.y * self.loss.derivative(z)
        grad = self.cache.rmatvec(r)
        gb = np.array([r.sum() if self.fit_intercept else 0.0])
        return self.C * float(self.loss.value(z).sum()), (grad, gb, self.cache.block_products(grad))

    def prox_step(self, v, grad, step):
        g = v[0] - step * grad[0]
        scales = self.omega.scales(g, step)
        new = g * self.omega.expand(scales)
        P = scaled_trial(v[2], grad[2], float(step), scales,
                         np.empty(grad[2].shape, order="F"))
        b = v[1] - step * grad[1]
        x = (new, b, P)
        return x, self._loss_sum(self.margins(x))

    # ------------------------------------------------------------------ certificate
    def dual_alpha(self, f: np.ndarray) -> np.ndarray:
        return recover_alpha(self.loss, self.C, self.y, f, self.fit_intercept)

    def dual_value(self, alpha: np.ndarray) -> float:
        u = self.cache.rmatvec(alpha * self.y) if self.cache.width else np.zeros(0)
        return loss_dual(self.loss, self.C, alpha) - self.omega.dual(u)

    def measure(self, x, last=None) -> float:
        f = self.margins(x)
        return relative_gap(self._loss_sum(f) + self.penalty(x),
                            self.dual_value(self.dual_alpha(f)))

    # ------------------------------------------------------------------ compiled path
    def _compiled_steps(self, problem, state, chunk):
        trace = np.empty(chunk.budget)
        master = DenseMaster(self.cache.matrix(), self.omega.bounds, self.y, self.loss.code,
                             self.loss.numba_param, self.C, self.fit_intercept)
        momentum = Momentum(state.x[0], state.x_prev[0], float(state.x[1][0]),
                            float(state.x_prev[1][0]), state.t, state.L, state.F)
        coef, prev_coef, b, prev_b, t, tau, F, steps, stalled = apg_l1sq_dense(
            master, momentum, StepPlan(chunk.eta, chunk.tol, chunk.budget, chunk.min_steps),
            trace, self.stop_flag)
        state.x_prev = (prev_coef, np.array([prev_b]), None)
        state.x = self.refresh((coef, np.array([b]), None))
        state.t, state.L, state.F = t, tau, F
        return int(steps), trace[:steps].tolist(), bool(stalled)


def solve_l12(problem: L12Problem, *, stopping: Stopping, coef0=None,
              intercept0: float = 0.0, L0: float | None = None, eta: float = 0.7,
              interrupt=None) -> SolverResult:
    """FGM's restricted master ``problem`` by :func:`explorer.optim.apg.apg`; ``x`` of the
    result is (coef, [intercept], block products). ``L0``: the first Lipschitz guess (a warm
    one from the previous solve; default 0.1·n·C)."""
    cache = problem.cache
    coef0 = np.zeros(cache.width) if coef0 is None else coef0
    L0 = float(L0) if L0 else max(1e-8, 0.1 * cache.n * problem.C)
    return apg(problem, problem.point(coef0, intercept0), L0=L0, stopping=stopping, eta=eta,
               interrupt=interrupt)


def recover_alpha(loss: MarginLoss, C: float, y: np.ndarray, margins: np.ndarray,
                  fit_intercept: bool) -> np.ndarray:
    """α_i = −C l′(y_i f_i) (FGM §5 Remark 4), balanced when there is an intercept."""
    alpha = -C * loss.derivative(y * margins)
    return balance(alpha, y) if fit_intercept else alpha


def loss_dual(loss: MarginLoss, C: float, alpha: np.ndarray) -> float:
    """The loss part of eq. 31's dual, −C Σ_i l*(−α_i/C)."""
    return -C * float(np.sum(loss.conj_neg(alpha / C)))


def balance(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Scale down the class with more α-mass so that Σ α_i y_i = 0 (keeps 0 ≤ α ≤ C)."""
    pos, neg = y > 0, y < 0
    sp_, sn = alpha[pos].sum(), alpha[neg].sum()
    if sp_ <= 0 or sn <= 0:
        return np.zeros_like(alpha)
    out = alpha.copy()
    if sp_ > sn:
        out[pos] *= sn / sp_
    else:
        out[neg] *= sp_ / sn
    return out
