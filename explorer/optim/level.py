"""Pieces of the (extended) level method over P = {p ∈ [0,1]^d : Σp = m} (FS-Manifold, Alg. 2;
Lemaréchal, Nemirovskii & Nesterov's level method as used by Xu et al. for MKL).

The cutting-plane model is g(p) = max_j (c_j − G_j·p) (each cut is the objective at a past
α, linear in p). Three small problems:

* :func:`lower_bound` — min_{p∈P} g(p), a linear program (scipy's HiGHS);
* :func:`level_projection` — the projection of the current p onto the level set
  {p ∈ P : g(p) ≤ ℓ}, solved through its dual over the few cut multipliers ν ≥ 0: for fixed ν
  the minimiser is p(ν) = Π_P(p₀ + ½ Gᵀν), a projection onto the capped simplex;
* :func:`project_capped_simplex` — Π_P by bisection on the shift.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize

from .stopping import TINY, Stopping, relative_gap


@dataclass
class LevelStep:
    """One iteration of the level method, as the loop reports it."""

    iteration: int
    p: np.ndarray          # the point the oracle was called at
    value: float           # the objective there (an upper bound)
    best_p: np.ndarray     # the best point so far
    lower: float
    upper: float
    measure: float         # (upper − lower)/|upper|
    level: float           # the level ℓ of the next projection
    extra: object = None   # whatever the oracle returned beside its cut


@dataclass
class LevelResult:
    best_p: np.ndarray
    lower: float
    upper: float
    n_iter: int
    converged: bool


def level_method(oracle: Callable, d: int, m: float, *, level: float, stopping: Stopping,
                 on_step: Callable[[LevelStep], bool], p0: np.ndarray | None = None,
                 fixed: np.ndarray | None = None) -> LevelResult:
    """Minimise a convex g(p) = max over cuts (c − G·p) over P = {0 ≤ p ≤ 1, Σp = m} by the
    level method (FS-Manifold Alg. 2): call ``oracle(p) -> (value, c, G, extra)`` (the
    objective at p and its cut), bound the optimum below by the cut model's minimum (an LP),
    stop when the relative gap is at most ``stopping.tol`` or after ``stopping.max_iter``
    oracle calls, else project p onto the level set at ``level``·upper + (1 − level)·lower.
    ``on_step`` sees every iteration and may stop the loop by returning False.

    ``p0`` (a point of P, e.g. the optimum at a neighbouring C) starts the method instead of
    the uniform p = m/d: the certificate is the same, only the number of cuts changes.

    ``fixed`` (indices; features the user pinned) are held at p_j = 1: P becomes
    {p : p_fixed = 1, 0 ≤ p ≤ 1, Σp = m}, and every step — the start, the LP, the
    projection — stays in it."""
    floor = np.zeros(d)
    if fixed is not None and len(fixed):
        floor[np.asarray(fixed, dtype=np.int64)] = 1.0
    if floor.sum() > m:
        raise ValueError(f"{int(floor.sum())} fixed coordinates do not fit Σp = {m:g}")
    free = floor == 0
    p = floor.copy()
    p[free] = (m - floor.sum()) / max(1, int(free.sum()))
    if p0 is not None:
        p0 = np.asarray(p0, dtype=np.float64)
        if p0.shape != (d,) or not np.all(np.isfinite(p0)) or np.any(p0 < floor - 1e-9) or \
                p0.max() > 1 + 1e-9 or abs(p0.sum() - m) > 1e-6 * max(1.0, m):
            raise ValueError(f"p0 must lie in {{0 ≤ p ≤ 1, Σp = {m:g}}} with {d} entries "
                             "(1 on the fixed ones)")
        p = np.clip(p0, floor, 1.0)
    # the cuts are kept divided by the first value's magnitude: the LP and the projection
    # work on numbers of order one whatever the data's units (objectives of 1e-5 stalled
    # their absolute tolerances); bounds are reported in the objective's units
    cuts_c, cuts_g = [], []
    scale = None
    upper, lower = np.inf, -np.inf
    best_p = p
    converged = False
    it = 0
    for it in range(1, stopping.max_iter + 1):
        value, c, g, extra = oracle(p)
        if scale is None:
            scale = max(abs(float(value)), float(np.max(np.abs(g), initial=0.0)), TINY)
        cuts_c.append(c / scale)
        cuts_g.append(np.asarray(g) / scale)
        if value < upper:
            upper, best_p = value, p.copy()
        lb, _ = lower_bound(np.array(cuts_c), np.vstack(cuts_g), m, lower=floor)
        lower = max(lower, lb * scale)
        measure = relative_gap(upper, lower)
        ell = level * upper + (1.0 - level) * lower
        converged = stopping.met(measure)
        go_on = on_step(LevelStep(it, p, value, best_p, lower, upper, measure, ell, extra))
        if not go_on or converged:
            break
        p = level_projection(p, np.array(cuts_c), np.vstack(cuts_g), ell / scale, m,
                             lower=floor)
    return LevelResult(best_p, lower, upper, it, converged)


def project_capped_simplex(v: np.ndarray, m: float, iters: int = 100,
                           lower: np.ndarray | None = None) -> np.ndarray:
    """argmin_p ‖p − v‖² over {lower ≤ p ≤ 1, Σp = m} (``lower`` default 0): p =
    clip(v − θ, lower, 1), θ by bisection."""
    v = np.asarray(v, dtype=np.float64)
    d = v.size
    floor = np.zeros(d) if lower is None else np.asarray(lower, dtype=np.float64)
    if not floor.sum() <= m <= d:
        raise ValueError(f"m={m} must lie in [{floor.sum():g}, {d}]")
    lo, hi = float(v.min() - 1.0), float(v.max())
    for _ in range(iters):
        theta = 0.5 * (lo + hi)
        total = np.clip(v - theta, floor, 1.0).sum()
        if total > m:
            lo = theta
        else:
            hi = theta
        if hi - lo < 1e-15 * max(1.0, abs(theta)):
            break
    p = np.clip(v - 0.5 * (lo + hi), floor, 1.0)
    # exact total: spread the tiny remainder over the free coordinates
    free = (p > floor) & (p < 1)
    if free.any():
        p[free] += (m - p.sum()) / free.sum()
        p = np.clip(p, floor, 1.0)
    return p


def lower_bound(c: np.ndarray, G: np.ndarray, m: float,
                lower: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """min_{p∈P} max_j (c_j − G_j·p): the level method's lower bound (an LP with HiGHS);
    ``lower`` bounds p from below (default 0)."""
    c = np.asarray(c, dtype=np.float64)
    G = np.atleast_2d(np.asarray(G, dtype=np.float64))
    k, d = G.shape
    # variables [p (d), t]; minimise t s.t. c_j − G_j·p − t ≤ 0, Σp = m, 0 ≤ p ≤ 1
    obj = np.zeros(d + 1)
    obj[-1] = 1.0
    A_ub = np.hstack([-G, -np.ones((k, 1))])
    b_ub = -c
    A_eq = np.zeros((1, d + 1))
    A_eq[0, :d] = 1.0
    floor = np.zeros(d) if lower is None else np.asarray(lower, dtype=np.float64)
    bounds = [(float(f), 1.0) for f in floor] + [(None, None)]
    res = linprog(obj, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[m], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"the lower-bound LP failed: {res.message}")
    return float(res.fun), res.x[:d]


def level_projection(p0: np.ndarray, c: np.ndarray, G: np.ndarray, level: float, m: float,
                     tol: float = 1e-10, lower: np.ndarray | None = None) -> np.ndarray:
    """argmin_{p∈P} ‖p − p₀‖² s.t. c_j − G_j·p ≤ ℓ for every cut j (eq. 27), by its dual
    (P's lower bound ``lower``, default 0).

    D(ν) = ‖p(ν) − p₀‖² + Σ_j ν_j (c_j − G_j·p(ν) − ℓ) with p(ν) = Π_P(p₀ + ½Gᵀν) is concave
    and smooth; it is maximised over ν ≥ 0 by L-BFGS-B (one variable per cut, few active).
    """
    p0 = np.asarray(p0, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    G = np.atleast_2d(np.asarray(G, dtype=np.float64))
    viol = c - G @ p0 - level
    if np.all(viol <= 0):
        return p0.copy()

    def negative_dual(nu):
        p = project_capped_simplex(p0 + 0.5 * (G.T @ nu), m, lower=lower)
        slack = c - G @ p - level
        value = float(np.sum((p - p0) ** 2) + nu @ slack)
        return -value, -slack

    nu0 = np.zeros(c.size)
    res = minimize(negative_dual, nu0, jac=True, method="L-BFGS-B",
                   bounds=[(0.0, None)] * c.size,
                   options={"ftol": 0.0, "gtol": tol, "maxiter": 2000})
    return project_capped_simplex(p0 + 0.5 * (G.T @ res.x), m, lower=lower)
