"""The outer cutting-plane loop shared by FGM, FS-multi and GrFL (Alg. 1 of Tan et al.; Alg. 1
of Rakotomamonjy et al. is the same loop over a sampled space), written once.

score → generate a block (worst-case analysis, Alg. 2) → restricted master → new signal.

The loop only knows two protocols: a :class:`~explorer.features.FeatureSpace` (ranks candidates
for a signal vector and materialises chosen ones) and a restricted master (adds a block, solves,
returns the next signal and, if it can, the terms of a certified lower bound). FGM plugs in the
ℓ1² primal master solved by APG (:class:`~explorer.engines.fgm.l12_master.L12Master`); FS-multi
plugs in its bundle master;
GrFL its group master (:class:`~explorer.engines.grfl.group_master.GroupMaster`) over a
:class:`~explorer.features.SampledSpace`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..kernels.chunked import PassInterrupted
from .master import MasterSolution


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
    max_outer : int
        The most outer iterations (T_max).
    B : int
        Candidates per generated block, besides the space's ``fixed`` ones (pinned by the
        user), which are in every block: the relaxation is then over
        D = {d : d_j = 1 for j fixed, Σ_others d_j ≤ B}, and the worst-case analysis's
        block scores (the lower bound's S) are the fixed ones' plus the top B of the others.
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

    Notes
    -----
    A pass over a chunked X cut short by the fit's stop probe (:class:`PassInterrupted`) ends
    the loop as a callback stop would: a master solved before it is still reported, with no
    next block and no new lower bound.
    """
    interrupted = []
    fixed = np.asarray(getattr(space, "fixed", ()), dtype=np.int64)
    size = B + fixed.size  # the pinned candidates come first in every block

    def worst_case(signal):
        if not interrupted:
            try:
                ids, scores = space.top(signal, B + context)
                return ids[:size], scores[:size], ids[size:], scores[size:]
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
        block = np.union1d(np.asarray(block, dtype=np.int64), fixed)
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
