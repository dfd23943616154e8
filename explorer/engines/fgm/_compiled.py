"""FGM's compiled APG for small restricted masters (Alg. 4 of Tan et al.), beside its engine;
the shared scorer and the loss kernels stay in :mod:`explorer.kernels`."""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ...kernels import l1sq_scales, loss_derivative_into, loss_value

_JIT = dict(nogil=True, cache=True, fastmath=False)


@nb.njit(**_JIT)
def _block_products(A, bounds, coef, out):
    n = A.shape[0]
    for t in range(bounds.shape[0]):
        for i in range(n):
            out[i, t] = 0.0
        for j in range(bounds[t, 0], bounds[t, 1]):
            c = coef[j]
            if c != 0.0:
                for i in range(n):
                    out[i, t] += A[i, j] * c
    return out


@nb.njit(**_JIT)
def _block_norms(coef, bounds, out):
    for t in range(bounds.shape[0]):
        acc = 0.0
        for j in range(bounds[t, 0], bounds[t, 1]):
            acc += coef[j] * coef[j]
        out[t] = np.sqrt(acc)
    return out


class DenseMaster(NamedTuple):
    """The restricted master over a dense column cache ``A`` (n × W; ``bounds`` the column
    range of each block): margins y_i f_i, the loss by its kernel ``code`` and parameter
    ``h``, the data term's weight ``C``."""

    A: np.ndarray
    bounds: np.ndarray
    y: np.ndarray
    code: int
    h: float
    C: float
    fit_intercept: bool


class Momentum(NamedTuple):
    """APG's state between calls: the iterate and the previous one, the momentum ``t``, the
    step constant ``tau`` and the objective ``F``."""

    coef: np.ndarray
    prev_coef: np.ndarray
    b: float
    prev_b: float
    t: float
    tau: float
    F: float


class StepPlan(NamedTuple):
    """Up to ``budget`` steps with line-search factor ``eta``; after ``min_steps``, return
    once the relative objective change is at most ``tol``."""

    eta: float
    tol: float
    budget: int
    min_steps: int


@nb.njit(**_JIT)
def apg_l1sq_dense(master, momentum, plan, trace, stop):
    """Up to ``plan.budget`` APG steps (backtracking, adaptive restart) for
    ½(Σ_t‖ω_t‖)² + C Σ l(y_i f_i) over a dense column cache (:class:`DenseMaster`): the
    compiled path of :func:`explorer.optim.apg.apg` for FGM's small masters (Alg. 4 of Tan
    et al. with the line-search cache of §5.3), the same iterations as its Python steps. The
    :class:`Momentum` comes in and goes out; after ``plan.min_steps`` it returns early once
    the relative objective change is at most ``plan.tol``. Writes the objective per step into
    ``trace``; another thread setting ``stop[0]`` to 1 ends it after the current step.
    Returns (coef, prev_coef, b, prev_b, t, tau, F, steps, stalled)."""
    A, bounds, y, code, h, C, fit_intercept = master
    coef, prev_coef, b, prev_b, t, tau, F = momentum
    eta, tol, budget, min_steps = plan
    n, W = A.shape
    T = bounds.shape[0]
    coef = coef.copy()
    prev_coef = prev_coef.copy()
    if not fit_intercept:
        b = 0.0
        prev_b = 0.0
    P = np.empty((n, T))
    prev_P = np.empty((n, T))
    _block_products(A, bounds, coef, P)
    _block_products(A, bounds, prev_coef, prev_P)
    z = np.empty(n)
    norms = np.empty(T)
    v = np.empty(W)
    Pv = np.empty((n, T))
    r = np.empty(n)
    grad = np.empty(W)
    G = np.empty((n, T))
    g = np.empty(W)
    scales = np.empty(T)
    new = np.empty(W)
    new_P = np.empty((n, T))
    steps = 0
    stalled = False
    for step in range(1, budget + 1):
        if stop[0] != 0:
            break
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_next
        for j in range(W):
            v[j] = coef[j] + beta * (coef[j] - prev_coef[j])
        bv = b + beta * (b - prev_b)
        for i in range(n):
            acc = bv
            for k in range(T):
                Pv[i, k] = P[i, k] + beta * (P[i, k] - prev_P[i, k])
                acc += Pv[i, k]
            z[i] = y[i] * acc
        pv = C * loss_value(z, code, h)
        loss_derivative_into(z, code, r, h)
        grad_b = 0.0
        for i in range(n):
            r[i] = C * y[i] * r[i]
            grad_b += r[i]
        if not fit_intercept:
            grad_b = 0.0
        for j in range(W):
            acc = 0.0
            for i in range(n):
                acc += A[i, j] * r[i]
            grad[j] = acc
        _block_products(A, bounds, grad, G)
        trial = eta * tau
        p_new = 0.0
        new_b = 0.0
        for _ in range(100):
            for j in range(W):
                g[j] = v[j] - grad[j] / trial
            _block_norms(g, bounds, norms)
            l1sq_scales(norms, 1.0 / trial, scales)
            for k in range(T):
                for j in range(bounds[k, 0], bounds[k, 1]):
                    new[j] = scales[k] * g[j]
            new_b = bv - grad_b / trial if fit_intercept else 0.0
            for i in range(n):
                acc = new_b
                for k in range(T):
                    new_P[i, k] = (Pv[i, k] - G[i, k] / trial) * scales[k]
                    acc += new_P[i, k]
                z[i] = y[i] * acc
            p_new = C * loss_value(z, code, h)
            dot = 0.0
            dd = 0.0
            for j in range(W):
                d = new[j] - v[j]
                dot += grad[j] * d
                dd += d * d
            db = new_b - bv
            model = pv + dot + grad_b * db + 0.5 * trial * (dd + db * db)
            if p_new <= model + 4e-16 * max(1.0, abs(model)):
                break
            trial /= eta
        tau = trial
        _block_norms(new, bounds, norms)
        s = 0.0
        for k in range(T):
            s += norms[k]
        F_new = p_new + 0.5 * s * s
        prev_coef[:] = coef
        prev_P[:, :] = P
        prev_b = b
        coef[:] = new
        P[:, :] = new_P
        b = new_b
        t = 1.0 if F_new > F else t_next
        change = abs(F - F_new)
        F = F_new
        trace[step - 1] = F_new
        steps = step
        if step >= min_steps and change <= tol * max(abs(F_new), 1e-300):
            stalled = True
            break
    return coef, prev_coef, b, prev_b, t, tau, F, steps, stalled
