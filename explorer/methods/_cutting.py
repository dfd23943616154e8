"""Pieces shared by the cutting-plane methods (FGM, FS-multi): the per-iteration record of a
generated block, the map from cached columns back to weights on the input features, and the
outer loop asked for k features."""

from __future__ import annotations

import numpy as np

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
    }
    if getattr(space, "tree", None) is not None:
        info["groups_visited"] = int(space.last_visited)
    return info


def loop_to_k(max_outer: int, tol: float, B: int, grown_to: int | None) -> tuple[int, float]:
    """The outer loop's (max_outer, tol) when it must hold ``grown_to`` features: the paper's
    stop on a small objective change is off, and there are iterations enough for blocks of B
    to get there (None: the paper's loop as given)."""
    if grown_to is None:
        return int(max_outer), float(tol)
    return max(int(max_outer), int(np.ceil(grown_to / max(1, int(B)))) + 2), 0.0


def emit_outer_step(recorder, estimator, step, info: dict, inner_measure,
                    grown_to: int | None) -> bool:
    """One outer iteration's record (the estimator's current support); False stops the loop —
    the callback's answer, or a path that now holds ``grown_to`` features to cut from."""
    support = estimator.support_
    go_on = recorder.emit(objective=step.solution.objective, n_selected=int(support.sum()),
                          selected=np.flatnonzero(support),
                          inner_steps=step.solution.inner_steps, lower=step.lower,
                          upper=step.upper, inner_measure=inner_measure, info=info)
    if grown_to is not None and support.sum() >= grown_to:
        return False
    return go_on


def k_grid(n_features: int, n_points: int = 10) -> list[int]:
    """A sweep's k from 1 to min(n_features, ``SWEEP_FEATURES``), log-spaced."""
    top = max(1, min(int(n_features), SWEEP_FEATURES))
    return sorted({int(round(v)) for v in np.geomspace(1, top, n_points)})


def k_sweep(cls, X, y, n_points: int = 10) -> list[int]:
    """``sweep_values`` of a method whose sparsity knob is k (:func:`k_grid`)."""
    return k_grid(X.shape[1], n_points)

