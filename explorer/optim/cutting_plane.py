"""The outer cutting-plane loop shared by FGM, FS-multi and GrFL (Alg. 1 of Tan et al.; Alg. 1
of Rakotomamonjy et al. is the same loop over a sampled space), written once.

score → generate a block (worst-case analysis, Alg. 2) → restricted master → new signal.

The loop only knows two protocols: a :class:`~explorer.features.FeatureSpace` (ranks candidates
for a signal vector and materialises chosen ones) and a restricted master (adds a block, solves,
returns the next signal and, if it can, the terms of a certified lower bound). FGM plugs in the
ℓ1² primal master solved by APG (:class:`L12Master`); FS-multi plugs in its bundle master;
GrFL its group master (:class:`~explorer.optim.group_master.GroupMaster`) over a
:class:`~explorer.features.SampledSpace`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..kernels.chunked import PassInterrupted
from . import prox_newton
from .cache import BlockCache, CachedMaster
from .datafits import Datafit
from .l12 import L12Problem, balance, solve_l12
from .losses import MarginLoss
from .master import MasterSolution
from .stopping import Stopping

COARSE_GAP = 1e-2  # relative gap of the masters that only choose the next block
COARSE_STALL = 1e-4  # ... or the paper's relative objective change, whichever comes first
APG_MIN = 20  # APG steps every narrow solve gets before proximal Newton may take over
APG_FIRST = 300  # ... and at most this many for a fine solve (the last master's polish)
NEWTON_STEPS = 8  # proximal Newton steps a master solve takes, for its cost estimate


@dataclass
class OuterStep:
    """One outer iteration, as the loop reports it to the method."""

    iteration: int
    block: np.ndarray          # candidate ids added in this iteration
    block_scores: np.ndarray
    solution: MasterSolution
    lower: float | None
    upper: float
    next_block: np.ndarray     # the worst-case block for the new signal (next iteration's)
    stop_reason: str | None
    runners_up: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    runner_scores: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass
class CuttingPlaneResult:
    blocks: list[np.ndarray]
    solution: MasterSolution | None
    lower: float | None
    upper: float
    n_outer: int
    stop_reason: str


def cutting_plane(space, master, *, B: int, max_outer: int, tol: float | None,
                  on_step: Callable[[OuterStep], bool],
                  initial_blocks: Sequence[np.ndarray] = (),
                  gap_tol: float | None = None, context: int = 0,
                  progress_scale: bool = False, threshold: float | None = None,
                  report_initial: bool = False) -> CuttingPlaneResult:
    """Run Algorithm 1 until the block repeats, the objective stalls, the gap closes, no
    candidate scores above ``threshold``, or T_max.

    Parameters
    ----------
    space : FeatureSpace
        Candidates and their scores.
    master : restricted master
        ``initial() -> MasterSolution`` (before any block), ``add_block(columns)``,
        ``solve() -> MasterSolution`` and ``lower_bound(solution, top_scores) -> float|None``.
    B : int
        Candidates per generated block.
    tol : float or None
        Stop when the relative change of the master objective between outer iterations is at
        most ``tol`` (the paper's ε_c = 1e-2); None: no such stop.
    on_step : callable
        Called after each outer iteration with an :class:`OuterStep`; return ``False`` to stop.
    initial_blocks : sequence of id arrays
        Blocks to start from (warm start); solved once before the first generated block.
    gap_tol : float, optional
        Also stop when ``upper − lower ≤ gap_tol·|upper|``.
    context : int
        Also report this many runners-up of each worst-case analysis (teaching views show
        what nearly entered); the block itself is unchanged.
    progress_scale : bool
        Measure the objective change relative to the progress made since the empty model,
        (J_{T−1} − J_T)/(J_0 − J_T), instead of relative to J_T: for objectives dominated by a
        large constant (FS-multi's C·Δ with C = 0.1·n) the plain ratio stops too early.
    threshold : float, optional
        Stop when the best candidate's score is at most this: the optimality conditions hold
        on every candidate scored (GrFL: violations relative to λ, threshold 1 + ε). A stop
        found on a coarse master is re-checked after its polish.
    report_initial : bool
        Report the solve over ``initial_blocks`` as iteration 0 (when there are any).

    A pass over a chunked X cut short by the fit's stop probe (:class:`PassInterrupted`) ends
    the loop as a callback stop would: a master solved before it is still reported, with no
    next block and no new lower bound.
    """
    interrupted = []

    def worst_case(signal):
        if not interrupted:
            try:
                ids, scores = space.top(signal, B + context)
                return ids[:B], scores[:B], ids[B:], scores[B:]
            except PassInterrupted:
                interrupted.append(True)
        none = np.zeros(0, dtype=np.int64)
        return none, np.zeros(0), none, np.zeros(0)

    blocks: list[np.ndarray] = []
    seen: set[tuple[int, ...]] = set()
    solution = master.initial()
    empty = solution.objective
    upper = solution.objective
    lower = None
    for block in initial_blocks:
        block = np.asarray(block, dtype=np.int64)
        master.add_block(space.columns(block))
        blocks.append(block)
        seen.add(tuple(sorted(block.tolist())))
    if blocks:
        solution = master.solve()
        upper = min(upper, solution.objective)
    ids, scores, runners, runner_scores = worst_case(solution.signal)
    if interrupted:
        return CuttingPlaneResult(blocks, solution, lower, upper, 0, STOPPED)
    lower = _max(lower, master.lower_bound(solution, scores))
    if blocks and report_initial:
        initial = np.concatenate(blocks)
        if not on_step(OuterStep(0, initial, np.full(initial.size, np.nan), solution, lower,
                                 upper, ids, None, runners, runner_scores)):
            return CuttingPlaneResult(blocks, solution, lower, upper, 0, STOPPED)
    previous = solution.objective
    reason = "max_outer reached"
    T = 0
    for T in range(1, max_outer + 1):
        key = tuple(sorted(ids.tolist()))
        if _optimal(threshold, scores):
            reason = OPTIMAL
            T -= 1
            break
        if ids.size == 0 or key in seen:
            reason = REPEATED
            T -= 1
            break
        try:
            columns = space.columns(ids)
        except PassInterrupted:
            reason = STOPPED
            T -= 1
            break
        master.add_block(columns)
        blocks.append(ids)
        seen.add(key)
        solution = master.solve()
        upper = min(upper, solution.objective)
        next_ids, next_scores, next_runners, next_runner_scores = worst_case(solution.signal)
        if interrupted:
            stop = STOPPED
        else:
            lower = _max(lower, master.lower_bound(solution, next_scores))
            stop = _stop_rule(T, max_outer, previous, solution, empty, progress_scale, tol,
                              gap_tol, lower, upper, next_ids, next_scores, seen, threshold)
        polish = getattr(master, "polish", None)
        if stop not in (None, STOPPED) and polish is not None:
            # intermediate masters are solved coarsely (they only choose the next block); the
            # last one is solved to the fine tolerance, and may then ask for another block
            polished = polish()
            if polished is not None:
                # one record per outer iteration: the coarse solve and its polish, in order
                polished.trace = list(solution.trace) + list(polished.trace[1:])
                polished.inner_steps += solution.inner_steps
                solution = polished
                upper = min(upper, solution.objective)
                next_ids, next_scores, next_runners, next_runner_scores = \
                    worst_case(solution.signal)
                if interrupted:
                    stop = STOPPED
                else:
                    lower = _max(lower, master.lower_bound(solution, next_scores))
                if stop in (REPEATED, OPTIMAL):
                    stop = _stop_rule(T, max_outer, previous, solution, empty, progress_scale,
                                      tol, gap_tol, lower, upper, next_ids, next_scores, seen,
                                      threshold)
        keep_going = on_step(OuterStep(T, ids, scores, solution, lower, upper, next_ids, stop,
                                       runners, runner_scores))
        previous = solution.objective
        ids, scores = next_ids, next_scores
        runners, runner_scores = next_runners, next_runner_scores
        if stop is not None:
            reason = stop
            break
        if not keep_going:
            reason = STOPPED
            break
    return CuttingPlaneResult(blocks, solution, lower, upper, T, reason)


REPEATED = "converged: the worst-case block is already in the model"
STOPPED = "stopped by callback"
OPTIMAL = "converged: no candidate violates the optimality conditions"


def _optimal(threshold, scores) -> bool:
    return threshold is not None and (scores.size == 0 or float(scores[0]) <= threshold)


def _stop_rule(T, max_outer, previous, solution, empty, progress_scale, tol, gap_tol, lower,
               upper, next_ids, next_scores, seen, threshold) -> str | None:
    if _optimal(threshold, next_scores):
        return OPTIMAL
    if next_ids.size == 0 or tuple(sorted(next_ids.tolist())) in seen:
        return REPEATED
    scale = (empty - solution.objective) if progress_scale else solution.objective
    # no progress over the empty model yet (w = 0 still optimal over the blocks so far): a
    # ratio to it says nothing, and a new block may still leave the zero model
    undefined = progress_scale and scale <= 1e-12 * max(abs(empty), 1.0)
    change = abs(previous - solution.objective) / max(abs(scale), 1e-12)
    if tol is not None and T >= 2 and not undefined and change <= tol:
        return f"converged: relative objective change {change:.2e} ≤ tol"
    if gap_tol is not None and lower is not None and \
            upper - lower <= gap_tol * max(abs(upper), 1e-12):
        return "converged: duality gap closed"
    if T == max_outer:
        return "max_outer reached"
    return None


def _max(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def best_on_ray(dual: Callable[[float], float], at_one: float, t_max: float = np.inf,
                max_evals: int = 60) -> float:
    """max over t ∈ [0, t_max] of a concave ``dual(t)`` (``at_one`` = dual(1), known), by
    golden-section search on a bracket found by doubling; never below dual(0) or dual(1).
    At most ``max_evals`` evaluations of ``dual``."""
    best = max(dual(0.0), at_one if np.isfinite(at_one) else -np.inf)
    hi = 1.0
    evals = 1
    while hi < t_max and evals < max_evals // 2:
        nxt = min(2.0 * hi, t_max)
        value = dual(nxt)
        evals += 1
        best = max(best, value)
        if not value > at_one or nxt == t_max:
            hi = nxt
            break
        at_one, hi = value, nxt
    hi = min(hi, t_max)
    lo, ratio = 0.0, (np.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = dual(a), dual(b)
    evals += 2
    while evals < max_evals and hi - lo > 1e-9 * max(hi, 1.0):
        if fa < fb:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = dual(b)
        else:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = dual(a)
        evals += 1
    values = [v for v in (best, fa, fb) if np.isfinite(v)]
    return max(values) if values else best


class L12Master(CachedMaster):
    """FGM's restricted master in the primal (Theorem 4, eq. 31): minimise
    ``½(Σ_t‖ω_t‖)² + C Σ_i l(y_i f_i)`` over the selected blocks by APG (Alg. 3/4), warm
    started from the previous outer iteration, with the dual variables recovered from the
    margins (α_i = −C l′(z_i): squared hinge α = Cξ, logistic α = C e^ξ/(1+e^ξ)).

    With an intercept (unpenalised, not selectable) the dual requires Σ α_i y_i = 0; the
    recovered α satisfies it at the exact optimum, and the class with the larger α-mass is
    scaled down to satisfy it exactly, which keeps the lower bound certified when the master
    is solved inexactly.
    """

    def __init__(self, y: np.ndarray, loss: MarginLoss, C: float, *, n_samples: int,
                 sparse_cache: bool, fit_intercept: bool = True, inner_tol: float = 3e-5,
                 max_inner: int = 2000, eta: float = 0.7, coef0: dict | None = None,
                 interrupt: Callable[[], bool] | None = None,
                 stop_flag: np.ndarray | None = None):
        self.y = np.asarray(y, dtype=np.float64)
        self.interrupt = interrupt
        self.stop_flag = stop_flag
        self.loss = loss
        self.C = float(C)
        self.fit_intercept = fit_intercept
        self.inner_tol = inner_tol
        self.max_inner = max_inner
        self._measure = np.inf
        self.eta = eta
        # with an intercept the master works on centred columns (b′ = b + μᵀω, same model)
        self.cache = BlockCache(n_samples, sparse_cache, center=fit_intercept)
        self.coef = np.zeros(0)
        self.intercept = 0.0
        self.tau = None
        self.columns = []
        self.coef0 = coef0 or {}
        self.total_inner = 0
        self.crawled = False  # APG crawled on a master of this fit: fine solves go to Newton

    # --------------------------------------------------------------- protocol
    def initial(self) -> MasterSolution:
        """The empty model (only the intercept): α from its margins; the paper's α = 1 when
        there is no intercept (any constant gives the same first block)."""
        b = Datafit(self.loss, self.y).best_constant() if self.fit_intercept else 0.0
        self.intercept = b
        z = self.y * b
        objective = self.C * float(self.loss.value(z).sum())
        return self._solution(objective, self.y * b, [objective], 0)

    def add_block(self, columns) -> None:
        self.cache.add(columns.matrix)
        self.columns.append(columns)
        start = np.zeros(columns.width)
        if self.coef0:
            for c in range(columns.width):
                start[c] = self.coef0.get((int(columns.candidate[c]),
                                           int(columns.feature_a[c]),
                                           int(columns.feature_b[c])), 0.0)
        self.coef = np.concatenate([self.coef, start])
        self._measure = np.inf  # the previous master's certificate says nothing of this one

    def solve(self, stopping: Stopping | None = None) -> MasterSolution:
        """Solve the current master: coarsely (``stopping=None``: to the 1 % gap that chooses
        the next block) or to ``stopping``. A narrow master (:func:`prox_newton.usable`) is
        solved by APG until its certificate, or until APG has spent about what a proximal
        Newton solve would cost (:meth:`_newton_cost`; a fine solve at most ``APG_FIRST``
        steps), and then by Newton: the ski-rental rule, at most about twice the cheaper
        solver's work, and certified where APG crawls (frequent words, raw pixels: its 1e-4
        stall rule stopped coarse masters there at gaps of 2 % to 2,000 %). Once APG has
        crawled in a fit (the same data, so the same scaling), fine solves go to Newton at
        once."""
        coarse = stopping is None
        stopping = stopping or self._stopping(coarse=True)
        if not prox_newton.usable(self.cache):
            return self._solve_apg(stopping)
        if not coarse and self.crawled:
            return self._solve_newton(stopping)
        cap = stopping.max_iter if coarse else min(stopping.max_iter, APG_FIRST)
        budget = int(min(cap, self._newton_cost()))
        first = self._solve_apg(Stopping(stopping.tol, budget, stall=stopping.stall))
        if first.info["converged"] or (coarse and first.inner_steps < budget):
            return first  # certified, or (a coarse solve) stopped by the stall rule
        self.crawled = True
        sol = self._solve_newton(stopping)
        sol.trace = list(first.trace) + list(sol.trace[1:])
        sol.inner_steps += first.inner_steps
        return sol

    def _newton_cost(self) -> float:
        """A proximal Newton solve of the current master in APG steps, from operation counts
        of the columns as given (so dense and sparse storage of the same data decide alike):
        an APG step is two products over the cached non-zeros; a Newton step a weighted Gram
        and a cone program in W variables; a solve about ``NEWTON_STEPS`` of them."""
        n, W, nnz = self.cache.n, self.cache.width, max(self.cache.nnz, 1)
        apg_step = 2.0 * nnz + 4.0 * n
        newton_step = min(n * W * W, nnz * W) + 10.0 * W ** 3
        return max(APG_MIN, NEWTON_STEPS * newton_step / apg_step)

    def _solve_apg(self, stopping: Stopping) -> MasterSolution:
        n = self.cache.n
        tau0 = self.tau if self.tau is not None else 0.1 * n * self.C
        shift = float(self.cache.means @ self.coef) if self.coef.size else 0.0
        result = solve_l12(
            self.cache, self.y, self.loss, self.C, coef0=self.coef,
            intercept0=self.intercept + shift, fit_intercept=self.fit_intercept, L0=tau0,
            eta=self.eta, stopping=stopping, interrupt=self.interrupt,
            stop_flag=self.stop_flag)
        self.coef = result.x[0]
        self.intercept = float(result.x[1][0]) - float(self.cache.means @ self.coef)
        self.tau = self.eta ** 2 * result.step_constant  # warm Lipschitz guess: L_T = η² τ_k
        self.total_inner += result.n_iter
        sol = self._solution(result.objective, result.margins, result.trace, result.n_iter)
        sol.info["converged"] = result.converged
        sol.info["inner_gap"] = result.measure
        self._measure = result.measure
        return sol

    def polish(self) -> MasterSolution | None:
        """Re-solve the current master to the fine tolerance (None if it already is)."""
        final = self._stopping(coarse=False)
        if final.met(self._measure) or (self.interrupt is not None and self.interrupt()):
            return None
        return self.solve(final)

    def _solve_newton(self, stopping: Stopping) -> MasterSolution:
        """The master by proximal Newton (narrow masters: exact whatever the scaling)."""
        problem = L12Problem(self.cache, self.y, self.loss, self.C,
                             fit_intercept=self.fit_intercept, compiled=False)
        shift = float(self.cache.means @ self.coef) if self.coef.size else 0.0
        result = prox_newton.prox_newton_l12(problem, self.coef, self.intercept + shift,
                                             stopping=stopping, interrupt=self.interrupt)
        if result.measure <= self._measure:
            self.coef = result.x[0]
            self.intercept = float(result.x[1][0]) - float(self.cache.means @ self.coef)
            self._measure = result.measure
        if not result.converged:  # APG takes over from the better of the two points
            steps = result.n_iter
            sol = self._solve_apg(stopping)
            sol.inner_steps += steps
            return sol
        self.total_inner += result.n_iter
        sol = self._solution(result.objective, result.margins, result.trace, result.n_iter)
        sol.info["converged"] = result.converged
        sol.info["inner_gap"] = result.measure
        sol.info["solver"] = "proximal Newton"
        self._measure = result.measure
        return sol

    def final_tolerance(self) -> float:
        """The certified gap the last master is polished to."""
        return self._stopping(coarse=False).tol

    def _stopping(self, coarse: bool) -> Stopping:
        """The gap asked of a solve. With one block the master is 1-strongly convex and its
        gap is quadratic in the coefficient error, so ``inner_tol²`` gives coefficients to
        ``inner_tol`` relative (FGM with B ≥ #features is then an ℓ2 SVM / logistic regression
        to that accuracy); with several blocks the gap is linear in it (the dual's max over
        tied blocks), so ``inner_tol`` itself."""
        tol = self.inner_tol ** 2 if self.cache.n_blocks <= 1 else self.inner_tol
        if coarse:
            return Stopping(max(tol, COARSE_GAP), self.max_inner, stall=COARSE_STALL)
        return Stopping(tol, self.max_inner)

    def lower_bound(self, solution: MasterSolution, top_scores: np.ndarray) -> float | None:
        """The best dual value on the ray {tα : t ≥ 0} through the recovered α, with the
        worst-case block: a certified lower bound (eq. 31's dual; every balanced α in the
        loss's dual domain gives one).

        Along the ray the block scores scale by t² (the top block stays the top block), so
        D(t) = −C Σ l*(−tα_i/C) − ½t²·S with S = Σ top-B scores at α: concave in t, maximised
        over [0, t_max] (t_max: the edge of the loss's dual domain). D(0) = 0 is the
        objective's own floor, so the bound is never below it; t = 1 is the plain recovered
        α, so the bound is never worse than it (an inexact master's α can be far off scale:
        its bound was −10⁶ next to an objective of 200)."""
        if solution.dual_base is None:
            return None
        alpha = np.asarray(solution.signal, dtype=float) * self.y
        S = float(np.sum(top_scores))
        C = self.C

        def dual(t: float) -> float:
            return -C * float(np.sum(self.loss.conj_neg(t * alpha / C))) - 0.5 * t * t * S

        return best_on_ray(dual, solution.dual_base - 0.5 * S,
                           t_max=self.loss.dual_domain()[1] * C / max(float(alpha.max()), 1e-300))

    # --------------------------------------------------------------- helpers
    def _solution(self, objective, margins, trace, steps) -> MasterSolution:
        z = self.y * margins
        alpha = -self.C * self.loss.derivative(z)
        if self.fit_intercept:
            alpha = balance(alpha, self.y)
        dual_base = -self.C * float(np.sum(self.loss.conj_neg(alpha / self.C)))
        norms = self.block_norms()
        return MasterSolution(objective=objective, signal=alpha * self.y, trace=list(trace),
                              inner_steps=steps, dual_base=dual_base, block_norms=norms,
                              info={"alpha_sum": float(alpha.sum())})

