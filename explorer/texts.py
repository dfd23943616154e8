"""Teaching texts: what one iteration of each method did, in words, from its record alone
(the teaching pages, the dashboard's explanation box, notebooks). No Panel, no numerics: they
are views of the records, like the plots, kept out of the estimators."""

from __future__ import annotations

import re
from collections.abc import Sequence


def _count(n, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it needs: "1 block", "3 blocks", "? blocks"."""
    try:
        one = int(n) == 1
    except (TypeError, ValueError):
        one = False
    return f"{n} {noun if one else (plural or noun + 's')}"

SUMMARIES = {
    "fgm": "Each outer iteration scores every feature by (Xᵀ(α⊙y))², adds the B best as a new "
           "block, re-solves the ℓ1²-regularised master by APG and recovers α from the "
           "training errors.",
    "fs-multi": "Each outer iteration adds the B features that best explain the current most "
                "violated labelings, then a bundle method re-optimises the measure's loss.",
    "grfl": "Each iteration samples candidate features, adds the one whose gradient violates "
            "the optimality conditions most, and re-solves the master.",
    "fsa": "Each iteration takes one gradient step on all surviving variables and then keeps "
           "only the M_e largest |β_j|; the schedule M_e shrinks from M to k.",
    "fs-manifold": "Each iteration solves an SVM with the current feature weights p, adds its "
                   "value as a cut, and moves p to the level set between the bounds.",
}
"""One sentence per method: what an iteration does."""


def _fgm(record) -> str:
    """A short account of one outer iteration (or of the refinement), for the teaching view."""
    info = record.info
    if record.refinement and "groups_kept" in info:
        return _cut_to_groups(record, "the ℓ2 model was refit on them")
    if record.refinement:
        before, pruned = info.get("before", []), info.get("pruned", [])
        added = info.get("added", [])
        rounds = int(info.get("splice_rounds", 0))
        paper = record.refinement == "paper"
        step = "Exactly k" if paper else "Refinement"
        if info.get("loss") and not paper:
            step += f" (on the {info['loss'].replace('_', ' ')} loss)"
        if len(added):
            more = "one more feature was added, the one" if len(added) == 1 else \
                f"{len(added)} more features were added, the ones"
            text = (f"{step}: the path converged at {len(before)} features, fewer than "
                    f"asked for; {more} outside it whose entry would lower the objective "
                    f"most (½g_j²/h_j), and the ℓ2 model was refit on all "
                    f"{record.n_selected}")
        else:
            pruned_now = "" if rounds else f", {len(pruned)} pruned,"
            rule = "of largest weight |w_j| in the path's model" if paper else \
                "that backward elimination keeps (each removal lets the others adjust)"
            text = (f"{step}: the path grew to {len(before)} features; the "
                    f"{record.n_selected} {rule} were kept{pruned_now} and the ℓ2 model was "
                    "refit on them")
        if rounds:
            text += (f". Then {rounds} exchange round{'s' if rounds > 1 else ''} (the "
                     "best-scored features outside join, refit, eliminate back to k, "
                     "refit; or one feature swapped for one) lowered the restricted loss "
                     "C·Σl from "
                     f"{info['loss_before']:.5g} to {info['loss_after']:.5g}; in the end "
                     f"{len(pruned)} of the path's features are pruned and "
                     f"{len(info.get('spliced_in', []))} from outside it entered")
        return f"{text} (objective {record.objective:.4g}, {record.inner_steps} steps)."
    names = info.get("block_names", [])
    new = info.get("new_features", [])
    features = info.get("block_features", names)
    shown = ", ".join(names[:6]) + ("…" if len(names) > 6 else "")
    # groups: the block's candidates are groups, what enters the model are their features
    of = "of them" if len(features) == len(names) else \
        f"of their {_count(len(features), 'feature')}"
    if len(new) == 0:
        entering = "all of them were already in the model through earlier blocks, so no " \
                   "feature enters (the new block re-weights them)"
    elif len(new) == len(features):
        entering = "all of them are new to the model" if of == "of them" else \
            f"all {of[3:]} are new to the model"
    else:
        entering = f"{len(new)} {of} {'is' if len(new) == 1 else 'are'} new to the model"
    pinned = int(info.get("pinned", 0))
    took = f"took the top B = {info.get('B', len(names))}"
    if pinned:
        took = f"took the {_count(pinned, 'always-included feature')} and the top B = " \
               f"{info.get('B', len(names) - pinned)} of the others"
    lines = [
        f"Outer iteration {record.iteration + 1}: the worst-case analysis scored every "
        f"candidate by (Xᵀ(α⊙y))² and {took} ({shown}); {entering}.",
        f"The restricted master now has {_count(info.get('n_blocks', '?'), 'block')}; "
        f"{info.get('solver', 'APG')} took {_count(record.inner_steps, 'step')} to objective "
        f"{record.objective:.4g} and {_count(info.get('active_blocks', '?'), 'block')} "
        f"{'carries' if info.get('active_blocks') == 1 else 'carry'} weight.",
    ]
    if record.lower is not None and record.upper is not None:
        gap = record.upper - record.lower
        rel = gap / max(abs(record.upper), 1e-12)
        lines.append(f"Bounds on the optimum: [{record.lower:.4g}, {record.upper:.4g}] "
                     f"(gap {rel:.1%}; the outer loop stops on the objective's relative "
                     "change, not on this gap).")
    lines.append(f"Selected features: {record.n_selected}.")
    if info.get("stop_reason"):
        lines.append(f"Stopped — {info['stop_reason']}.")
    return " ".join(lines)


def _cut_to_groups(record, refit: str) -> str:
    """The cut of a path grown to k groups (FGM or FS-multi with groups)."""
    info = record.info
    kept, on_path = len(info["groups_kept"]), int(info.get("groups_on_path", 0))
    added = len(info.get("added_groups", []))
    grew = (f"the path converged at {on_path} groups, fewer than asked for, and "
            f"{_count(added, 'group')} of best worst-case score joined" if added else
            f"the path grew to {_count(on_path, 'group')}")
    return (f"Exactly k groups: {grew}; the {_count(kept, 'group')} of largest ‖w_g‖ "
            f"({_count(record.n_selected, 'feature')}) were kept and {refit} "
            f"(objective {record.objective:.4g}, {record.inner_steps} steps).")


def _fs_multi(record) -> str:
    info = record.info
    if record.refinement and "groups_kept" in info:
        return _cut_to_groups(record, "the bundle master was solved again on them")
    if record.refinement:
        return (f"Exactly k: the path grew to {_count(len(info.get('before', [])), 'feature')}"
                f"; the {_count(record.n_selected, 'feature')} of largest |w_j| were kept "
                f"({_count(len(info.get('added', [])), 'feature')} of best worst-case score "
                "joined a path that stopped short) and the bundle master was solved again on "
                f"them: objective {record.objective:.4g}, {record.inner_steps} steps.")
    names = info.get("block_names", [])
    shown = ", ".join(names[:6]) + ("…" if len(names) > 6 else "")
    gaps = info.get("inner_gaps", [])
    text = (f"Outer iteration {record.iteration + 1}: scored every feature by (Xᵀs)², s "
            f"weighting the {info.get('K', '?')} most violated labelings found so far, and "
            f"added the top B = {info.get('B', len(names))} ({shown}). The bundle method "
            f"took {record.inner_steps} steps ({info.get('measure', '')} loss), ending "
            f"with a certified gap of {gaps[-1] if len(gaps) else float('nan'):.3g}; "
            f"objective {record.objective:.4g}, {record.n_selected} features selected.")
    if record.lower is not None and record.upper is not None:
        text += f" Bounds on the optimum: [{record.lower:.4g}, {record.upper:.4g}]."
    if info.get("intercept_at_bound"):
        text += " The intercept sits at its bound: raise intercept_bound."
    if record.n_selected == 0:
        text += (" w = 0 is still optimal over these candidates (usual for F1/PRBEP on "
                 "non-negative features while B is small): raise B or C.")
    if info.get("stop_reason"):
        text += f" Stopped — {info['stop_reason']}."
    return text


def _grfl(record) -> str:
    info = record.info
    return (f"Iteration {record.iteration + 1}: among the sampled candidates, "
            f"{info.get('new_feature', 'a feature')} violated the optimality conditions "
            f"most (‖h‖ = {info.get('violation', float('nan')):.4g} > λ = "
            f"{info.get('lam', float('nan')):.4g}) and was added; the master "
            f"({info.get('solver', '')}, {record.inner_steps} steps) reached objective "
            f"{record.objective:.5g} with {_count(info.get('n_learned', 0), 'learned feature')} "
            f"over {_count(record.n_selected, 'input variable')}."
            + _grfl_dense_directions(record))


def _grfl_dense_directions(record) -> str:
    """Why a Fourier model keeps (nearly) every input: said, not left to look like a failed
    selection (textures: 256 of 256 pixels)."""
    info = record.info
    n_inputs = info.get("n_inputs") or 0
    if not str(info.get("family", "")).startswith("fourier") or n_inputs < 10 or \
            record.n_selected < 0.9 * n_inputs:
        return ""
    return (" Nearly every input counts: each learned Fourier feature is a direction over "
            "all the inputs, so the inputs it reads are all of them; on images the gabor "
            "family's local filters read a patch each, and a higher input threshold keeps "
            "only the most important inputs.")


def _fsa(record) -> str:
    info = record.info
    killed = len(info.get("killed", []))
    kept = info.get("M_e", record.n_selected)
    if killed == 0:
        outcome = (f"all {record.n_selected} survive (M_e = {kept}). While the schedule kills "
                   "variables the loss can rise (each one killed gives up its share of the "
                   "fit); once no more are killed, every step lowers it")
    else:
        outcome = (f"the schedule keeps M_e = {kept}: {killed} "
                   f"variable{'s' if killed > 1 else ''} with the smallest |β| "
                   f"{'were' if killed > 1 else 'was'} killed for good")
    eta = info.get("eta")
    step = f" of size η = {eta:.3g}" if eta is not None else ""
    return (f"Iteration {record.iteration + 1}: one gradient step{step} on the "
            f"{info.get('before', record.n_selected)} surviving variables "
            f"(loss {record.objective:.4g}), then {outcome}.")


def _fs_manifold(record) -> str:
    info = record.info
    return (f"Iteration {record.iteration + 1}: the SVM with kernel M(p) gave "
            f"φ = {record.objective:.5g}; its cut enters the model of max_α φ(p, α). "
            f"Bounds [{record.lower:.5g}, {record.upper:.5g}], gap {info['gap']:.3g}; p "
            f"moves to the level set ℓ = {info['level']:.5g}. Manifold/feature kernel "
            f"trace ratio {info['manifold_ratio']:.3g} (τ = {info['tau']:g}, "
            f"ρ = {info['rho']:.3g}); the top {record.n_selected} features are selected."
            + _manifold_routes(info))


def _manifold_routes(info) -> str:
    """How the graph and H were made, when the record says (approximate neighbours: their
    estimated recall)."""
    route, graph = info.get("kernel_route"), info.get("graph_route")
    if route is None or graph is None:
        return ""
    matrix = "n × n Gram matrix" if route == "gram" else "d × d matrix Z = Xᵀ𝓛X"
    found = "exact neighbours" if graph == "exact" else (
        f"approximate neighbours (recall {info.get('graph_recall', float('nan')):.2f})")
    return f" The graph has {found}; H came through the {matrix}."


def _rfe(record) -> str:
    removed = record.info.get("removed")
    if removed is not None:
        what = (f"the linear SVM on the surviving features ranked them by w², and the "
                f"{_count(len(removed), 'feature')} of smallest w² went, leaving "
                f"{record.n_selected}")
    else:
        what = f"the linear SVM was refit on the last {record.n_selected} features"
    return (f"Iteration {record.iteration + 1}: {what}. The value drawn is that SVM's Σ w² "
            f"({record.objective:.4g}): RFE minimises no objective across its steps, and "
            "the sum grows as fewer features carry the fit.")


_EXPLAINERS = {"fgm": _fgm, "fs-multi": _fs_multi, "grfl": _grfl, "fsa": _fsa,
               "fs-manifold": _fs_manifold, "rfe": _rfe}


_FEATURE_ID = re.compile(r"\bx(\d+)\b")


def with_names(text: str, names: Sequence[str] | None) -> str:
    """``text`` with the estimators' positional feature names (x18, x3·x5) replaced by the
    dataset's (r2c2, a word, a gene), so the words match the table and the plots."""
    if names is None:
        return text

    def name(match):
        j = int(match.group(1))
        return str(names[j]) if j < len(names) else match.group(0)

    return _FEATURE_ID.sub(name, text)


def explain(method: str, record, names: Sequence[str] | None = None) -> str:
    """A short account of one iteration of ``method`` (a registry key), or "" when the method
    has no teaching text; features are called by ``names`` (the dataset's) when given. A
    one-vs-rest member's record (``record.member``) says whose fit it is: its counts and
    objective are that class's binary fit's, not the model's."""
    fn = _EXPLAINERS.get(method)
    if fn is None:
        return ""
    member = record.member
    if record.stage == "shared cut":
        return with_names(
            f"Exactly k for all classes: the classes' fits used {record.info['of']} features "
            f"together; the {record.info['kept']} with the largest weights across the classes "
            "(per standard deviation of the feature) were kept and class "
            f"{member}'s model against the rest was refit on them (objective "
            f"{record.objective:.4g}). Its features now: "
            f"{', '.join(f'x{j}' for j in record.selected) or 'none'}.", names)
    text = fn(record)
    if member is not None:
        text = f"Class {member} against the rest (one binary fit per class): {text}"
    return with_names(text, names)


BLANK_SHARE = 0.05  # a feature non-zero in fewer training rows than this share is "blank"


def blank_weight_note(selected, nonzero_rows, n_rows: int, scaling, names) -> str:
    """Why a selected pixel that is blank in almost every image carries weight: a scaling to
    unit norm (or unit mean square) divides each column by its norm, so a column non-zero in
    a handful of rows is magnified until those rows alone decide its weight. "" when no
    selected feature is blank or no such scaling was used."""
    if scaling not in ("norm", "rms") or nonzero_rows is None or n_rows <= 0:
        return ""
    blank = [j for j in selected if nonzero_rows[j] < BLANK_SHARE * n_rows]
    if not blank:
        return ""
    shown = ", ".join(f"{names[j]} (non-zero in {int(nonzero_rows[j])} of {n_rows} rows)"
                      for j in blank[:4])
    more = f" and {len(blank) - 4} more" if len(blank) > 4 else ""
    return (f"**Blank pixels selected:** {shown}{more}. With feature_scaling = "
            f"'{scaling}' every column is divided by its norm, so a pixel that is almost "
            "always blank is magnified until the few images where it is not decide its "
            "weight. Choose feature_scaling = None to weigh pixels as they are.")


GAP_CLOSED = 0.01  # a relative certified gap at most this reads "closed"


def gap_caption(bounded, last=None) -> str:
    """What the certified-gap plot's last value means, in words: ``bounded`` is the last
    record with both bounds, ``last`` the fit's last record (a cut to k or a refinement has
    no bounds of its own). Empty without bounds."""
    if bounded is None or bounded.lower is None or bounded.upper is None:
        return ""
    lower, upper = float(bounded.lower), float(bounded.upper)
    gap = (upper - lower) / max(abs(upper), 1e-300)
    if gap <= GAP_CLOSED:
        return (f"The certified gap closed to {gap:.2%}: the objective {upper:.4g} is within "
                "that of the optimum of the convex relaxation.")
    said = (f"The certified gap ends at {gap:.0%}: the convex relaxation's optimum lies "
            f"between {lower:.4g} (its dual at the last master's α) and the objective "
            f"{upper:.4g}. The lower bound rises only as the path nears that optimum; ")
    reason = str((bounded.info or {}).get("stop_reason") or "")
    if last is not None and last is not bounded and last.refinement:
        measure = getattr(last, "inner_measure", None)
        refit = "" if measure is None else \
            " (its refit is certified on its own, " + (
                "to machine precision)" if float(measure) < 1e-12 else
                f"to a relative gap of {float(measure):.1g})")
        return said + ("this path stopped once it held enough features to cut k from, long "
                       "before: the gap says how far the path is from the relaxation, not how "
                       f"good the {last.n_selected}-feature model is{refit}.")
    if "relative objective change" in reason:
        return said + ("the stop on a small change of the objective (tol) ended the path "
                       "first: a smaller tol and more outer iterations (max_outer) close it.")
    if "max_outer" in reason:
        return said + "the path used its max outer iterations first: raise it to close the gap."
    return said + "the fit ended before it got there."


def ended(estimator, iterations: int, said: str = "") -> str:
    """What a lesson says once its fit has ended: after how many iterations, and why (unless
    ``said``, the last iteration's account, gives the reason already)."""
    reason = getattr(estimator, "stop_reason_", None)
    if not reason and hasattr(estimator, "converged_"):
        reason = "converged" if estimator.converged_ else "its iteration budget is spent"
    why = f" ({reason})" if reason and reason not in said else ""
    return (f"**The fit has ended** after {_count(iterations, 'iteration')}{why}. The page "
            "shows its final model; press **Restart** to run it again from the start.")
