"""Proximal Newton for FGM's restricted master (Theorem 4, eq. 31) when it is narrow.

The APG master needs a number of steps that grows with √κ, κ the loss term's curvature
C·l″·‖A‖² over the ℓ1² term's: on raw pixels (values 0…16) with C = 10 it used its 2,000 steps
and stopped at a 1e-3…2e-2 duality gap. Proximal Newton (Lee, Sun & Saunders, SIAM J. Optim.
2014) is insensitive to that scaling: at the current point the loss term is replaced by its
second-order model (the generalised Hessian of the squared hinge, Keerthi & DeCoste 2005; the
Hessian of the logistic loss) and the model plus the exact penalty ½(Σ_t‖ω_t‖)² is minimised
exactly — a second-order cone program in W + T + 2 variables, solved by Clarabel's interior
point — then a backtracking line search on the true objective. It stops on the master's own
certified duality gap, so the result means what the APG's does.
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp

from ...kernels import one_blas_thread, weighted_gram
from ...optim import SolverResult, Stopping
from .l12 import L12Problem
from .refine import curvature_weights

MAX_WIDTH = 400          # cached columns up to which the final master is solved this way
MAX_GRAM_CELLS = 4e8     # n·W² (the Hessian's cost) up to which it is
ARMIJO = 1e-4
ROUNDING_GAP = 1e3 * np.finfo(np.float64).eps  # a gap no float64 step can close further


def prox_newton_l12(problem: L12Problem, coef0: np.ndarray, intercept0: float, *,
                    stopping: Stopping, interrupt=None) -> SolverResult:
    """Minimise ``½(Σ_t‖ω_t‖)² + C Σ_i l(y_i(a_iᵀω + b))`` from (coef0, intercept0); the
    result has the same form as :func:`~explorer.engines.fgm.l12.solve_l12`'s."""
    x = problem.point(coef0, intercept0)
    F = problem.objective(x)
    trace = [F]
    measure = problem.measure(x)
    converged = stopping.met(measure)
    it = 0
    while not converged and it < stopping.max_iter:
        if interrupt is not None and interrupt():
            break
        it += 1
        step = _newton_direction(problem, x)
        if step is None:  # the conic solver gave up: Newton's step on the current support
            support = _support_direction(problem, x)
            if support is None:
                break
            direction = support
            decrease = float(np.dot(_gradient(problem, x), np.append(support[0], support[1])))
        else:
            direction, decrease = step
        if not decrease < 0:
            break  # the model sees no descent left: at the optimum to rounding
        t, accepted = 1.0, None
        for _ in range(40):
            trial = problem.point(x[0] + t * direction[0], x[1][0] + t * direction[1])
            F_trial = problem.objective(trial)
            if F_trial <= F + ARMIJO * t * decrease:
                accepted = trial
                break
            t *= 0.5
        if accepted is None:
            break  # no decrease at machine precision
        x, F = accepted, F_trial
        trace.append(F)
        measure = problem.measure(x)
        converged = stopping.met(measure)
    if not converged and measure <= ROUNDING_GAP and it < stopping.max_iter:
        converged = True  # no descent left and the gap is at rounding: as exact as it gets
    extra = []
    if converged:
        x, F, measure, extra = _finish_on_the_support(problem, x, F, measure, stopping.tol)
        trace.extend(extra)
    # the finishing steps are Newton steps too: a record's steps match its trace
    return SolverResult(x, F, trace, it + len(extra), converged, measure, None,
                        problem.margins(x))


def _finish_on_the_support(problem: L12Problem, x, F: float, measure: float, tol: float):
    """A few plain Newton steps on the smooth problem over the nonzero blocks (Σ_t‖ω_t‖ is
    smooth there). The conic solver's steps are accurate to its own tolerance, which depends
    on rounding (dense or sparse cache, a dask or an in-memory X); these linear solves land
    every path on the same optimum to ~1e-14. A step is kept only if it lowers the objective
    and leaves the point certified (its gap at most the larger of the current one and
    ``tol``: near the optimum the recovered dual's gap is not monotone in the objective)."""
    extra = []
    for _ in range(4):
        step = _support_direction(problem, x)
        if step is None:
            break
        delta_w, delta_b = step
        trial = problem.point(x[0] + delta_w, x[1][0] + delta_b)
        F_trial = problem.objective(trial)
        if not F_trial <= F + 8 * np.finfo(np.float64).eps * abs(F):  # equal to rounding
            break
        m_trial = problem.measure(trial)
        if m_trial > max(measure, ROUNDING_GAP, tol):
            break
        moved = float(np.abs(delta_w).max(initial=0.0))
        x, F, measure = trial, F_trial, m_trial
        extra.append(F)
        if moved <= 1e-15 * max(float(np.abs(x[0]).max(initial=0.0)), 1e-300):
            break
    return x, F, measure, extra


def _gradient(problem: L12Problem, x) -> np.ndarray:
    """(∇_ω, ∂_b) of the whole objective at a point whose blocks are all nonzero or zero
    (the penalty's gradient on zero blocks taken as 0)."""
    f = problem.margins(x)
    r = problem.C * problem.y * problem.loss.derivative(problem.y * f)
    coef = x[0]
    g = problem.cache.rmatvec(r)
    norms = [np.linalg.norm(coef[a:b]) for a, b in problem.cache.bounds]
    total = float(sum(norms))
    for (a, b), nrm in zip(problem.cache.bounds, norms):
        if nrm > 0:
            g[a:b] += total * coef[a:b] / nrm
    return np.append(g, float(r.sum()) if problem.fit_intercept else 0.0)


def _support_direction(problem: L12Problem, x):
    """Newton's step for the loss plus ½(Σ_t‖ω_t‖)² restricted to the nonzero blocks (zero
    blocks stay zero); None when the step would zero a block (the support would change)."""
    cache, y, C = problem.cache, problem.y, problem.C
    coef = x[0]
    live = [(a, b) for a, b in cache.bounds if np.any(coef[a:b] != 0)]
    if not live:
        return None
    f = problem.margins(x)
    r = C * y * problem.loss.derivative(y * f)
    d = C * curvature_weights(problem.loss, y, f)
    with one_blas_thread():
        H_full = _hessian(cache, d, problem.fit_intercept)
        g_full = cache.rmatvec(r)
    idx = np.concatenate([np.arange(a, b) for a, b in live])
    W = cache.width
    keep = np.concatenate([idx, [W]]) if problem.fit_intercept else idx
    H = H_full[np.ix_(keep, keep)]
    norms = np.array([np.linalg.norm(coef[a:b]) for a, b in live])
    total = float(norms.sum())
    u = np.concatenate([coef[a:b] / nrm for (a, b), nrm in zip(live, norms)])
    k = idx.size
    g = np.concatenate([g_full[idx] + total * u, [float(r.sum())]]) if problem.fit_intercept \
        else g_full[idx] + total * u
    pos = 0
    for (a, b), nrm in zip(live, norms):  # Hessian of ½(Σ‖ω_t‖)²: s(I − n nᵀ)/‖ω_t‖ + u uᵀ
        w = b - a
        n_t = u[pos:pos + w]
        H[pos:pos + w, pos:pos + w] += total * (np.eye(w) - np.outer(n_t, n_t)) / nrm
        pos += w
    H[:k, :k] += np.outer(u, u)
    try:
        delta = -np.linalg.solve(H, g)
    except np.linalg.LinAlgError:
        return None
    full = np.zeros(W)
    full[idx] = delta[:k]
    for (a, b), nrm in zip(live, norms):
        if np.linalg.norm(full[a:b]) >= nrm:  # a block could reach zero: not a local step
            return None
    return full, float(delta[k]) if problem.fit_intercept else 0.0


def usable(cache) -> bool:
    """Whether the cache is narrow enough for the dense W×W Hessian."""
    return 0 < cache.width <= MAX_WIDTH and cache.n * cache.width ** 2 <= MAX_GRAM_CELLS


def _newton_direction(problem: L12Problem, x):
    """(Δ = (Δω, Δb), model decrease gᵀΔ + Ω(ω+Δω) − Ω(ω)) from the exact model minimiser."""
    cache, y, C = problem.cache, problem.y, problem.C
    f = problem.margins(x)
    r = C * y * problem.loss.derivative(y * f)
    g_w = cache.rmatvec(r)
    d = C * curvature_weights(problem.loss, y, f)
    # one BLAS thread: a threaded Gram sums in a thread-count-dependent order, and the same fit
    # must give the same model on a 1-thread dask worker as here (bit for bit)
    with one_blas_thread():
        H = _hessian(cache, d, problem.fit_intercept)
    W = cache.width
    coef = x[0]
    g = np.concatenate([g_w, [float(r.sum())]]) if problem.fit_intercept else g_w
    delta = _model_step(H, g, coef, cache.bounds)
    if delta is None:
        return None
    delta_w = delta[:W]
    delta_b = float(delta[W]) if problem.fit_intercept else 0.0
    omega = problem.omega
    decrease = float(g @ delta) + omega.value(coef + delta_w) - omega.value(coef)
    return (delta_w, delta_b), decrease


def _hessian(cache, d: np.ndarray, intercept: bool) -> np.ndarray:
    """[A_cᵀDA_c, A_cᵀd; dᵀA_c, Σd] for the (centred when the cache is) columns A_c."""
    A = cache.matrix()
    W = cache.width
    if sp.issparse(A):
        G, v = weighted_gram(A, d)
        if cache.center:
            mu, s = cache.means, float(d.sum())
            G = G - np.outer(mu, v) - np.outer(v, mu) + s * np.outer(mu, mu)
            v = v - s * mu
    else:
        G = (A.T * d) @ A
        v = A.T @ d
    size = W + 1 if intercept else W
    H = np.empty((size, size))
    H[:W, :W] = 0.5 * (G + G.T)
    if intercept:
        H[:W, W] = H[W, :W] = v
        H[W, W] = float(d.sum())
    # a tiny ridge keeps the model bounded in b when no example is on the curved part
    H[np.diag_indices(size)] += 1e-10 * max(1.0, float(np.trace(H)) / size)
    return H


def _model_step(H: np.ndarray, g: np.ndarray, coef: np.ndarray, bounds) -> np.ndarray | None:
    """argmin_Δ ½ΔᵀHΔ + gᵀΔ + ½(Σ_t‖ω_t + Δ_t‖)² over Δ = (Δω, [Δb]) as a conic program in
    (Δ, θ, s_1…s_T): ½θ² with θ ≥ Σ s_t and s_t ≥ ‖ω_t + Δ_t‖ (written in the step, so the
    solver's accuracy is relative to the decrease, not to the point)."""
    m = H.shape[0]
    T = len(bounds)
    n_var = m + 1 + T
    i_theta = m
    P = sp.block_diag([sp.csc_matrix(np.triu(H)), sp.csc_matrix([[1.0]]),
                       sp.csc_matrix((T, T))], format="csc")
    c = np.concatenate([g, [0.0], np.zeros(T)])
    rows, cols, vals = [0], [i_theta], [-1.0]                 # θ − Σ s_t ≥ 0
    for t in range(T):
        rows.append(0)
        cols.append(m + 1 + t)
        vals.append(1.0)
    rhs = [0.0]
    row = 1
    cones = [clarabel.NonnegativeConeT(1)]
    for t, (a, b) in enumerate(bounds):                      # (s_t, ω_t + Δ_t) ∈ SOC
        rows.append(row)
        cols.append(m + 1 + t)
        vals.append(-1.0)
        rhs.append(0.0)
        for j in range(a, b):
            rows.append(row + 1 + j - a)
            cols.append(j)
            vals.append(-1.0)
        rhs.extend(coef[a:b])
        cones.append(clarabel.SecondOrderConeT(b - a + 1))
        row += b - a + 1
    A = sp.csc_matrix((vals, (rows, cols)), shape=(row, n_var))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-9
    settings.tol_feas = 1e-9
    settings.max_iter = 200
    sol = clarabel.DefaultSolver(P, c, A, np.asarray(rhs, dtype=np.float64), cones,
                                 settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        return None
    delta = np.array(sol.x[:m])
    # an interior point leaves dead blocks at ~1e-10 instead of 0: snap them
    new = coef + delta[:coef.size]
    norms = np.array([np.linalg.norm(new[a:b]) for a, b in bounds])
    for (a, b), nrm in zip(bounds, norms):
        if nrm <= 1e-8 * max(float(norms.sum()), 1e-300):
            delta[a:b] = -coef[a:b]
    return delta
