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
from .master import Master, MasterSolution
from .stopping import check_tolerance


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


@dataclass(frozen=True)
class OuterStopping:
    """When the outer loop (Alg. 1) stops, in one object — as skglm's working-set solvers stop
    their outer loop on one criterion — checked after each iteration's master, in this order:

    ``threshold``
        no candidate scores above it: the optimality conditions hold on every candidate
        (GrFL: violations relative to λ, 1 + ε) — ``OPTIMAL``;
    the block repeats
        the worst-case block is already in the model — ``REPEATED`` (always on);
    ``tol``
        the master objective's relative change is at most ``tol`` (the paper's ε_c = 1e-2;
        None: never), relative to the progress since the empty model with
        ``progress_scale`` (FS-multi's C·Δ-dominated objective);
    ``held``
        the master's weights hold at least this many candidates (a path grown to cut k
        from; the user's pinned candidates count), said as ``held_reason`` whatever else
        stopped the loop at that iteration; a master stopped by this alone is not polished
        (the cut's refit is the certified solve);
    ``max_outer``
        the most iterations (T_max).
    """

    max_outer: int
    tol: float | None = None
    progress_scale: bool = False
    threshold: float | None = None
    held: int | None = None
    held_reason: str = "grown to {held} ≥ {target} candidates"

    def __post_init__(self):
        # 0: no new block (a warm start that already holds GrFL's max_features)
        if not isinstance(self.max_outer, int | np.integer) or self.max_outer < 0:
            raise ValueError(f"max_outer must be an integer ≥ 0, got {self.max_outer!r}")
        if self.tol is not None:
            object.__setattr__(self, "tol", check_tolerance("tol", self.tol))
        if self.held is not None and int(self.held) < 1:
            raise ValueError(f"held must be at least 1, got {self.held!r}")

    def optimal(self, scores) -> bool:
        return self.threshold is not None and \
            (scores.size == 0 or float(scores[0]) <= self.threshold)

    def after_master(self, T: int, change: float | None, next_ids, next_scores,
                     seen) -> str | None:
        """The reason to stop after iteration T's master, the holding of candidates aside
        (:meth:`after_holding`): ``change`` is the objective's relative change (None while it
        says nothing: no progress over the empty model yet)."""
        if self.optimal(next_scores):
            return OPTIMAL
        if next_ids.size == 0 or tuple(sorted(next_ids.tolist())) in seen:
            return REPEATED
        if self.tol is not None and T >= 2 and change is not None and change <= self.tol:
            return f"converged: relative objective change {change:.2e} ≤ tol"
        if T == self.max_outer:
            return MAX_OUTER
        return None

    def after_holding(self, held: int) -> str | None:
        """The reason to stop once the master holds ``held`` candidates (None: go on)."""
        if self.held is not None and held >= self.held:
            return self.held_reason.format(held=held, target=self.held)
        return None


@dataclass
class CuttingPlaneResult:
    blocks: list[np.ndarray]
    solution: MasterSolution | None
    lower: float | None
    upper: float
    n_outer: int
    stop_reason: str
    grown: bool = False  # stopped holding the candidates asked for (``OuterStopping.held``)


def cutting_plane(space, master: Master, *, B: int, stopping: OuterStopping,
                  on_step: Callable[[OuterStep], bool],
                  initial_blocks: Sequence[np.ndarray] = (), context: int = 0,
                  report_initial: bool = False) -> CuttingPlaneResult:
    """Run Algorithm 1 until ``stopping`` says so (:class:`OuterStopping`: the block repeats,
    the objective stalls, no candidate violates the optimality conditions, the master holds
    the candidates asked for, or T_max) or ``on_step`` returns False.

    Parameters
    ----------
    space : FeatureSpace
        Candidates and their scores.
    master : Master
        The restricted master (:class:`~explorer.optim.master.Master`; a
        :class:`~explorer.optim.master.WeightedMaster` when ``stopping.held`` is set).
    stopping : OuterStopping
        When the loop stops.
    B : int
        Candidates per generated block, besides the space's ``fixed`` ones (pinned by the
        user), which are in every block: the relaxation is then over
        D = {d : d_j = 1 for j fixed, Σ_others d_j ≤ B}, and the worst-case analysis's
        block scores (the lower bound's S) are the fixed ones' plus the top B of the others.
    on_step : callable
        Called after each outer iteration with an :class:`OuterStep`; return ``False`` to stop.
    initial_blocks : sequence of id arrays
        Blocks to start from (warm start); solved once before the first generated block.
    context : int
        Also report this many runners-up of each worst-case analysis (teaching views show
        what nearly entered); the block itself is unchanged.
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
    reason = MAX_OUTER
    result_grown = False
    T = 0
    for T in range(1, stopping.max_outer + 1):
        key = tuple(sorted(ids.tolist()))
        if stopping.optimal(scores):
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
            stop = stopping.after_master(T, _change(stopping, previous, solution, empty),
                                         next_ids, next_scores, seen)
        if stop not in (None, STOPPED):
            # intermediate masters are solved coarsely (they only choose the next block); the
            # last one is solved to the fine tolerance, and may then ask for another block
            polished = master.polish()
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
                    stop = stopping.after_master(
                        T, _change(stopping, previous, solution, empty), next_ids,
                        next_scores, seen)
        if stop != STOPPED and stopping.held is not None:
            # a path grown to cut from: its last master only chose blocks (no polish when
            # this alone stops it), the cut's refit is the certified solve
            grown = stopping.after_holding(held_candidates(space, master))
            if grown is not None:
                stop = grown
                result_grown = True
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
    return CuttingPlaneResult(blocks, solution, lower, upper, T, reason, result_grown)


REPEATED = "converged: the worst-case block is already in the model"
STOPPED = "stopped by callback"
OPTIMAL = "converged: no candidate violates the optimality conditions"
MAX_OUTER = "max_outer reached"


def _change(stopping: OuterStopping, previous: float, solution, empty: float) -> float | None:
    """The master objective's relative change: to J_T, or with ``progress_scale`` to the
    progress since the empty model, (J_{T−1} − J_T)/(J_0 − J_T) — for objectives dominated by
    a large constant (FS-multi's C·Δ with C = 0.1·n) the plain ratio stops too early. None
    while there is no progress over the empty model (w = 0 still optimal over the blocks so
    far: a ratio to it says nothing, and a new block may still leave the zero model)."""
    scale = (empty - solution.objective) if stopping.progress_scale else solution.objective
    if stopping.progress_scale and scale <= 1e-12 * max(abs(empty), 1.0):
        return None
    return abs(previous - solution.objective) / max(abs(scale), 1e-12)


def candidate_norms(master, n_candidates: int) -> np.ndarray:
    """‖w_c‖ per candidate — a feature, or a group (FGM eq. 12's atom) — over the master's
    columns (``master.weights_by_column()``), which hold the scaled features: for a single
    feature |w_j| = |coef_j|/λ_j."""
    sq = np.zeros(n_candidates)
    for cols, w in master.weights_by_column():
        if cols.width:
            np.add.at(sq, cols.candidate, np.asarray(w, dtype=float) ** 2)
    return np.sqrt(sq)


def held_candidates(space, master) -> int:
    """The candidates the master's weights hold, the space's ``fixed`` (pinned) ones among
    them whatever their weight."""
    held = candidate_norms(master, space.n_candidates) > 0
    held[np.asarray(getattr(space, "fixed", ()), dtype=np.int64)] = True
    return int(np.count_nonzero(held))


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
