"""Records and results → tidy pandas frames (what every view plots). No plotting here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

CONVERGENCE_COLUMNS = ["step", "objective", "outer", "refit", "member"]
BOUNDS_COLUMNS = ["step", "outer", "lower", "upper", "gap", "relative_gap", "member"]
GAP_FLOOR = 1e-12  # a log axis cannot show a closed gap of 0
KEPT_COLUMNS = ["iteration", "n_selected", "M_e", "member"]
# ``member``: the class of a one-vs-rest member's record ("" for a single fit)


def relative_gap(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """(upper − lower)/|upper|, floored at ``GAP_FLOOR``; NaN where a bound is missing (an
    iteration without a certified lower bound yet)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = (upper - lower) / np.maximum(np.abs(upper), 1e-300)
    return np.where(np.isnan(gap), np.nan, np.maximum(gap, GAP_FLOOR))


def one_vs_rest_selection(records: Sequence) -> tuple[int, int]:
    """(features selected by the model, classes fitted) of a one-vs-rest fit's records (each
    member's records carry ``record.member``): the model selects the union of its members'
    latest selections, not the count of the member running now."""
    latest = {}
    for record in reversed(records):
        member = record.member
        if member is not None and member not in latest:
            latest[member] = np.asarray(record.selected, dtype=np.int64)
    union = np.unique(np.concatenate(list(latest.values()))) if latest else np.zeros(0)
    return int(union.size), len(latest)


MAX_TRACE_POINTS = 150  # per outer iteration: more than a plot's width is only drawing cost


def _thinned(n: int) -> np.ndarray:
    """Indices of at most ``MAX_TRACE_POINTS`` steps of an inner trace of ``n``, first and last
    included, denser at the start where the objective moves most."""
    if n <= MAX_TRACE_POINTS:
        return np.arange(n)
    head = np.arange(min(n, MAX_TRACE_POINTS // 3))
    tail = np.unique(np.geomspace(max(1, head.size), n - 1,
                                  MAX_TRACE_POINTS - head.size).astype(np.int64))
    return np.unique(np.concatenate([head, tail, [n - 1]]))


def convergence_frames(records: Sequence, start_step: int = 0
                       ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, int]:
    """The convergence, bounds and kept-count frames of a batch of records, built in one go
    (a streaming view receives hundreds of FSA records per tick), and the next step index.
    Inner traces longer than ``MAX_TRACE_POINTS`` are thinned for drawing. ``refit`` marks the
    rows of a refinement record (FGM's ``refine``): their objective is the restricted ℓ2
    model's on the kept features, another function than the path's, drawn apart. ``member``
    names the class of a one-vs-rest member's rows ("" for a single fit)."""
    steps, values, outers, refits, members = [], [], [], [], []
    b_step, b_outer, b_lower, b_upper, b_member = [], [], [], [], []
    k_iter, k_sel, k_me, k_member = [], [], [], []
    step = start_step
    for record in records:
        trace = record.info.get("inner_objective") if record.info else None
        if trace is not None and len(trace):
            trace = np.asarray(trace, dtype=float)
            keep = _thinned(trace.size)  # on their true inner-step positions
            values.append(trace[keep])
            steps.append(step + keep.astype(float))
            outers.append(np.full(keep.size, record.iteration + 1))
            step += trace.size
        else:
            values.append(np.array([record.objective], dtype=float))
            steps.append(np.array([float(step)]))
            outers.append(np.array([record.iteration + 1]))
            step += 1
        refits.append(np.full(steps[-1].size, bool(record.refinement)))
        member = "" if record.member is None else str(record.member)
        members.append(np.full(steps[-1].size, member, dtype=object))
        k_member.append(member)
        if record.lower is not None or record.upper is not None:
            b_step.append(float(step - 1))
            b_outer.append(record.iteration + 1)
            b_lower.append(np.nan if record.lower is None else record.lower)
            b_upper.append(np.nan if record.upper is None else record.upper)
            b_member.append(member)
        k_iter.append(record.iteration + 1)
        k_sel.append(record.n_selected)
        k_me.append(float(record.info.get("M_e", np.nan)) if record.info else np.nan)
    conv = pd.DataFrame({
        "step": np.concatenate(steps) if steps else np.zeros(0),
        "objective": np.concatenate(values) if values else np.zeros(0),
        "outer": np.concatenate(outers) if outers else np.zeros(0, dtype=int),
        "refit": np.concatenate(refits) if refits else np.zeros(0, dtype=bool),
        "member": np.concatenate(members) if members else np.zeros(0, dtype=object)})
    lower, upper = np.asarray(b_lower, dtype=float), np.asarray(b_upper, dtype=float)
    bounds = pd.DataFrame({"step": np.asarray(b_step, dtype=float),
                           "outer": np.asarray(b_outer, dtype=int), "lower": lower,
                           "upper": upper, "gap": upper - lower,
                           "relative_gap": relative_gap(lower, upper),
                           "member": np.asarray(b_member, dtype=object)})
    kept = pd.DataFrame({"iteration": np.asarray(k_iter, dtype=int),
                         "n_selected": np.asarray(k_sel, dtype=int),
                         "M_e": np.asarray(k_me, dtype=float),
                         "member": np.asarray(k_member, dtype=object)})
    return conv, bounds, kept, step


def selection_matrix(records: Sequence, n_features: int, max_columns: int = 200,
                     order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Iteration × feature 0/1 matrix of which features were selected when (entries/exits).

    Only features ever selected are shown (at most ``max_columns``: the last selection first,
    then the most recently dropped); columns are ordered by first entry unless ``order`` gives
    a priority (e.g. group ids). Returns (matrix, feature ids of the columns).
    """
    if not records:
        return np.zeros((0, 0)), np.zeros(0, dtype=np.int64)
    first_seen: dict[int, int] = {}
    last_seen: dict[int, int] = {}
    for t, record in enumerate(records):
        for f in record.selected.tolist():
            first_seen.setdefault(f, t)
            last_seen[f] = t
    final = set(records[-1].selected.tolist())
    ranked = sorted(first_seen, key=lambda f: (f not in final, -last_seen[f], first_seen[f]))
    chosen = ranked[:max_columns]
    if order is not None:
        chosen.sort(key=lambda f: (order[f], first_seen[f]))
    else:
        chosen.sort(key=lambda f: (first_seen[f], f))
    cols = np.array(chosen, dtype=np.int64)
    pos = {f: j for j, f in enumerate(chosen)}
    M = np.zeros((len(records), cols.size), dtype=np.int8)
    for t, record in enumerate(records):
        idx = [pos[f] for f in record.selected.tolist() if f in pos]
        M[t, idx] = 1
    return M, cols


def ever_selected(records: Sequence) -> int:
    """How many distinct features were selected at some iteration."""
    seen: set[int] = set()
    for record in records:
        seen.update(record.selected.tolist())
    return len(seen)


def block_membership(records: Sequence, n_features: int) -> np.ndarray:
    """FS-multi's Fig. 2 / FGM's block map: outer iteration × feature, 1 where the feature is
    part of that iteration's generated block (or selected, when no block is recorded)."""
    M = np.zeros((len(records), n_features), dtype=np.int8)
    for t, record in enumerate(records):
        block = record.info.get("block_features") if record.info else None
        idx = np.asarray(block if block is not None else record.selected, dtype=np.int64)
        M[t, idx[idx < n_features]] = 1
    return M


def selected_table(estimator, dataset=None, pinned=()) -> pd.DataFrame:
    """Selected features: index, name, weight (|weight| for multi-class), the weight times
    the feature's standard deviation (``weight_per_sd``, the order of the rows: comparable
    across units), group, is-true (no rows without a model); with ``pinned`` (the features
    the user always includes) a column ``given`` says which of them were given, not chosen."""
    if estimator is None:
        return pd.DataFrame(columns=["feature", "name", "weight", "abs_weight"])
    support = estimator.get_support()
    idx = np.flatnonzero(support)
    coef = np.atleast_2d(getattr(estimator, "coef_", np.zeros(support.size)))
    weight = coef[0, idx] if coef.shape[0] == 1 else np.abs(coef[:, idx]).max(axis=0)
    names = dataset.names() if dataset is not None else [f"x{j}" for j in range(support.size)]
    frame = pd.DataFrame({"feature": idx, "name": [names[j] for j in idx],
                          "weight": weight, "abs_weight": np.abs(weight)})
    sd = dataset.column_sd(idx) if dataset is not None and hasattr(dataset, "column_sd") \
        else None
    order = frame["abs_weight"]
    if sd is not None and len(sd) == idx.size:
        # features in different units (pd-speech: wavelet means of 1e-21 beside energies of
        # 1e10) are compared by the change one standard deviation of each makes
        frame["weight_per_sd"] = weight * sd
        order = np.abs(frame["weight_per_sd"])
    groups = getattr(dataset, "groups", None) if dataset is not None else None
    if groups is not None and not isinstance(groups, (list, tuple)):
        frame["group"] = np.asarray(groups)[idx]
    truth = getattr(dataset, "truth", None) if dataset is not None else None
    if truth is not None:
        frame["true_feature"] = np.isin(idx, truth)
    if len(pinned):
        frame["given"] = np.where(np.isin(idx, list(pinned)), "always in", "")
    rows = np.argsort(-order.to_numpy(), kind="stable")
    return frame.iloc[rows].reset_index(drop=True)


def coefficient_paths(records: Sequence, max_features: int = 60) -> pd.DataFrame:
    """FSA's Fig. 2: value of each coefficient per iteration until it is killed.

    Keeps the ``max_features`` features that survived longest (the final selection first)."""
    rows = []
    last_alive: dict[int, int] = {}
    for record in records:
        values = record.info.get("values") if record.info else None
        if values is None:
            continue
        for f in record.selected.tolist():
            last_alive[f] = record.iteration
    keep = set(sorted(last_alive, key=lambda f: (-last_alive[f], f))[:max_features])
    for record in records:
        values = record.info.get("values") if record.info else None
        if values is None:
            continue
        sel = record.selected
        mask = np.isin(sel, list(keep))
        for f, v in zip(sel[mask].tolist(), np.asarray(values)[mask].tolist()):
            rows.append((record.iteration + 1, f, v))
    return pd.DataFrame(rows, columns=["iteration", "feature", "value"])


def candidate_scores(record, names=None) -> pd.DataFrame:
    """The worst-case analysis of one FGM iteration: the chosen block and the runners-up,
    with their scores (largest first)."""
    info = record.info or {}
    block = np.asarray(info.get("block", []), dtype=np.int64)
    scores = np.asarray(info.get("block_scores", []), dtype=float)
    runners = np.asarray(info.get("runners_up", []), dtype=np.int64)
    rscores = np.asarray(info.get("runner_scores", []), dtype=float)
    ids = np.concatenate([block, runners])
    frame = pd.DataFrame({
        "candidate": ids,
        "score": np.concatenate([scores, rscores]),
        "chosen": np.concatenate([np.ones(block.size, bool), np.zeros(runners.size, bool)]),
    })
    block_names = info.get("block_names")
    if names is not None:
        frame["name"] = [names[i] if i < len(names) else f"#{i}" for i in ids]
    elif block_names is not None and len(block_names) == block.size:
        frame["name"] = list(block_names) + [f"#{i}" for i in runners]
    else:
        frame["name"] = [f"#{i}" for i in ids]
    return frame
