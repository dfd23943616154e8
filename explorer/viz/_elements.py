"""Pure functions from frames/arrays to HoloViews elements. No Panel, no numerics."""

from __future__ import annotations

from collections.abc import Sequence

import holoviews as hv
import numpy as np
import pandas as pd
from bokeh.models import (
    BasicTicker,
    CustomJSHover,
    FixedTicker,
    GlyphRenderer,
    HoverTool,
    LogScale,
)

from ._export import add_svg_save

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
SELECTED_COLOR = "#d62728"
TRUTH_COLOR = "#2ca02c"
YOURS_COLOR = "#000000"  # the user's own setting among reference curves
CHOICE_LABEL = "chosen: best CV mean"  # the accuracy view's diamond (choose_point's default rule)
PINNED_COLOR = "#ff7f0e"  # features the user always includes (orange diamonds)
BANNED_COLOR = "#555555"  # features the user excludes (grey crossed squares)
# reference curves avoid red (selected/kept) and black (the user's setting)
REFERENCE_PALETTE = ["#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"]


def convergence_curve(data: pd.DataFrame, xlabel: str = "inner step (total)",
                      log: bool = True) -> hv.Overlay:
    """Objective per inner step (Fig. 1 of FGM: jumps where an outer iteration starts), and a
    refinement's refit as its own dashed curve (its objective is the restricted model's, not
    the path's). Always Curve * Curve (possibly empty), so a streaming view keeps its layers.

    On a log axis spanning the values (:func:`log_span`): an objective falls by decades in its
    first steps (FGM on digits: 1,700 → 6), and a linear axis drew the rest of the fit, where
    it converges, as a flat line on the floor. Every method's objective is a loss plus a
    penalty, so positive; ``log=False`` (an objective of 0 on degenerate data, which a log
    axis cannot show) draws it on a linear axis."""
    refit = data["refit"].astype(bool) if "refit" in data else np.zeros(len(data), dtype=bool)
    if "member" in data and data["member"].astype(str).nunique() > 1:
        xlabel += " · dotted: the next class"
    low, high = log_span(data["objective"]) if log else (None, None)
    limits = {} if low is None else {"ylim": (low, high)}
    ticks = log_ticks(low, high)
    if ticks is not None:
        limits["yticks"] = ticks
    path = hv.Curve(data[~refit], "step", "objective", label="objective").opts(
        color=PALETTE[0], line_width=2, tools=["hover"], xlabel=xlabel,
        ylabel="objective (log scale)" if log else "objective", logy=log,
        xticks=integer_ticks(), **limits)
    # labelled only when drawn: an empty layer's label would still list it in the legend
    refitted = hv.Curve(data[refit], "step", "objective",
                        label="ℓ2 refit (kept features)" if refit.any() else "").opts(
        color=PALETTE[4], line_width=2, line_dash="dashed", tools=["hover"], logy=log,
        **limits)
    return path * refitted * member_starts(data, "step")


def member_starts(data: pd.DataFrame, x: str) -> hv.VLines:
    """Dotted lines where each class's binary fit starts, after the first, in a one-vs-rest
    fit (its members' records come one class after another on the same axes; ``member``
    column); none for a single fit, but always the layer, so a streaming view keeps its
    layers. Never in the legend: an entry that appears mid-fit (with the second class) left
    BokehJS without a view for the legend ("cannot find a view for Legend", on every later
    update); the x axis's label names them instead (:func:`convergence_curve`)."""
    starts = np.zeros(0)
    if "member" in data and len(data):
        member = data["member"].astype(str).to_numpy()
        change = np.flatnonzero(member[1:] != member[:-1]) + 1
        starts = data[x].to_numpy(dtype=float)[change] - 0.5  # between two classes' points
    return hv.VLines(pd.DataFrame({x: starts}), kdims=[x]).opts(
        color=PALETTE[7], line_dash="dotted", line_width=1.5)


def last_point(data: pd.DataFrame, label: str = "objective") -> hv.Scatter:
    """The latest point of a curve as a marker, so a one-record fit is visible too."""
    tail = data.iloc[-1:] if len(data) else data
    return hv.Scatter(tail, "step", "objective", label=label).opts(
        color=PALETTE[0], size=7, tools=["hover"])


def outer_marks(data: pd.DataFrame) -> hv.Scatter:
    """The first point of each outer iteration, marked (a refinement's refit is not one)."""
    if "refit" in data:
        data = data[~data["refit"].astype(bool)]
    if data.empty:
        firsts = data
    else:
        firsts = data.groupby("outer", as_index=False).first()
    return hv.Scatter(firsts, "step", ["objective", "outer"], label="outer iteration").opts(
        color=PALETTE[3], size=7, marker="triangle", tools=["hover"])


def upper_steps(data: pd.DataFrame) -> hv.Curve:
    """The certified upper bound (best objective so far) at the end of each outer iteration,
    on the objective's inner-step axis."""
    return hv.Curve(data, "step", ("upper", "objective"), label="upper bound").opts(
        color=PALETTE[1], line_dash="dashed", line_width=2, interpolation="steps-post",
        tools=["hover"])


def gap_curve(data: pd.DataFrame) -> hv.Overlay:
    """The certified relative duality gap (upper − lower)/|upper| per outer iteration on a
    log scale (FGM's Theorem 2 bounds; the hover shows both bounds in objective units).
    Iterations before the first lower bound have no gap and draw nothing, so early, loose
    bounds never squash the plot the way the raw bounds did."""
    vdims = ["relative_gap", "lower", "upper"]
    low, high = decades(data["relative_gap"])
    limits = dict(ylim=(low, high), framewise=True)
    if low is not None:  # one label per decade or few (Bokeh's own crowd a single decade)
        exponents = range(round(np.log10(low)), round(np.log10(high)) + 1)
        limits["yticks"] = [10.0 ** e for e in exponents[::max(1, -(-len(exponents) // 6))]]
    curve = hv.Curve(data, "outer", vdims).opts(color=PALETTE[2], line_width=2, logy=True,
                                                tools=["hover"], **limits)
    points = hv.Scatter(data, "outer", vdims).opts(color=PALETTE[2], size=6, logy=True,
                                                   tools=["hover"], **limits)
    return (curve * points * member_starts(data, "outer")).opts(
        xlabel="outer iteration", xticks=integer_ticks(), ylabel="(upper − lower) / upper",
        logy=True)


LEGEND_CORNERS = ("top_right", "top_left", "bottom_left", "bottom_right")
# a compact legend, its background translucent: on a narrow plot Bokeh's own takes 57 % of
# the width and 44 % of the height
LEGEND_OPTS = {"label_text_font_size": "8pt", "label_height": 14, "glyph_height": 14,
               "glyph_width": 16, "label_standoff": 4, "spacing": 0, "padding": 4, "margin": 6,
               "background_fill_alpha": 0.7}
_LEGEND_ROW, _LEGEND_FRAME = 14, 2 * (4 + 6)  # px a row; padding and margin, both sides
_SPACING = 0.005  # the lines are sampled every half per cent of the plot


def emptiest_corner(lines, x_range, y_range, box=(0.5, 0.5), logy: bool = False,
                    points=()) -> str:
    """The corner of the plot (:data:`LEGEND_CORNERS`, the first on a tie) whose ``box``
    (width, height as shares of the axes) holds the least of what is drawn: where a legend
    hides least, as matplotlib's ``loc="best"`` chooses. ``lines`` are (x, y) vertex arrays
    drawn as straight segments, counted by their length inside each box (a long step with no
    vertex in a corner still counts there); ``points`` are (x, y) markers, each counted as a
    few per cent of the plot's width of line."""
    (x0, x1), (y0, y1) = x_range, y_range
    if logy:
        if not (y0 > 0 and y1 > 0):
            return LEGEND_CORNERS[0]
        y0, y1 = np.log10(y0), np.log10(y1)
    if not (np.isfinite([x0, x1, y0, y1]).all() and x1 > x0 and y1 > y0):
        return LEGEND_CORNERS[0]

    def shares(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if logy:
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.where(y > 0, np.log10(y), np.nan)
        fx, fy = (x - x0) / (x1 - x0), (y - y0) / (y1 - y0)
        keep = np.isfinite(fx) & np.isfinite(fy)
        return fx[keep], fy[keep]

    samples = [[], []]
    for x, y in lines:
        fx, fy = shares(x, y)
        if fx.size > 1:  # evenly along the line, in the plot's own proportions
            along = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(fx), np.diff(fy)))])
            at = np.arange(0.0, along[-1] + _SPACING, _SPACING)
            fx, fy = np.interp(at, along, fx), np.interp(at, along, fy)
        samples[0].append(fx)
        samples[1].append(fy)
    for x, y in points:
        fx, fy = shares(x, y)
        samples[0].append(np.repeat(fx, 6))
        samples[1].append(np.repeat(fy, 6))
    fx = np.concatenate(samples[0]) if samples[0] else np.zeros(0)
    fy = np.concatenate(samples[1]) if samples[1] else np.zeros(0)
    shown = (fx >= 0) & (fx <= 1) & (fy >= 0) & (fy <= 1)
    right, top = shown & (fx >= 1.0 - box[0]), fy >= 1.0 - box[1]
    left, bottom = shown & (fx <= box[0]), fy <= box[1]
    counts = {"top_right": np.sum(right & top), "top_left": np.sum(left & top),
              "bottom_left": np.sum(left & bottom), "bottom_right": np.sum(right & bottom)}
    return min(LEGEND_CORNERS, key=counts.__getitem__)


def legend_in_emptiest_corner(plot, element) -> None:
    """HoloViews hook (``hooks=[...]``, run after each update): move the figure's legend to
    :func:`emptiest_corner` of what its glyphs draw. A fixed corner hid data: FS-multi's
    upper bound runs through the top right of its objective plot."""
    figure = plot.state
    legends = getattr(figure, "legend", None)
    if not legends or not legends[0].items:
        return
    lines, points = [], []
    for renderer in figure.renderers:
        if not isinstance(renderer, GlyphRenderer) or not renderer.visible:
            continue
        columns = renderer.data_source.data
        x, y = (_field(getattr(renderer.glyph, name, None)) for name in ("x", "y"))
        if x in columns and y in columns and len(columns[x]):
            drawn = (np.asarray(columns[x], dtype=float), np.asarray(columns[y], dtype=float))
            (lines if type(renderer.glyph).__name__ == "Line" else points).append(drawn)
    if not lines and not points:
        return
    xs = np.concatenate([x for x, _ in lines + points])
    ys = np.concatenate([y for _, y in lines + points])
    frame_height = getattr(figure, "frame_height", None) or max((figure.height or 300) - 77, 100)
    rows = len(legends[0].items)
    box = (0.6, min(0.9, (_LEGEND_ROW * rows + _LEGEND_FRAME) / frame_height))
    legends[0].location = emptiest_corner(
        lines, _extent(figure.x_range, xs), _extent(figure.y_range, ys), box,
        logy=isinstance(figure.y_scale, LogScale), points=points)


# an Overlay's options for a compact legend in the corner that hides least, moved with the data
BEST_LEGEND = {"hooks": [legend_in_emptiest_corner, add_svg_save], "legend_opts": LEGEND_OPTS}


def _field(spec):
    if isinstance(spec, str):
        return spec
    return spec.get("field") if isinstance(spec, dict) else getattr(spec, "field", None)


def _extent(bokeh_range, values) -> tuple[float, float]:
    """A range's (start, end), or the values' own where Bokeh has not set it yet."""
    start, end = getattr(bokeh_range, "start", None), getattr(bokeh_range, "end", None)
    if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end > start:
        return float(start), float(end)
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)


def integer_ticks() -> BasicTicker:
    """Ticks for a count axis (iterations): whole numbers only, never 0.5 or 1.5."""
    return BasicTicker(min_interval=1)


def decades(values) -> tuple[float, float] | tuple[None, None]:
    """A log axis's range over whole decades, with every positive value inside and off its
    edges: Bokeh's own range around one point (a fit certified in one outer iteration) is
    7,000 ± 1.2 on a log axis, and [0.01, 1.2] for a closed gap of 1e-12, which it leaves
    off the plot."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size:
        return None, None
    low = np.floor(np.log10(values.min()) - 0.1)
    high = np.ceil(np.log10(values.max()) + 0.1)
    return 10.0 ** low, 10.0 ** high


def log_span(values, margin: float = 0.05) -> tuple[float, float] | tuple[None, None]:
    """A log axis's range around the positive values, ``margin`` of their span in decades
    (at least 0.05 decade, ±12 %) off each edge: a flat or one-point curve stays inside a
    range of its own, where Bokeh's log range around one point runs below zero."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size:
        return None, None
    low, high = np.log10(values.min()), np.log10(values.max())
    pad = max(margin * (high - low), 0.05)
    return 10.0 ** (low - pad), 10.0 ** (high + pad)


def log_ticks(low, high, most: int = 8) -> list[float] | None:
    """Labels for a log axis over [low, high]: 1, 2 and 5 times the powers of ten inside it,
    or the powers alone (every k-th when still more than ``most``); None below three labels
    (a span within a decade: Bokeh's own linear ticks read better there). Bokeh's log ticks
    label only the powers once the span passes a decade, which left the low end of a curve
    falling from 4 to 0.1 with no label under 1."""
    if low is None or not (0 < low < high):
        return None
    exponents = range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
    for mantissas in ((1, 2, 5), (1,)):
        ticks = [m * 10.0 ** e for e in exponents for m in mantissas
                 if low <= m * 10.0 ** e <= high]
        if len(ticks) <= most:
            break
    else:
        ticks = ticks[::-(-len(ticks) // most)]
    return ticks if len(ticks) >= 3 else None


def log_x(span) -> dict:
    """``xlim`` (and ``xticks`` from :func:`log_ticks`) for a log #features axis: every such
    axis labels 1, 2, 5, 10, 20, 50 …, where Bokeh's own ticks crowded 30 40 50 60 70 80 at
    the right end of one plot and wrote 10⁰ 10¹ under the plot beside it."""
    ticks = log_ticks(*span)
    return {"xlim": span, **({} if ticks is None else {"xticks": ticks})}


def kept_curve(data: pd.DataFrame, schedule: bool = False) -> hv.Overlay:
    """Selected features per iteration, with points (a one-iteration fit shows); FSA adds
    its schedule M_e, on a log axis: it falls from all M variables to k (1,000 → 10) in a few
    dozen of its hundreds of iterations, and a linear axis drew the rest, where the last
    variables are killed, as a flat line on the floor."""
    if schedule:
        low, high = log_span(np.concatenate([data["n_selected"], data["M_e"]]))
        ticks = log_ticks(low, high)
        axis = dict(logy=True, **({} if low is None else {"ylim": (low, high)}),
                    **({} if ticks is None else {"yticks": ticks}))
    else:
        axis = dict(yticks=integer_ticks())
    kept = hv.Curve(data, "iteration", "n_selected", label="selected").opts(
        color=PALETTE[0], line_width=2, tools=["hover"],
        ylabel="#features (log scale)" if schedule else "#features",
        xlabel="iteration", xticks=integer_ticks(), **axis)
    points = hv.Scatter(data, "iteration", "n_selected", label="selected").opts(
        color=PALETTE[0], size=4 if len(data) > 50 else 6)
    classes = member_starts(data, "iteration")
    if not schedule:
        return kept * points * classes
    target = hv.Curve(data, "iteration", ("M_e", "n_selected"), label="schedule M_e").opts(
        color=PALETTE[3], line_dash="dotted", line_width=2)
    return kept * points * target * classes


def pixel_image(values: np.ndarray, image_shape: tuple[int, int], vdim: str) -> hv.Image:
    """``values`` (one per pixel, row-major as the features are numbered) on the image grid as
    the picture is seen: pixel row 0 at the top, column 0 at the left, each pixel a unit cell
    of [0, w] × [0, h]. Every image view draws through here (and marks pixels with
    :func:`pixel_centres`), so no two views can disagree on the orientation."""
    h, w = image_shape
    grid = np.asarray(values, dtype=float).reshape(h, w)
    # hv.Image draws an array's first row at the top: row r spans y ∈ [h − r − 1, h − r];
    # its axes are labelled by pixel row and column (r0 at the top, as the names r0c6 say:
    # the y axis's own numbers ran from 0 at the bottom, and r0c6 read as row 7)
    return hv.Image(grid, bounds=(0, 0, w, h), kdims=["column", "row"], vdims=[vdim]).opts(
        xticks=_pixel_ticks(w, lambda c: c + 0.5), yticks=_pixel_ticks(h, lambda r: h - r - 0.5))


def _pixel_ticks(n: int, at, most: int = 9) -> list[tuple[float, str]]:
    """Ticks naming pixel rows or columns 0 … n − 1 at their centres, at most ``most``."""
    step = max(1, int(np.ceil(n / most)))
    return [(float(at(i)), str(i)) for i in range(0, n, step)]


def pixel_centres(indices, image_shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The (x, y) centres of the pixels numbered ``indices`` in :func:`pixel_image`'s frame."""
    h, w = image_shape
    rows, cols = np.divmod(np.asarray(indices, dtype=int).reshape(-1), w)
    return cols + 0.5, h - rows - 0.5


def feature_at(x: float, y: float, image_shape: tuple[int, int] | None,
               columns: np.ndarray) -> int | None:
    """The feature under the point (x, y) of a view: a pixel of :func:`pixel_image`'s frame
    when ``image_shape`` is given, else the column of :func:`selection_map` (``columns``: the
    features it draws, left to right); None outside them."""
    if image_shape is not None:
        h, w = image_shape
        col, row = int(np.floor(x)), h - 1 - int(np.floor(y))
        return row * w + col if 0 <= col < w and 0 <= row < h else None
    position = int(np.floor(x))
    return int(columns[position]) if 0 <= position < len(columns) else None


def given_title(pinned=(), banned=()) -> str:
    """What the marks of :func:`given_marks` mean, for a view's title (empty when none), on
    the title's one line: Bokeh sizes a title for one line, and a second pushed the first
    off the top of the plot."""
    said = (["◆ always in"] if len(pinned) else []) + (["⊠ excluded"] if len(banned) else [])
    return " · " + ", ".join(said) if said else ""


def given_marks(pinned=(), banned=(), image_shape: tuple[int, int] | None = None,
                at=None) -> tuple[hv.Points, hv.Points]:
    """The features the user pinned and excluded, marked: on the pixel grid of
    :func:`pixel_image` (``image_shape``), else at the (x, y) positions ``at(indices)``
    gives. Unlabelled (the title says what they are, :func:`given_title`): a legend entry that
    comes and goes with the user's choice would restyle the legend in place."""
    def where(indices):
        indices = np.asarray(indices, dtype=int).reshape(-1)
        if image_shape is not None:
            return pixel_centres(indices, image_shape)
        return at(indices) if at is not None else (np.zeros(0), np.zeros(0))

    pin = hv.Points(where(pinned), ["x", "y"]).opts(
        color=PINNED_COLOR, marker="diamond", size=11, fill_alpha=0, line_width=2)
    ban = hv.Points(where(banned), ["x", "y"]).opts(
        color=BANNED_COLOR, marker="square_x", size=10, fill_alpha=0, line_width=2)
    return pin, ban


def weight_image(weights: np.ndarray, image_shape: tuple[int, int], selected: np.ndarray,
                 truth: np.ndarray | None = None, title: str = "|w| on the image grid",
                 names: Sequence[str] | None = None, background: np.ndarray | None = None,
                 signed: bool = False, pinned=(), banned=()):
    """The weights drawn on the image grid with selected pixels (and true ones) marked; the
    hover names the pixel under the cursor by ``names`` (row-major, default ``r<i>c<j>``), the
    name the table and the text use. ``signed``: w on a diverging map (red +, blue −, white 0)
    over ``background`` (the mean image, in grey) where w ≠ 0; else |w| in blues. The
    features the user ``pinned`` and ``banned`` are marked (:func:`given_marks`).

    Always Image * Image * Points * Points * Points * Points (possibly empty), so a streaming
    view keeps its layers."""
    h, w = image_shape
    names = [f"r{i}c{j}" for i in range(h) for j in range(w)] if names is None else \
        [str(n) for n in names]
    pixel = CustomJSHover(args={"names": names, "h": h, "w": w}, code="""
        const c = Math.floor(special_vars.x), r = h - 1 - Math.floor(special_vars.y);
        return (r >= 0 && r < h && c >= 0 && c < w) ? names[r * w + c] : "";""")
    shown = "w" if signed else "|w|"
    hover = HoverTool(tooltips=[("pixel", "$x{custom}"), (shown, "@image")],
                      formatters={"$x": pixel})
    values = np.asarray(weights, dtype=float).reshape(h, w)
    img = values if signed else np.abs(values)
    top = float(np.abs(img).max()) if img.size else 0.0
    top = top if top > 0 else 1.0  # no fit yet: a scale around 1, not around nothing
    clim = (-top, top) if signed else (0.0, top)
    painted = bool(np.any(img != 0))
    if signed and painted:  # only the weighted pixels are painted: the mean image shows
        img = np.where(img != 0, img, np.nan)
    image = pixel_image(img, image_shape, shown).opts(
        cmap="RdBu_r" if signed else "Blues", colorbar=True, tools=[hover], clim=clim,
        clipping_colors={"NaN": (0, 0, 0, 0)}, alpha=1.0 if painted or not signed else 0.0,
        title=title + given_title(pinned, banned), data_aspect=1, xaxis=None, yaxis=None,
        framewise=True)
    back = np.zeros((h, w)) if background is None else \
        np.asarray(background, dtype=float).reshape(h, w)
    base = pixel_image(back, image_shape, "mean").opts(
        cmap="Greys", alpha=0.35 if background is not None else 0.0, colorbar=False)
    # the legend's entries are fixed by the dataset (see selection_map)
    points = hv.Points(pixel_centres(selected, image_shape), label="selected").opts(
        color=SELECTED_COLOR, marker="square", size=6, fill_alpha=0, line_width=2)
    truth = np.asarray([] if truth is None else truth, dtype=int)
    true = hv.Points(pixel_centres(truth, image_shape), label="true" if truth.size else "").opts(
        color=TRUTH_COLOR, marker="x", size=8)
    pin, ban = given_marks(pinned, banned, image_shape)
    # the legend sits below the grid, never over the pixels it explains
    return (base * image * points * true * pin * ban).opts(legend_position="bottom",
                                                           legend_cols=2)


MAP_LABELS = 30  # most feature names written under the map (every column keeps its hover)
_NAME_CHARS = 16


def selection_map(matrix: np.ndarray, columns: np.ndarray, truth: np.ndarray | None = None,
                  xlabel: str = "feature (in order of entry)", ylabel: str = "iteration",
                  title: str = "entries and exits", group_edges=None,
                  names: Sequence[str] | None = None, pinned=()):
    """Iteration × feature map: dark where a feature is selected; true features marked with
    triangles above the map, the user's ``pinned`` ones with diamonds below it
    (:func:`given_marks`; excluded features are never selected, so never drawn); group
    boundaries as vertical segments. ``names`` (one per entry of ``columns``, default
    ``x<j>``) label the axis and the hover, as in every other view.

    Always Image * Scatter * Segments * Rectangles * Points * Points (possibly empty), so a
    streaming view keeps its layers."""
    n_rows, n_cols = matrix.shape if matrix.size else (1, 1)
    data = matrix.astype(float) if matrix.size else np.zeros((1, 1))
    # first iteration at the bottom: the array's first row is drawn on top, so flip it
    image = hv.Image(data[::-1], bounds=(0, 0.5, n_cols, n_rows + 0.5),
                     kdims=[xlabel, ylabel], vdims=["selected"]).opts(
        cmap=["#f7f7f7", "#1f4e79"], clim=(0, 1), title=title + given_title(pinned),
        colorbar=False,
        yticks=integer_ticks(), framewise=True)
    xs = np.zeros(0)
    if truth is not None and len(columns):
        xs = np.flatnonzero(np.isin(columns, truth)) + 0.5
    # a legend's entries fixed by the dataset, not by what this frame holds: an entry that
    # comes and goes restyles the legend in place, which BokehJS reported as "cannot find a
    # view for Legend" on every such update
    true = hv.Scatter((xs, np.full(xs.size, n_rows + 0.5)),
                      label="true feature" if truth is not None and len(truth) else "").opts(
        color=TRUTH_COLOR, marker="inverted_triangle", size=8, framewise=True)
    edges = np.asarray(group_edges if group_edges is not None else [], dtype=float)
    segments = hv.Segments((edges, np.full(edges.size, 0.5), edges,
                            np.full(edges.size, n_rows + 0.5)),
                           kdims=["x0", "y0", "x1", "y1"]).opts(color="#999999", line_width=1,
                                                                framewise=True)
    # one invisible column per feature carries its name, number and time selected to the hover
    columns = np.asarray(columns, dtype=np.int64)
    names = [f"x{j}" for j in columns] if names is None else [str(n) for n in names]
    if len(names) != columns.size:
        raise ValueError(f"selection_map: {len(names)} names for {columns.size} columns")
    left = np.arange(columns.size, dtype=float)
    held = matrix.sum(axis=0).astype(int) if matrix.size else np.zeros(columns.size, int)
    hover = HoverTool(tooltips=[("feature", "@feature"), ("number", "@number"),
                                ("iteration", "$y{0}"), ("selected for", "@held iterations")],
                      point_policy="follow_mouse")
    cells = hv.Rectangles((left, np.full(columns.size, 0.5), left + 1,
                           np.full(columns.size, n_rows + 0.5), names, columns, held),
                          vdims=["feature", "number", "held"]).opts(
        fill_alpha=0, line_alpha=0, tools=[hover], framewise=True)
    # the legend sits right of the map, never over the cells it explains (the latest
    # iterations are its top rows, where a legend inside would sit); below it would take
    # the height the toolbar needs, which then folds its tools into an overflow menu
    drawn = np.asarray(columns, dtype=np.int64)

    def below(indices):
        xs = np.flatnonzero(np.isin(drawn, indices)) + 0.5
        return xs, np.full(xs.size, 0.5)

    pin, ban = given_marks(pinned, (), at=below)
    return (image * true * segments * cells * pin * ban).opts(
        legend_position="right", hooks=[name_the_columns, add_svg_save])


def name_the_columns(plot, element) -> None:
    """HoloViews hook (run after each update): the map's x axis names its columns — every
    column when at most :data:`MAP_LABELS`, else evenly spaced ones — read from the names the
    map's hover layer carries, so the axis and the hover say the same name."""
    cells = [layer for layer in element.values() if isinstance(layer, hv.Rectangles)]
    if not cells or not len(cells[0]):
        return
    names = [str(n) for n in cells[0].dimension_values("feature")]
    step = max(1, -(-len(names) // MAP_LABELS))
    ticks = [j + 0.5 for j in range(0, len(names), step)]
    axis = plot.state.xaxis[0]
    axis.ticker = FixedTicker(ticks=ticks)
    axis.major_label_overrides = {
        t: (n if len(n) <= _NAME_CHARS else n[:_NAME_CHARS - 1] + "…")
        for t, n in zip(ticks, names[::step], strict=True)}
    axis.major_label_orientation = 0.9 if len(ticks) > 8 or max(map(len, names)) > 4 else 0


def accuracy_plot(frame: pd.DataFrame, metric: str, label: str | None = None,
                  methods: Sequence[str] = (), current=None, choice=None,
                  current_label: str | None = None, bounded: bool = False) -> hv.Overlay:
    """Metric versus #selected features on a log axis, one curve (with points, in order of
    #features) per method: ``methods`` (those being swept, each drawn from the start, empty
    until its rows arrive, so the legend's entries do not change as a sweep fills in), then
    any other in ``frame``. Cross-validated rows get a band: the 95 % interval of each mean
    over the repeated folds (``<metric>_low``/``_high``), or ± one standard deviation over the
    folds for rows without it. ``current`` and ``choice`` — (#features, value) or None — mark
    the current model and the chosen point (the best CV mean; always in the legend, empty until
    known; ``current_label`` renames the first, e.g. to say that the current setting is not a
    point of this sweep; ``bounded``: the measure is a share, its bands clipped to
    [0, 1]). Both axes span every point and band drawn, on every frame."""
    label = label or metric
    x = hv.Dimension("swept_n_selected", label="#selected features")
    if frame is None or frame.empty or metric not in frame:
        frame = pd.DataFrame({"method": pd.Series([], dtype=object),
                              "n_selected": pd.Series([], dtype=float),
                              metric: pd.Series([], dtype=float),
                              "value": pd.Series([], dtype=float),
                              "fit_time": pd.Series([], dtype=float)})
        if not methods:
            empty = hv.Curve([], x, metric).opts(xlabel="#selected features", ylabel=label)
            return hv.Overlay([empty])
    frame = frame.rename(columns={"n_selected": "swept_n_selected"})
    for column in ("value", "fit_time"):
        if column not in frame:
            frame[column] = np.nan
    low, high, sd = f"{metric}_low", f"{metric}_high", f"{metric}_sd"
    # a log axis shows no point at 0 features (or a failed point): those are left out
    frame = frame[frame["swept_n_selected"].astype(float) > 0].copy()
    centre = frame[metric].astype(float)
    if low in frame and high in frame:
        lower, upper = frame[low].astype(float).fillna(centre), \
            frame[high].astype(float).fillna(centre)
    elif sd in frame:
        spread = frame[sd].astype(float).fillna(0.0)
        lower, upper = centre - spread, centre + spread
    else:
        lower = upper = None
    if lower is not None:
        if bounded:  # a share stays in [0, 1]
            lower, upper = lower.clip(0.0, 1.0), upper.clip(0.0, 1.0)
        frame["_below"], frame["_above"] = centre - lower, upper - centre
    order = list(dict.fromkeys([*map(str, methods), *map(str, frame["method"].unique())]))
    items = []
    for i, method in enumerate(order):
        rows = frame[frame["method"].astype(str) == method]
        rows = rows.sort_values(["swept_n_selected", "value"], kind="stable")
        color = PALETTE[i % len(PALETTE)]
        if "_below" in rows:
            items.append(hv.Spread(rows, x, [metric, "_below", "_above"]).opts(
                color=color, alpha=0.15, line_alpha=0, framewise=True))
        items.append(hv.Curve(rows, x, metric, label=str(method)).opts(
            color=color, line_width=2, framewise=True))
        items.append(hv.Scatter(rows, x, [metric, "value", "fit_time"],
                                label=str(method)).opts(color=color, size=7,
                                                        tools=["hover"], framewise=True))
    marks = []
    for point, name, marker in ((choice, CHOICE_LABEL, "diamond"),
                                (current, current_label or "current setting", "star")):
        xy = [point] if point is not None else []
        marks.extend(xy)
        items.append(hv.Scatter(xy, x, metric, label=name).opts(
            color=YOURS_COLOR if marker == "star" else "#7f7f7f", marker=marker,
            size=16 if marker == "star" else 13, framewise=True))
    # a dimension name of its own: HoloViews links axes of equal dimensions across plots,
    # and "n_selected" is also the y-axis of the selected-features-per-iteration plot.
    # The ranges from the data on every frame: a DynamicMap keeps its first frame's ranges,
    # and a sweep's later points (RFE at 256 features) fell off an axis cut at 100
    xs = np.concatenate([frame["swept_n_selected"].astype(float).to_numpy(),
                         [float(p[0]) for p in marks]])
    ys = np.concatenate([centre.to_numpy(), [float(p[1]) for p in marks]])
    if "_below" in frame:
        ys = np.concatenate([ys, (centre - frame["_below"]).to_numpy(),
                             (centre + frame["_above"]).to_numpy()])
    limits = log_x(log_span(xs) if np.isfinite(xs).any() else (1, 100))
    ys = ys[np.isfinite(ys)]
    if ys.size:
        pad = max(0.05 * (ys.max() - ys.min()), 1e-3 * max(1.0, abs(ys.max())))
        bottom, top = ys.min() - pad, ys.max() + pad
        if bounded:  # a share's axis shows no value outside [0, 1]: a sliver for the marks
            sliver = 0.01 * (top - bottom)
            bottom, top = max(bottom, -sliver), min(top, 1.0 + sliver)
        limits["ylim"] = (bottom, top)
    return hv.Overlay(items).opts(xlabel="#selected features (log scale)", ylabel=label,
                                  logx=True, legend_position="bottom_right", **limits)


def fit_time_plot(frame: pd.DataFrame, methods: Sequence[str] = ()) -> hv.Overlay:
    """Seconds per fit versus #selected features (log–log), one curve per method, in the
    colours of :func:`accuracy_plot`."""
    x = hv.Dimension("swept_n_selected", label="#selected features")
    if frame is None or frame.empty or "fit_time" not in frame:
        frame = pd.DataFrame({"method": pd.Series([], dtype=object),
                              "n_selected": pd.Series([], dtype=float),
                              "fit_time": pd.Series([], dtype=float)})
    frame = frame.rename(columns={"n_selected": "swept_n_selected"})
    frame = frame[(frame["swept_n_selected"].astype(float) > 0) &
                  (frame["fit_time"].astype(float) > 0)]
    order = list(dict.fromkeys([*map(str, methods), *map(str, frame["method"].unique())]))
    items = [hv.Curve([], x, "fit_time")]
    for i, method in enumerate(order):
        rows = frame[frame["method"].astype(str) == method].sort_values("swept_n_selected")
        items.append(hv.Curve(rows, x, "fit_time", label=str(method)).opts(
            color=PALETTE[i % len(PALETTE)], line_width=2, framewise=True))
    # the ranges from the data every time (a log axis needs positive ones; a DynamicMap
    # keeps the first frame's limits otherwise)
    xs, ts = frame["swept_n_selected"].astype(float), frame["fit_time"].astype(float)
    limits = {**log_x((1, 100)), "ylim": (1e-3, 1)} if frame.empty else \
        {**log_x((max(0.8, xs.min() / 1.25), xs.max() * 1.25)),
         "ylim": (ts.min() / 2, ts.max() * 2)}
    ticks = log_ticks(*limits["ylim"])
    if ticks is not None:
        limits["yticks"] = ticks
    limits["yformatter"] = "%g"  # 0.001 0.01 0.1 s, not 10⁻³ beside the 1 2 5 of the x axis
    return hv.Overlay(items).opts(xlabel="#selected features (log scale)",
                                  ylabel="seconds per fit", logx=True, logy=True,
                                  show_legend=False, **limits)


def schedule_plot(schedules: dict) -> hv.Overlay:
    """FSA schedules M_e versus e for several μ (Fig. 3)."""
    curves = [hv.Curve((np.arange(1, len(s) + 1), s), "iteration e", "M_e",
                       label=f"μ = {mu:g}").opts(
                  color=REFERENCE_PALETTE[i % len(REFERENCE_PALETTE)], alpha=0.7)
              for i, (mu, s) in enumerate(schedules.items())]
    return hv.Overlay(curves).opts(legend_position="top_right", logy=True)


def candidate_bars(frame: pd.DataFrame, title: str = "worst-case analysis",
                   ylabel: str = "(Xᵀ(α⊙y))²") -> hv.Bars:
    """Scores of the chosen block (red) and the runners-up (grey)."""
    data = frame.assign(kind=np.where(frame["chosen"], "chosen block", "runner-up"))
    return hv.Bars(data, ["name"], ["score", "kind"]).opts(
        color="kind", cmap={"chosen block": SELECTED_COLOR, "runner-up": "#bbbbbb"},
        xrotation=60, tools=["hover"], title=title, ylabel=ylabel, show_legend=False)


def block_norm_bars(norms, title: str = "restricted master: ‖ω_t‖ per block") -> hv.Bars:
    """How much weight each generated block carries after the master solve."""
    norms = np.asarray(norms, dtype=float)
    return hv.Bars((np.arange(1, norms.size + 1).astype(str), norms), "block", "‖ω_t‖").opts(
        color=PALETTE[0], tools=["hover"], title=title)


def path_curves(frame: pd.DataFrame, title: str = "coefficient paths (kills end a path)"):
    """One curve per coefficient over iterations (FSA Fig. 2)."""
    if frame.empty:
        return hv.Curve([], "iteration", "value").opts(title=title, xticks=integer_ticks())
    paths = hv.Dataset(frame, ["iteration", "feature"], "value").to(
        hv.Curve, "iteration", "value").overlay("feature").opts(
        hv.opts.Curve(line_width=1, color="#1f4e79", alpha=0.6),
        hv.opts.NdOverlay(show_legend=False))
    # the current coefficients as points: visible from the first iteration on
    now = frame[frame["iteration"] == frame["iteration"].max()]
    current = hv.Scatter(now, "iteration", ["value", "feature"]).opts(
        color="#1f4e79", size=4, tools=["hover"])
    return (paths * current).opts(title=title, show_legend=False, xticks=integer_ticks())
