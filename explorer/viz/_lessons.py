"""Elements of the lessons: what one iteration of GrFL, FS-multi and FS-Manifold did, drawn
from its record (and, for a decision function, from the model the step left). No Panel."""

from __future__ import annotations

from collections.abc import Sequence

import holoviews as hv
import numpy as np

from ._elements import (
    PALETTE,
    SELECTED_COLOR,
    TRUTH_COLOR,
    integer_ticks,
    pixel_centres,
    pixel_image,
)

SLICE_POINTS = 60  # grid points per axis of a decision function's slice


def violation_bars(violations, title: str) -> hv.Overlay:
    """One draw of GrFL's candidates scored by their violation ‖h‖_{q′}/λ (eq. 10), best
    first; the best (red) enters when it is above 1, the optimality condition's line."""
    values = np.asarray(violations, dtype=float)
    kind = np.where(np.arange(values.size) == 0, "enters", "drawn")
    bars = hv.Bars({"candidate": [str(i + 1) for i in range(values.size)],
                    "violation / λ": values, "kind": kind},
                   ["candidate"], ["violation / λ", "kind"]).opts(
        color="kind", cmap={"enters": SELECTED_COLOR, "drawn": "#bbbbbb"}, tools=["hover"],
        show_legend=False, xlabel="candidate of this draw (best first)")
    line = hv.HLine(1.0).opts(color="black", line_dash="dashed", line_width=1)
    return (bars * line).opts(title=title)


def decision_slice(estimator, X, y, dims: tuple[int, int] = (0, 1), title: str = ""):
    """The model's decision function on the plane of inputs ``dims`` (the others held at
    their median), with the training points of that plane coloured by class."""
    a, b = dims
    dense = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
    lo = np.percentile(dense[:, [a, b]], 1, axis=0)
    hi = np.percentile(dense[:, [a, b]], 99, axis=0)
    xs, ys = np.linspace(lo[0], hi[0], SLICE_POINTS), np.linspace(lo[1], hi[1], SLICE_POINTS)
    grid = np.tile(np.median(dense, axis=0), (SLICE_POINTS * SLICE_POINTS, 1))
    gx, gy = np.meshgrid(xs, ys)
    grid[:, a], grid[:, b] = gx.ravel(), gy.ravel()
    values = np.asarray(estimator.decision_function(grid), dtype=float).reshape(gx.shape)
    bound = float(np.max(np.abs(values), initial=0.0)) or 1.0
    image = hv.Image((xs, ys, values), [f"x{a}", f"x{b}"], "f(x)").opts(
        cmap="RdBu_r", clim=(-bound, bound), colorbar=True, tools=["hover"])
    zero = hv.Contours(_zero_line(xs, ys, values), [f"x{a}", f"x{b}"]).opts(
        color="black", line_width=2)
    classes = np.unique(y)
    points = [hv.Points(dense[y == c][:, [a, b]], [f"x{a}", f"x{b}"], label=f"class {c}").opts(
        color=PALETTE[i % len(PALETTE)], size=3, alpha=0.6) for i, c in enumerate(classes)]
    return hv.Overlay([image, zero, *points]).opts(title=title, show_legend=False)


def _zero_line(xs, ys, values):
    """The f = 0 level set as paths (marching squares on the grid, no extra dependency)."""
    paths = []
    for i in range(len(ys) - 1):
        for j in range(len(xs) - 1):
            cell = values[i:i + 2, j:j + 2]
            if cell.min() > 0 or cell.max() < 0:
                continue
            corners = [(xs[j], ys[i], cell[0, 0]), (xs[j + 1], ys[i], cell[0, 1]),
                       (xs[j + 1], ys[i + 1], cell[1, 1]), (xs[j], ys[i + 1], cell[1, 0])]
            crossings = []
            for k in range(4):
                (x0, y0, v0), (x1, y1, v1) = corners[k], corners[(k + 1) % 4]
                if (v0 > 0) != (v1 > 0) and v0 != v1:
                    t = v0 / (v0 - v1)
                    crossings.append((x0 + t * (x1 - x0), y0 + t * (y1 - y0)))
            if len(crossings) >= 2:
                paths.append(np.array(crossings[:2]))
    return paths


def group_norm_bars(norms, title: str) -> hv.Bars:
    """‖W_g‖ of each learned feature (eq. 7's group norms), in the order they entered."""
    norms = np.asarray(norms, dtype=float)
    return hv.Bars((np.arange(1, norms.size + 1).astype(str), norms), "learned feature",
                   "‖W_g‖").opts(color=PALETTE[0], tools=["hover"], title=title)


def confusion_heatmap(table: dict, title: str) -> hv.Overlay:
    """A labeling's confusion counts against the true labels, as a 2 × 2 grid."""
    cells = [("predicted +", "true +", table["tp"]), ("predicted +", "true −", table["fp"]),
             ("predicted −", "true +", table["fn"]), ("predicted −", "true −", table["tn"])]
    heat = hv.HeatMap(cells, ["ȳ", "y"], "count").opts(cmap="Blues", tools=["hover"],
                                                          colorbar=False, alpha=0.45)
    labels = hv.Labels(cells, ["ȳ", "y"], "count").opts(text_font_size="14pt",
                                                        text_color="#111111")
    return (heat * labels).opts(title=title)


def gap_trace(gaps, title: str) -> hv.Curve:
    """The bundle's certified gap after each of its steps (log scale)."""
    gaps = np.maximum(np.asarray(gaps, dtype=float), 1e-12)
    return hv.Curve((np.arange(1, gaps.size + 1), gaps), "bundle step", "gap").opts(
        logy=True, color=PALETTE[0], line_width=2, tools=["hover"], title=title,
        xticks=integer_ticks())


def level_bounds(records: Sequence, title: str) -> hv.Overlay:
    """The level method's lower and upper bounds and its level ℓ per iteration (Alg. 2)."""
    it = np.array([r.iteration + 1 for r in records], dtype=float)
    lower = np.array([np.nan if r.lower is None else r.lower for r in records], dtype=float)
    upper = np.array([np.nan if r.upper is None else r.upper for r in records], dtype=float)
    level = np.array([r.info.get("level", np.nan) for r in records], dtype=float)
    curves = [hv.Curve((it, upper), "iteration", "objective", label="upper bound").opts(
                  color=PALETTE[0], line_width=2),
              hv.Curve((it, lower), "iteration", "objective", label="lower bound").opts(
                  color=PALETTE[2], line_width=2),
              hv.Curve((it, level), "iteration", "objective", label="level ℓ").opts(
                  color="#888888", line_dash="dashed")]
    return hv.Overlay(curves).opts(title=title, legend_position="right",
                                   xticks=integer_ticks())


def simplex_weights(p, m: int, title: str, image_shape=None, truth=None):
    """The weights p on the capped simplex {p ∈ [0, 1]^d : Σp = m}: on the image grid for
    images, else the largest as bars (the m selected in red, true features marked)."""
    p = np.asarray(p, dtype=float)
    if image_shape is not None and int(np.prod(image_shape)) == p.size:
        image = pixel_image(p, image_shape, "p").opts(
            cmap="Greys", clim=(0, 1), colorbar=True, tools=["hover"], xaxis=None,
            yaxis=None, data_aspect=1, responsive=True, framewise=True)
        top = np.argsort(-p, kind="stable")[:m]
        marks = hv.Points(pixel_centres(top, image_shape), label="selected").opts(
            color=SELECTED_COLOR, size=7, marker="circle")
        return (image * marks).opts(title=title, show_legend=False)
    order = np.argsort(-p, kind="stable")[:max(m + 10, 20)]
    chosen = np.zeros(p.size, bool)
    chosen[np.argsort(-p, kind="stable")[:m]] = True
    truth = set() if truth is None else set(np.asarray(truth).tolist())
    kind = ["selected, true" if chosen[j] and j in truth else
            "selected" if chosen[j] else "not selected" for j in order]
    return hv.Bars({"feature": [f"x{j}" for j in order], "p": p[order], "kind": kind},
                   ["feature"], ["p", "kind"]).opts(
        color="kind", cmap={"selected": SELECTED_COLOR, "selected, true": TRUTH_COLOR,
                            "not selected": "#bbbbbb"}, ylim=(0, 1.05), xrotation=60,
        tools=["hover"], show_legend=False, title=title)


def ratio_curve(records: Sequence, title: str) -> hv.Curve:
    """The manifold term's share of the kernel, trace((τ²/ρ)H) / trace((1−τ)²K_p), per
    iteration (log scale): far below 1, τ and the graph barely move the model."""
    it = np.array([r.iteration + 1 for r in records], dtype=float)
    ratio = np.array([r.info.get("manifold_ratio", np.nan) for r in records], dtype=float)
    ratio = np.where(ratio > 0, ratio, np.nan)
    return hv.Curve((it, ratio), "iteration", "manifold / feature term").opts(
        logy=True, color=PALETTE[3], line_width=2, tools=["hover"], title=title,
        xticks=integer_ticks())
