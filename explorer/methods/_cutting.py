"""Pieces shared by the cutting-plane methods (FGM, FS-multi): the per-iteration record of a
generated block, the map from cached columns back to weights on the input features, and the
outer loop asked for k features (or k groups) with its cut to exactly k."""

from __future__ import annotations

import numpy as np

from ..optim import OuterStopping, candidate_norms
from .base import SWEEP_FEATURES


def linear_coef(weights_by_column, n_features: int) -> np.ndarray:
    """Weights on the input features from (Columns, weights) pairs of linear columns; a
    feature duplicated in several blocks or overlapping groups gets the sum of its columns."""
    coef = np.zeros(n_features)
    for cols, w in weights_by_column:
        if cols.width:
            np.add.at(coef, cols.feature_a, w * cols.scale)
    return coef


def block_record_info(space, step, previously: set, B: int) -> dict:
    """What a teaching view needs about one outer iteration's generated block."""
    sol = step.solution
    block_feats = space.input_features(step.block)
    new = [int(f) for f in block_feats if f not in previously]
    previously.update(int(f) for f in block_feats)
    norms = sol.block_norms if sol.block_norms is not None else np.zeros(0)
    info = {
        "inner_objective": np.asarray(sol.trace, dtype=float),
        "block": step.block.copy(),
        "block_scores": step.block_scores.copy(),
        "block_names": [space.describe(int(c)) for c in step.block[:50]],
        "block_features": block_feats,
        "new_features": np.asarray(new, dtype=np.int64),
        "block_norms": norms.copy(),
        "active_blocks": int(np.count_nonzero(norms > 0)),
        "n_blocks": len(norms),
        "passes": int(space.passes),
        "stop_reason": step.stop_reason,
        "runners_up": step.runners_up.copy(),
        "runner_scores": step.runner_scores.copy(),
        "B": int(B),
        "pinned": int(np.size(getattr(space, "fixed", ()))),  # always in the block, beside B
        "scaling": getattr(space, "scaling", None),  # the feature scaling in effect
    }
    if getattr(space, "tree", None) is not None:
        info["groups_visited"] = int(space.last_visited)
    return info


GROWN = "grown to {{held}} ≥ {target} {unit}"  # a path grown to cut k (or k groups) from


def outer_stopping(max_outer: int, tol: float, B: int, grown_to: int | None,
                   grown_reason: str = "", progress_scale: bool = False) -> OuterStopping:
    """The outer loop's stop: the paper's (``max_outer``, ``tol``), or, when the path must hold
    ``grown_to`` candidates to cut k from, a stop once it holds them (said as
    ``grown_reason``), the paper's stop on a small objective change off and iterations enough
    for blocks of B to get there."""
    if grown_to is None:
        return OuterStopping(int(max_outer), float(tol), progress_scale=progress_scale)
    return OuterStopping(max(int(max_outer), int(np.ceil(grown_to / max(1, int(B)))) + 2),
                         0.0, progress_scale=progress_scale, held=int(grown_to),
                         held_reason=grown_reason or "grown to {held} ≥ {target} candidates")


def emit_outer_step(recorder, estimator, step, info: dict, inner_measure) -> bool:
    """One outer iteration's record (the estimator's current support); False (the callback's
    answer) stops the loop."""
    support = estimator.support_
    return recorder.emit(objective=step.solution.objective, n_selected=int(support.sum()),
                         selected=np.flatnonzero(support),
                         inner_steps=step.solution.inner_steps, lower=step.lower,
                         upper=step.upper, inner_measure=inner_measure, info=info)


def k_candidates(space, master, solution, k: int):
    """Exactly k candidates from a path grown to at least k: the path's k of largest ‖w_c‖
    (at the optimum of the ℓ1² master the kernel weights are d_c ∝ ‖w_c‖, the paper's own
    relevance of a block member), completed when the path is short by the best worst-case
    scores outside it (the next block Algorithm 1 would add); the space's ``fixed`` (pinned)
    candidates are always kept. Returns (kept, before, added) as sorted candidate ids."""
    norms = candidate_norms(master, space.n_candidates)
    norms[space.fixed] = np.inf  # pinned by the user: kept first, whatever their weight
    before = np.flatnonzero(norms)
    kept = before[np.argsort(-norms[before], kind="stable")[:k]]
    added = np.zeros(0, dtype=np.int64)
    if kept.size < k and solution is not None:
        want = min(space.n_candidates, before.size + 2 * (k - kept.size))
        ids, _ = space.top(solution.signal, want)
        added = ids[~np.isin(ids, before)][: k - kept.size]
    return np.sort(np.concatenate([kept, added])).astype(np.int64), before, np.sort(added)


def k_grid(n_features: int, n_points: int = 10) -> list[int]:
    """A sweep's k from 1 to min(n_features, ``SWEEP_FEATURES``), log-spaced."""
    top = max(1, min(int(n_features), SWEEP_FEATURES))
    return sorted({int(round(v)) for v in np.geomspace(1, top, n_points)})


def k_sweep(cls, X, y, n_points: int = 10) -> list[int]:
    """``sweep_values`` of a method whose sparsity knob is k (:func:`k_grid`)."""
    return k_grid(X.shape[1], n_points)

