"""FS-multi's cut problem: minimise ``½(Σ_t‖w_t‖)² + C·max(0, max_k ⟨w, p_k⟩ + b β_k + q_k)``
over |b| ≤ R, the model the bundle method (:mod:`explorer.engines.fs_multi.bundle`) minimises at
each step.

Cuts: R_emp(w, b) ≥ ⟨w, p_k⟩ + b β_k + q_k with p_k = −(1/n) Σ_i (y_i − ȳᵏ_i) x_i,
β_k = −(1/n) Σ_i (y_i − ȳᵏ_i) and q_k = Δ(y, ȳᵏ). The intercept b is unpenalised and kept in
a box |b| ≤ R (without it the cut model is unbounded in b until cuts of both signs of β
exist). The cut problem's dual is

    max_{α ≥ 0, Σα ≤ C}  Σ_k α_k q_k − ½ max_t ‖Σ_k α_k p_{k,t}‖² − R |Σ_k α_k β_k|

i.e. K + 2 variables and one second-order cone per block (a QP for one block); the primal is
recovered from the multipliers: w_t = μ_t Σ_k α_k (−p_{k,t}) (μ_t of the block constraints,
Σμ_t = 1) and b = ν₊ − ν₋ (those of the box). Narrow problems are solved in the primal
instead. Every problem is one Clarabel solve; its lower bound is the dual objective at α.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import clarabel
import numpy as np
import scipy.sparse as sp

MU_ZERO = 1e-6  # block multipliers below this fraction of the largest are zero
ZERO_EFFECT = 1e-10  # ... as are blocks that cannot move the objective by this fraction
PRIMAL_MAX_WIDTH = 1000  # cut problems over at most this many columns are solved in the primal


class CutModel(NamedTuple):
    """One cut problem's data: the cuts p_k as the columns of ``P`` (W × K, restricted to the
    cached columns), their offsets ``q`` and label sums ``beta`` (K each), ``bounds`` the
    (start, stop) column range of each block, the data weight ``C`` and the intercept's box
    |b| ≤ ``R`` (0: no intercept)."""

    P: np.ndarray
    q: np.ndarray
    beta: np.ndarray
    bounds: list
    C: float
    R: float


@dataclass
class CutSolution:
    """Solution of one cut problem."""

    coef: np.ndarray       # w over all cached columns
    intercept: float
    value: float           # minimum of the cut model (a lower bound on the inner problem)
    alpha: np.ndarray      # dual weights of the cuts
    mu: np.ndarray         # block multipliers (Σ = 1 when some block is active)


def _settings(tol: float | None = None, dense: bool = False):
    """Clarabel's settings for the cut problems: quiet, at most 200 iterations, ``tol`` on the
    gap and feasibility (its defaults without one). A ``dense`` KKT system (the one-block
    dual's K × K Gram) is factored by faer's supernodal LDL where this Clarabel has it, 20 %
    faster there than the default QDLDL."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_iter = 200
    if tol is not None:
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
    if dense and _has_faer():
        settings.direct_solve_method = "faer"
    return settings


@functools.cache
def _has_faer() -> bool:
    """Whether this Clarabel build has the faer solver (from 0.10; the package accepts 0.7)."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.direct_solve_method = "faer"
    try:
        clarabel.DefaultSolver(sp.csc_matrix((1, 1)), np.ones(1), sp.csc_matrix(-np.ones((1, 1))),
                               np.zeros(1), [clarabel.NonnegativeConeT(1)], settings)
    except Exception:  # "Bad settings" from builds without it
        return False
    return True


def _scales(C: float, hint: float | None) -> list[float]:
    """Units of α to try, best guess first. The dual is solved for a = α/unit; the right unit
    is the size of the optimal α, which is C when Σα ≤ C binds (small C) and otherwise depends
    on how the cuts cancel. Unscaled data with C = 10·n leaves α/C near 1e-6 and a unit
    far from the optimum's size leaves Clarabel without progress, so the previous solve's Σα
    (the cuts change one at a time) is the guess and a geometric ladder the fallback."""
    guess = min(C, hint) if hint is not None and hint > 0 else min(C, 1.0)
    ladder = [guess, C, guess * 30, guess / 30, guess * 1e3, guess / 1e3, 1.0]
    out = []
    for scale in ladder:
        scale = min(scale, C)
        if not any(abs(scale - s) <= 1e-12 * s for s in out):
            out.append(scale)
    return out


def _cut_program(model: CutModel, scale):
    """The dual (13) as a conic program in x = [a (K), θ, τ] with α = scale·a, divided by
    scale: minimise θ + Rτ − qᵀa over a ≥ 0, Σa ≤ C/scale, τ ≥ |βᵀa|,
    θ ≥ ½·scale·‖G_t a‖² for every block t (G_t reduced to rank ≤ K).

    The constraint matrix is assembled dense (at most K + 3 + T·(K + 2) rows of K + 2) and
    converted once: the cut problem is solved hundreds of times per fit."""
    Pmat, q, beta, bounds, C, R = model
    K = Pmat.shape[1]
    n_var = K + 2
    i_theta, i_tau = K, K + 1
    q_obj = np.concatenate([-np.asarray(q, float), [1.0, R]])
    reduced, ranks = [], []
    for a, b in bounds:
        G = Pmat[a:b]
        if G.shape[0] > K:  # ‖Gα‖ = ‖Lα‖ for LᵀL = GᵀG: K rows are enough
            G = _gram_factor(G)
        reduced.append(G)
        ranks.append(G.shape[0])
    n_rows = K + 3 + sum(r + 2 for r in ranks)
    A = np.zeros((n_rows, n_var))
    rhs = np.zeros(n_rows)
    A[np.arange(K), np.arange(K)] = -1.0                      # a ≥ 0
    A[K, :K] = 1.0                                            # Σa ≤ C/scale
    rhs[K] = C / scale
    A[K + 1, :K], A[K + 1, i_tau] = np.asarray(beta, float), -1.0   # τ ≥ ±βᵀa
    A[K + 2, :K], A[K + 2, i_tau] = -np.asarray(beta, float), -1.0
    cones = [clarabel.NonnegativeConeT(K), clarabel.NonnegativeConeT(1),
             clarabel.NonnegativeConeT(2)]
    row = K + 3
    for G in reduced:
        # ½‖G a‖²·scale ≤ θ  ⇔  ‖(√(2·scale) G a, θ − 1)‖ ≤ θ + 1
        A[row, i_theta] = A[row + 1, i_theta] = -1.0
        rhs[row], rhs[row + 1] = 1.0, -1.0
        A[row + 2:row + 2 + G.shape[0], :K] = -np.sqrt(2.0 * scale) * G
        cones.append(clarabel.SecondOrderConeT(G.shape[0] + 2))
        row += G.shape[0] + 2
    return q_obj, sp.csc_matrix(A), rhs, cones, ranks


def _single_block_program(gram, q, beta, C, R, scale):
    """The dual (13) of a cut model with one block as a QP in x = [a (K), τ]: minimise
    ½·scale·aᵀ(PᵀP)a + Rτ − qᵀa over a ≥ 0, Σa ≤ C/scale, τ ≥ |βᵀa| (``gram`` = PᵀP; the
    max over blocks is the one block's norm, so no cone is needed). Its rows are the conic
    program's first K + 3, and it is 3× faster to solve than the cone over P's K × K factor
    (an all-features model: one block of every column), with a better α (a higher dual value
    at it) on the text set's."""
    K = gram.shape[0]
    P = np.zeros((K + 1, K + 1))
    P[:K, :K] = scale * np.triu(gram)
    q_obj = np.concatenate([-np.asarray(q, float), [R]])
    A = np.zeros((K + 3, K + 1))
    rhs = np.zeros(K + 3)
    A[np.arange(K), np.arange(K)] = -1.0                      # a ≥ 0
    A[K, :K] = 1.0                                            # Σa ≤ C/scale
    rhs[K] = C / scale
    A[K + 1, :K], A[K + 1, K] = np.asarray(beta, float), -1.0  # τ ≥ ±βᵀa
    A[K + 2, :K], A[K + 2, K] = -np.asarray(beta, float), -1.0
    return (sp.csc_matrix(P), q_obj, sp.csc_matrix(A), rhs,
            [clarabel.NonnegativeConeT(K + 3)])


def _gram_factor(G: np.ndarray) -> np.ndarray:
    """An upper-triangular K × K matrix L with LᵀL = GᵀG + δI for a cut matrix G of W ≫ K
    rows: its Gram by one BLAS product and a Cholesky, 4× faster than its QR (80 → 21 ms at
    10,000 × 400). δ = 1e-12·max diag makes a rank-deficient Gram positive definite, above
    the Gram's rounding; it only raises the dual's quadratic term, so the dual value found
    stays a lower bound on the cut model. The QR when the Cholesky still fails."""
    gram = G.T @ G
    delta = 1e-12 * max(float(np.max(np.diag(gram), initial=0.0)), 1e-300)
    try:
        return np.linalg.cholesky(gram + delta * np.eye(gram.shape[0])).T
    except np.linalg.LinAlgError:
        return np.linalg.qr(G, mode="r")


def solve_cut_problem(model: CutModel, tol: float = 1e-9, scale_hint: float | None = None,
                      gram: np.ndarray | None = None) -> CutSolution:
    """Minimise ½(Σ_t‖w_t‖)² + C·max(0, max_k ⟨w, p_k⟩ + b β_k + q_k) (|b| ≤ R) of the
    :class:`CutModel` ``model``.

    Narrow problems (at most ``PRIMAL_MAX_WIDTH`` cached columns) are solved in the primal,
    which gives the minimiser itself; α is read from its duals and ``value`` is the dual
    objective at α (a lower bound whatever the solver's accuracy). Wider ones are solved by
    the dual (13), whose size does not grow with the columns, and the minimiser recovered on
    its rays. ``scale_hint``: the expected Σα (the previous solution's); ``gram``: PᵀP when
    the caller keeps it (one block's dual needs it).
    """
    model = model._replace(C=float(model.C), R=float(model.R))
    if model.P.shape[0] <= PRIMAL_MAX_WIDTH:
        # its α comes from the duals, which need a tighter solve than the point for a bound
        # within 1e-7 of the minimum (1e-9: 1e-5)
        primal = _primal_cut_problem(model, 1e-2 * tol)
        if primal is not None:
            return primal
    return _dual_cut_problem(model, tol, scale_hint, gram)


def dual_value(model: CutModel, alpha) -> float:
    """The cut problem's dual objective g(α) = αᵀq − ½ max_t ‖Σ_k α_k p_{k,t}‖² − R|βᵀα|,
    maximised along the ray tα over the feasible t (α ≥ 0, Σα ≤ C; g is a concave quadratic
    in t): a lower bound on the cut model's minimum whatever α's accuracy (weak duality)."""
    Pmat, q, beta, bounds, C, R = model
    alpha = np.maximum(np.asarray(alpha, float), 0.0)
    total = float(alpha.sum())
    if total <= 0.0:
        return 0.0
    g = Pmat @ alpha
    S = max((float(g[a:b] @ g[a:b]) for a, b in bounds), default=0.0)
    linear = float(alpha @ np.asarray(q, float)) - R * abs(float(alpha @ np.asarray(beta)))
    t_max = C / total
    t = t_max if S <= 0.0 else min(max(linear / S, 0.0), t_max)
    return t * linear - 0.5 * t * t * S


def _dual_cut_problem(model: CutModel, tol, scale_hint, gram=None):
    """The cut problem by its dual (13): a QP for one block (:func:`_single_block_program`),
    a conic program for several (:func:`_cut_program`). ``scale_hint``: the expected Σα (the
    previous solution's).
    """
    Pmat, q, beta, bounds, C, R = model
    W, K = Pmat.shape
    T = len(bounds)
    sol, statuses, unsolved = None, [], []
    for scale in _scales(C, scale_hint):
        if T == 1:
            if gram is None:
                gram = Pmat.T @ Pmat
            P, q_obj, A, b_vec, cones = _single_block_program(gram, q, beta, C, R, scale)
            ranks = None
        else:
            q_obj, A, b_vec, cones, ranks = _cut_program(model, scale)
            P = sp.csc_matrix((K + 2, K + 2))
        for attempt_tol in (tol, 1e-7):
            sol = clarabel.DefaultSolver(P, q_obj, A, b_vec, cones,
                                         _settings(attempt_tol, dense=T == 1)).solve()
            statuses.append(str(sol.status))
            if statuses[-1].endswith("Solved"):
                break
            if np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.z)):
                unsolved.append((sol, scale, ranks))
        if statuses[-1].endswith("Solved"):
            break
    else:
        # No scale solved (Clarabel stalls on some badly scaled cut sets: a half-sample of
        # pd-speech). Any α ≥ 0 still gives a lower bound g(α) and a primal point on its rays,
        # so the stalled iterate with the best bound is used; the bundle's gap stays certified.
        if not unsolved:
            raise RuntimeError("the cut problem was not solved "
                               f"({', '.join(sorted(set(statuses)))})")
        sol, scale, ranks = max(unsolved, key=lambda u: dual_value(
            model, u[1] * np.maximum(np.asarray(u[0].x)[:K], 0.0)))
    x = np.asarray(sol.x)
    z = np.asarray(sol.z)
    alpha = scale * np.maximum(x[:K], 0.0)
    # duals: [K nonneg | 1 total | 2 box | cones (r_t + 2 each)]
    offset = K + 1
    nu_minus, nu_plus = z[offset], z[offset + 1]
    intercept = float(nu_plus - nu_minus) if R > 0 else 0.0
    offset += 2
    mu = np.ones(T)  # one block: Σμ = 1
    for t, r in enumerate(ranks or ()):
        # the cone's multiplier on its θ rows: μ_t = z_0 + z_1 (stationarity in θ: Σμ = 1)
        mu[t] = z[offset] + z[offset + 1]
        offset += r + 2
    g = Pmat @ alpha  # Σ_k α_k p_k over every cached column
    coef, intercept, mu = _primal_on_rays(model, -g, mu, intercept)
    # the dual objective at α, not the solver's: that sat up to 3e-6 above it (an
    # interior-point point is feasible only to its tolerance), which is no lower bound
    value = dual_value(model, alpha)
    return CutSolution(coef=coef, intercept=intercept, value=value, alpha=alpha, mu=mu)


def negligible_blocks(coef, bounds, Pmat, C, value) -> np.ndarray:
    """Blocks that are numerically zero: below ``MU_ZERO`` of the largest block, or whose
    largest possible effect on the cut model, ‖w_t‖·(Σ_s‖w_s‖ + C·max_k‖p_{k,t}‖), is below
    ``ZERO_EFFECT`` of its value (every block at 1e-14 when w = 0 is optimal)."""
    norms = np.array([np.linalg.norm(coef[a:b]) for a, b in bounds])
    reach = np.array([np.linalg.norm(Pmat[a:b], axis=0).max(initial=0.0) for a, b in bounds])
    effect = norms * (norms.sum() + C * reach)
    small = (norms <= MU_ZERO * norms.max(initial=0.0)) | \
        (effect <= ZERO_EFFECT * max(abs(float(value)), 1e-300))
    return np.flatnonzero(small & (norms > 0))


def _primal_cut_problem(model: CutModel, tol):
    """The cut problem in the primal, divided by C: min ½s²/C + ξ with s ≥ Σ_t u_t,
    ‖w_t‖ ≤ u_t, ξ ≥ ⟨w, p_k⟩ + bβ_k + q_k, ξ ≥ 0, |b| ≤ R. The duals of the cut rows are
    α/C. None if the solver fails (the dual path is then used)."""
    Pmat, q, beta, bounds, C, R = model
    W, K = Pmat.shape
    T = len(bounds)
    i_b, i_s, i_xi = W, W + 1, W + 2
    n_var = W + 3 + T
    A, n_rows = _primal_constraints(Pmat, beta, bounds)
    rhs = np.zeros(n_rows)
    rhs[1:K + 1] = -np.asarray(q, float)
    rhs[K + 1:K + 3] = R
    cones = [clarabel.NonnegativeConeT(K + 4)]
    cones += [clarabel.SecondOrderConeT(b - a + 1) for a, b in bounds]
    P = sp.csc_matrix((np.array([1.0 / C]), np.array([i_s]),
                       np.r_[np.zeros(i_s + 1, dtype=np.int64), np.ones(n_var - i_s, np.int64)]),
                      shape=(n_var, n_var))
    obj = np.zeros(n_var)
    obj[i_xi] = 1.0
    sol = clarabel.DefaultSolver(P, obj, A, rhs, cones, _settings(tol)).solve()
    if not str(sol.status).endswith("Solved"):
        return None
    x, z = np.asarray(sol.x), np.asarray(sol.z)
    coef, intercept = x[:W].copy(), (float(x[i_b]) if R > 0 else 0.0)
    alpha = C * np.maximum(z[1:K + 1], 0.0)
    value = dual_value(model, alpha)
    for t in negligible_blocks(coef, bounds, Pmat, C, value):  # zero, not selected
        a, b = bounds[t]
        coef[a:b] = 0.0
    norms = np.array([np.linalg.norm(coef[a:b]) for a, b in bounds])
    mu = norms / max(float(norms.sum()), 1e-300)
    return CutSolution(coef=coef, intercept=intercept, value=value, alpha=alpha, mu=mu)


def _primal_constraints(Pmat, beta, bounds):
    """The primal cut problem's constraint matrix (its rows as in
    :func:`_primal_cut_problem`: ξ ≥ 0; the K cuts; |b| ≤ R; Σu ≤ s; one cone (u_t, w_t) per
    block), assembled column by column straight into CSC: the cut problem is solved hundreds
    of times per fit, and a dense assembly cost as much as a quarter of its solve. The blocks'
    ranges must partition the columns, in order (as a :class:`BlockCache`'s do)."""
    W, K = Pmat.shape
    T = len(bounds)
    starts = np.array([a for a, _ in bounds], dtype=np.int64)
    widths = np.array([b - a for a, b in bounds], dtype=np.int64)
    if T and (starts[0] != 0 or np.any(starts[1:] != starts[:-1] + widths[:-1])
              or starts[-1] + widths[-1] != W) or (not T and W):
        raise ValueError("the blocks' column ranges must partition the cached columns in order")
    head = K + 4 + starts + np.arange(T)          # row of u_t in block t's cone
    block_row = K + 5 + np.repeat(np.arange(T), widths) + np.arange(W)  # row of w_j in it
    cut_rows = np.arange(1, K + 1)
    indices = np.concatenate([
        np.column_stack([np.broadcast_to(cut_rows, (W, K)), block_row]).ravel(),  # w
        cut_rows, [K + 1, K + 2],                   # b
        [K + 3],                                    # s
        [0], cut_rows,                              # ξ
        np.column_stack([np.full(T, K + 3), head]).ravel()])  # u
    data = np.concatenate([
        np.column_stack([Pmat, np.full(W, -1.0)]).ravel(),
        np.asarray(beta, float), [1.0, -1.0],
        [-1.0],
        [-1.0], np.full(K, -1.0),
        np.tile([1.0, -1.0], T)])
    counts = np.concatenate([np.full(W, K + 1), [K + 2, 1, K + 1], np.full(T, 2)])
    indptr = np.concatenate([[0], np.cumsum(counts)])
    n_rows = K + 4 + W + T
    A = sp.csc_matrix((data, indices.astype(np.int64, copy=False), indptr),
                      shape=(n_rows, W + 3 + T))
    A.eliminate_zeros()  # the cut coefficients of sparse columns are often exactly zero
    return A, n_rows


def _primal_on_rays(model: CutModel, v, mu, intercept):
    """The cut model's minimiser from the dual's α: w_t = c_t·v_t with v = −Σ_k α_k p_k, the
    family that holds it (w_t = μ_t v_t). The interior-point solver's μ and b are only as
    accurate as its tolerance, and the model multiplies their error by C·‖p_k‖: on raw
    pixels with C = 10·n the point read off the multipliers sat 25 % above the model's minimum
    and the bundle stalled. The few c_t ≥ 0 and b are found instead by minimising the model
    on the family, ½(Σ_t c_t‖v_t‖)² + C·max(0, max_k Σ_t c_t⟨p_{k,t}, v_t⟩ + bβ_k + q_k),
    a QP in T + 2 variables. Falls back to the multipliers if that QP is not solved."""
    Pmat, q, beta, bounds, C, R = model
    T, K = len(bounds), Pmat.shape[1]
    norms = np.array([np.linalg.norm(v[a:b]) for a, b in bounds])
    M = np.empty((K, T))
    for t, (a, b) in enumerate(bounds):
        M[:, t] = Pmat[a:b].T @ v[a:b]
    n_var = T + 2
    i_b, i_xi = T, T + 1
    P = np.zeros((n_var, n_var))
    P[:T, :T] = np.outer(norms, norms)
    obj = np.zeros(n_var)
    obj[i_xi] = C
    A = np.zeros((T + 1 + K + 2, n_var))
    rhs = np.zeros(A.shape[0])
    A[np.arange(T), np.arange(T)] = -1.0            # c ≥ 0
    A[T, i_xi] = -1.0                               # ξ ≥ 0
    A[T + 1:T + 1 + K, :T] = M                      # ξ ≥ Mc + βb + q
    A[T + 1:T + 1 + K, i_b] = beta
    A[T + 1:T + 1 + K, i_xi] = -1.0
    rhs[T + 1:T + 1 + K] = -np.asarray(q, float)
    A[-2, i_b], A[-1, i_b] = 1.0, -1.0              # |b| ≤ R
    rhs[-2:] = R
    sol = clarabel.DefaultSolver(sp.triu(sp.csc_matrix(P)).tocsc(), obj, sp.csc_matrix(A), rhs,
                                 [clarabel.NonnegativeConeT(A.shape[0])], _settings()).solve()
    if str(sol.status).endswith("Solved"):
        x = np.asarray(sol.x)
        c, intercept = np.maximum(x[:T], 0.0), float(x[i_b])
    else:
        c = mu
    # blocks at the solver's tolerance are zero, not selected
    size = c * norms
    c = np.where(size > MU_ZERO * max(float(size.max(initial=0.0)), 1e-300), c, 0.0)
    coef = np.empty(v.size)
    for t, (a, b) in enumerate(bounds):
        coef[a:b] = c[t] * v[a:b]
    return coef, (intercept if R > 0 else 0.0), c
