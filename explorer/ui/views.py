"""The explorer's views as ``pn.viewable.Viewer`` components, each usable on its own.

* :class:`ConvergenceView` — objective per inner step with outer iterations marked, the
  certified bounds where the method has them, and the selected-feature count (FSA: M_e).
  Streamed through ``holoviews.streams.Buffer``: the plot follows new data until the user
  zooms, and keeps the user's zoom after that (HoloViews flips ``following`` on zoom/reset).
* :class:`SparsityView` — |w| on the image grid for pixel data, else the iteration × feature
  map of entries and exits (groups as blocks, true features marked).
* :class:`AccuracyView` — a measure versus #selected features for every swept method.
* :class:`SelectedTable` — the selected features, sortable, with a CSV download.
"""

from __future__ import annotations

import io

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param
from holoviews.streams import Buffer, Pipe, Tap

from .. import viz
from ..metrics import METRICS
from ..texts import blank_weight_note, gap_caption
from . import _widgets as W
from ._live import LiveFit

MAP_COLUMNS = 1000  # features drawn in the entries-and-exits map (the most recent first)


def _ensure_backend() -> None:
    """Load HoloViews' Bokeh backend (needed before any ``hv.opts``), without output."""
    if "bokeh" not in hv.Store.renderers:
        hv.renderer("bokeh")
    if hv.Store.current_backend != "bokeh":
        hv.Store.set_current_backend("bokeh")
    viz.svg_save_everywhere()


def _empty(columns):
    return pd.DataFrame({c: np.array([], dtype=float) for c in columns})


def _whole(draw):
    """``draw`` for a Buffer stream's DynamicMap, always redrawn from all the buffer's rows.
    An element holding the buffer's own DataFrame makes HoloViews *stream* each send: it
    appends the last sent-row-count points of the element's glyph data to the browser's
    source. That is wrong wherever a row is not one point (the upper bound's steps-post
    line has 2n − 1: its line lost its first half) and after an emptied buffer (the previous
    fit's rows stayed). A shallow copy is another object, so each update is a whole one."""
    def whole(data):
        return draw(data.copy(deep=False))
    return whole


def _forget_drawn(*panes) -> None:
    """Empty the panes' DynamicMap caches after their streams were sent new data. A drawn
    plot follows the streams, but a DynamicMap keeps the element of its first draw, and a
    plot drawn from it later (a second Bokeh root: the view displayed again in a notebook
    cell) would start from that first data; emptied, it draws what the streams hold."""
    for pane in panes:
        if isinstance(pane.object, hv.DynamicMap):
            pane.object.reset()


class ConvergenceView(pn.viewable.Viewer):
    """Convergence curves of one fit, streamed record by record (or shown for a fitted
    estimator: ``ConvergenceView(estimator=est)``).

    What is drawn follows what the method records (:meth:`configure`): outer-iteration marks
    only where an outer iteration spans inner steps, the certified upper bound and the
    relative gap (log scale) only for methods with bounds, the schedule M_e only for FSA, so
    every legend entry names something on the plot."""

    # the titles of the three plots — objective (per inner step or per iteration), certified
    # gap, features kept — short, their axes saying per what and on which scale: three share
    # a row, and at 1,100 px "objective per inner step" was cut at "objective per inne"
    TITLES = ("objective", "objective", "certified gap", "#features")

    def __init__(self, estimator=None, height: int = 300, show_bounds: bool = True, **params):
        super().__init__(**params)
        _ensure_backend()
        self.height = height
        self._conv = Buffer(_empty(viz.CONVERGENCE_COLUMNS), length=500_000, index=False)
        self._bounds = Buffer(_empty(viz.BOUNDS_COLUMNS), length=100_000, index=False)
        self._kept = Buffer(_empty(viz.KEPT_COLUMNS), length=200_000, index=False)
        self._step = self._first = 0
        self._layers = None
        self._log = True  # the objective's axis; linear once it must show a value ≤ 0
        self.objective_pane = pn.pane.HoloViews(sizing_mode="stretch_width",
                                                linked_axes=False,
                                                css_classes=["view-convergence"])
        self.bounds_pane = pn.pane.HoloViews(sizing_mode="stretch_width", linked_axes=False,
                                             css_classes=["view-bounds"])
        # visibility is toggled on a wrapper: toggling it on the HoloViews pane itself trips
        # Panel's stylesheet sync inside templates
        self.bounds_box = pn.Column(self.bounds_pane, sizing_mode="stretch_width",
                                    visible=show_bounds)
        self.kept_pane = pn.pane.HoloViews(sizing_mode="stretch_width", linked_axes=False,
                                           css_classes=["view-kept"])
        self.plots = pn.Row(self.objective_pane, self.bounds_box, self.kept_pane,
                            sizing_mode="stretch_width")
        self.note = pn.pane.Markdown("", css_classes=["convergence-note"], visible=False,
                                     sizing_mode="stretch_width")
        # what the certified gap's last value means (a path cut to k never closes it); the
        # page places it (a notebook's view has no caption: a Markdown pane updated after a
        # notebook drew it fetched Panel's loading.css from its CDN, offline an error)
        self.gap_note = pn.pane.Markdown("", css_classes=["gap-note"], visible=False,
                                         sizing_mode="stretch_width")
        self._bounded = self._last = None
        cls = type(estimator) if estimator is not None else None
        self.configure(bounds=getattr(cls, "has_bounds", show_bounds),
                       inner=getattr(cls, "has_inner_trace", True),
                       schedule=getattr(cls, "has_schedule", False))
        if estimator is not None:
            self.push(getattr(estimator, "history_", []))
            self.one_shot(getattr(estimator, "history_", []))

    def one_shot(self, records, name: str = "This model") -> bool:
        """A finished fit of one record (ℓ1-SVM, Fisher, abess: one call, no iterations) gets
        a line of text instead of three plots of one dot each; any other fit, the plots.
        Returns whether the plots are hidden."""
        single = len(records) == 1
        if single:
            r = records[0]
            self.note.object = (f"{name} is fitted in one call, so there is no convergence "
                                f"to draw: objective {r.objective:.5g}, {r.n_selected} "
                                f"features, {r.elapsed:.2f} s.")
        self.note.visible = single
        self.plots.visible = not single
        return single

    def configure(self, *, bounds: bool, inner: bool, schedule: bool) -> None:
        """Choose the layers for a method's records (rebuilt only when they change)."""
        layers = (bool(bounds), bool(inner), bool(schedule), self._log)
        if layers == self._layers:
            return
        self._layers = layers
        log = self._log
        # inner steps count from 0; without them the x axis is the iteration, as in the
        # status line and the selected-features plot (1, 2, …)
        self._first = 0 if inner else 1
        if not any(len(buf.data) for buf in (self._conv,)):
            self._step = self._first
        h = self.height

        def objective(data):
            items = [*viz.convergence_curve(data, "inner step (total)" if inner else
                                            "iteration", log=log),
                     viz.last_point(data, "objective")]
            if inner:
                items.append(viz.outer_marks(data))
            if bounds:
                items.append(viz.upper_steps(self._bounds.data.copy(deep=False)))
            return hv.Overlay(items)

        # one stream per plot, so that a push redraws each plot once: the objective plot
        # reads the bounds' rows (sent first) when its own stream fires
        plot = hv.DynamicMap(_whole(objective), streams=[self._conv])
        legend = inner or bounds
        self.objective_pane.object = plot.opts(hv.opts.Overlay(
            # the log scale is named on the axis: three plots share a row, and a 1,400-px
            # window cut the title at "(log"
            title=self.TITLES[0] if inner else self.TITLES[1],
            responsive=True, height=h, show_legend=legend,
            legend_position="top_right", show_grid=True, logy=log,
            **viz.BEST_LEGEND))
        self.bounds_pane.object = hv.DynamicMap(_whole(viz.gap_curve),
                                                streams=[self._bounds]).opts(
            hv.opts.Overlay(title=self.TITLES[2], responsive=True, height=h,
                            show_legend=False, show_grid=True))
        self.bounds_box.visible = bool(bounds)
        self._caption()
        self.kept_pane.object = hv.DynamicMap(
            _whole(lambda data: viz.kept_curve(data, schedule)), streams=[self._kept]).opts(
            hv.opts.Overlay(title=self.TITLES[3], responsive=True,
                            height=h, show_legend=bool(schedule), logy=bool(schedule),
                            legend_position="top_right", show_grid=True,
                            **viz.BEST_LEGEND))

    def configure_for(self, cls) -> None:
        """:meth:`configure` from a method class's declarations."""
        self.configure(bounds=cls.has_bounds, inner=cls.has_inner_trace,
                       schedule=cls.has_schedule)

    def watch(self, estimator, X, y, **fit_kwargs) -> LiveFit:
        """Fit ``estimator`` in the background and draw its records here as they come (a
        notebook: the cell returns at once; ``.result()`` waits for the model, ``.stop()``
        ends the fit after its current iteration). The view starts over, set up for the
        estimator's method."""
        self.configure_for(type(estimator))
        self.reset()
        return LiveFit(estimator, X, y, [self], **fit_kwargs)

    def show_bounds(self, visible: bool) -> None:
        self.bounds_box.visible = visible
        self._caption()

    def _caption(self, records=None, start_over: bool = False) -> None:
        """The gap plot's caption from the last record with bounds and the last record."""
        if start_over:
            self._bounded = self._last = None
        for r in records or ():
            self._last = r
            if r.lower is not None and r.upper is not None:
                self._bounded = r
        text = gap_caption(self._bounded, self._last) if self.bounds_box.visible else ""
        if text != self.gap_note.object:
            self.gap_note.object = text
        self.gap_note.visible = bool(text)

    def reset(self) -> None:
        self.replace([])
        self.note.visible, self.plots.visible = False, True

    def _axis_for(self, conv: pd.DataFrame, start_over: bool) -> None:
        """A log objective axis while every objective drawn is positive: rebuilt linear when a
        value ≤ 0 arrives (a log axis would leave it off the plot), log again on a new fit
        that allows it."""
        values = conv["objective"].to_numpy(dtype=float)
        positive = bool(np.all((values > 0) | ~np.isfinite(values)))
        log = positive if start_over else self._log and positive
        if log != self._log:
            self._log = log
            bounds, inner, schedule, _ = self._layers
            self.configure(bounds=bounds, inner=inner, schedule=schedule)

    def replace(self, records) -> None:
        """Start over with ``records``: one update per stream, its whole new rows (an emptied
        stream is sent its empty frame, so the plot shows it emptied)."""
        self._step = self._first
        frames = viz.convergence_frames(records, self._step)
        self._axis_for(frames[0], start_over=True)
        self._step = frames[3]
        self._caption(records, start_over=True)
        order = ((self._bounds, frames[1]), (self._conv, frames[0]), (self._kept, frames[2]))
        for buf, frame in order:  # the bounds first: the objective plot reads them
            had_rows = len(buf.data) > 0
            if had_rows:
                with param.edit_constant(buf):
                    buf.data = buf.data.iloc[:0]
            if len(frame):
                buf.send(frame)
            elif had_rows:
                buf.send(buf.data)  # its empty frame, with its columns
        _forget_drawn(self.objective_pane, self.bounds_pane, self.kept_pane)

    def push(self, records) -> None:
        """Append the rows of new records to the streams (each stream updates once)."""
        conv, bounds, kept, step = viz.convergence_frames(records, self._step)
        self._axis_for(conv, start_over=False)
        self._step = step
        self._caption(records)
        for buf, frame in ((self._bounds, bounds), (self._conv, conv), (self._kept, kept)):
            if len(frame):  # the bounds first: the objective plot reads them
                buf.send(frame)
        _forget_drawn(self.objective_pane, self.bounds_pane, self.kept_pane)

    @property
    def n_points(self) -> int:
        return len(self._conv.data)

    def __panel__(self):
        return pn.Column(self.note, self.plots, sizing_mode="stretch_width")


NAMES_HEIGHT = 80  # px under the entry map for its rotated feature names


class SparsityView(pn.viewable.Viewer):
    """Which features are selected: image grid for pixels, else entries and exits."""

    def __init__(self, estimator=None, dataset=None, height: int = 320, **params):
        super().__init__(**params)
        _ensure_backend()
        self.dataset = dataset
        self.height = height
        self._kind = None
        self.pane = pn.pane.HoloViews(sizing_mode="stretch_width", linked_axes=False,
                                      css_classes=["view-sparsity"])
        self.note = pn.pane.Markdown("", css_classes=["weight-note"],
                                     sizing_mode="stretch_width", visible=False)
        # a click on the map: which feature, then what the user said it does with it
        self.on_click = None  # the app's: on_click(action, feature)
        self.click_action = pn.widgets.RadioButtonGroup(
            value="nothing",
            options={"click: nothing": "nothing", "click: always include": "pin",
                     "click: exclude": "ban", "click: neither": "release"},
            css_classes=["map-click"], color="default")
        self._rebuild()
        if estimator is not None:
            self.show(getattr(estimator, "history_", []), dataset)

    @staticmethod
    def _render(data):
        records, ds = data["records"], data["dataset"]
        if ds is None:
            return viz.selection_map(np.zeros((0, 0)), np.zeros(0), title="no data")
        truth = ds.truth
        pinned, banned = data.get("given", ((), ()))
        if not records:
            if ds.image_shape is not None:
                return viz.weight_image(np.zeros(ds.n_features), ds.image_shape, [], truth,
                                        names=ds.names(), background=ds.mean_row(),
                                        signed=True, pinned=pinned, banned=banned)
            return viz.selection_map(np.zeros((0, 0)), np.zeros(0), truth, title="no fit yet")
        last = records[-1]
        if SparsityView._kind_of(ds) == "image":
            weights = np.zeros(ds.n_features)
            w = last.info.get("weights") if last.info else None
            label = last.info.get("weights_label") if last.info else None
            # a model's own weights are signed; an importance or a selection is not
            signed = label is None and w is not None and len(w) == last.selected.size
            weights[last.selected] = w if signed else (
                np.abs(w) if w is not None and len(w) == last.selected.size else 1.0)
            member = last.member
            shown = label or ("w (red +, blue −)" if signed else "|w|")
            # a member's title names its class, not the iteration (the explanation does):
            # the image's frame is as narrow as the picture
            title = (f"{shown}, iteration {last.iteration + 1}" if member is None
                     else f"class {member} vs rest: {shown}")
            return viz.weight_image(weights, ds.image_shape, last.selected, truth,
                                    names=ds.names(), background=ds.mean_row(), signed=signed,
                                    title=title,
                                    pinned=pinned, banned=banned)
        order = None
        edges = None
        if ds.groups is not None and not isinstance(ds.groups, (list, tuple)):
            order = np.asarray(ds.groups)
        matrix, columns = viz.selection_matrix(records, ds.n_features, order=order,
                                               max_columns=MAP_COLUMNS)
        if order is not None and columns.size:
            g = order[columns]
            edges = (np.flatnonzero(np.diff(g)) + 1).tolist()
        ever = viz.ever_selected(records)
        shown = (f"{ever} features ever selected" if columns.size == ever else
                 f"{columns.size} of the {ever} features ever selected (the latest)")
        names = ds.names()
        if data.get("columns") is not None:  # what a click on the map will read
            data["columns"][:] = [columns]
        return viz.selection_map(matrix, columns, truth, group_edges=edges,
                                 title=f"entries and exits: {shown}",
                                 names=[names[j] for j in columns], pinned=pinned)

    @staticmethod
    def _kind_of(ds) -> str:
        if ds is not None and ds.image_shape is not None and \
                int(np.prod(ds.image_shape)) == ds.n_features:
            return "image"
        return "map"

    def _rebuild(self) -> None:
        """A fresh DynamicMap whenever the kind of picture changes (image ↔ map)."""
        self._kind = self._kind_of(self.dataset)
        self._drawn_columns = [np.zeros(0, dtype=int)]  # the map's columns, as last drawn
        self._pipe = Pipe(data={"records": [], "dataset": self.dataset,
                                "columns": self._drawn_columns})
        if self._kind == "image":  # square pixels, as the picture is: a figure of fixed
            # size (stretched to the page's width, its canvas cropped the grid and pushed
            # the toolbar aside)
            sizing = dict(frame_height=self.height - 60, frame_width=self.height - 60)
            self.pane.sizing_mode = "fixed"
        else:  # features along the width: as wide as the page allows, and taller by the
            # names written under it (the frame keeps the height its toolbar needs)
            sizing = dict(responsive=True, height=self.height + NAMES_HEIGHT)
            self.pane.sizing_mode = "stretch_width"
        # the tap is one of the map's own streams: a Tap whose source is a DynamicMap of
        # overlays is never linked to the plot (HoloViews 1.23); the map redraws on a tap
        self._tap = Tap(x=None, y=None)
        self._tap.add_subscriber(self._clicked)
        self.pane.object = hv.DynamicMap(lambda data, x=None, y=None: self._render(data),
                                         streams=[self._pipe, self._tap]).opts(
            hv.opts.Image(**sizing), hv.opts.Overlay(**sizing))

    def _clicked(self, x=None, y=None) -> None:
        if x is None or y is None or self.click_action.value == "nothing" or \
                self.on_click is None or self.dataset is None:
            return
        feature = viz.feature_at(x, y, self.dataset.image_shape if self._kind == "image"
                                 else None, self._drawn_columns[0])
        if feature is not None:
            self.on_click(self.click_action.value, feature)

    def show(self, records, dataset=None, given=((), ())) -> None:
        """Draw ``records`` over ``dataset`` with the (pinned, banned) features the user
        ``given`` marked; another dataset gets a figure of its own (its legend's entries —
        true features or not — are fixed per dataset)."""
        if dataset is not None and dataset is not self.dataset:
            self.dataset = dataset
            self._rebuild()
        elif self._kind_of(self.dataset) != self._kind:
            self._rebuild()
        self._pipe.send({"records": list(records), "dataset": self.dataset,
                         "columns": self._drawn_columns,
                         "given": tuple(sorted(g) for g in given)})
        _forget_drawn(self.pane)
        self.note.object = self._note(records, self.dataset)
        self.note.visible = bool(self.note.object)

    @staticmethod
    def _note(records, ds) -> str:
        """Why blank pixels carry weight, when a scaling made them (image data)."""
        if not records or ds is None or SparsityView._kind_of(ds) != "image":
            return ""
        last = records[-1]
        return blank_weight_note(last.selected, ds.nonzero_rows(), ds.n_samples,
                                 (last.info or {}).get("scaling"), ds.names())

    def __panel__(self):
        return pn.Column(self.click_action, self.pane, self.note, sizing_mode="stretch_width")


class AccuracyView(pn.viewable.Viewer):
    """A cross-validated measure versus #selected features, one curve per swept method with
    the 95 % interval of its mean over the repeated folds as a band, the current setting and
    the chosen point (best CV mean) marked; below it the current method minus each other method
    at the same k (fold for fold, intervals corrected for overlapping training sets, zero
    marked) with the verdicts in words; seconds per fit; the sweep's rows and every fold's
    scores as CSV."""

    TITLE = "cross-validated measure vs #features (band: 95 % CI)"
    DIFFERENCES_TITLE = "current method minus each other one at the same k (95 % CIs)"

    def __init__(self, frame: pd.DataFrame | None = None, metric: str = "accuracy",
                 height: int = 320, **params):
        super().__init__(**params)
        _ensure_backend()
        self.metric = metric
        self.methods: tuple[str, ...] = ()
        self.frame = frame if frame is not None else pd.DataFrame()
        self.differences = pd.DataFrame()
        empty = (self.frame, metric, (), None, None, None)
        self._pipe = Pipe(data=empty)
        self.pane = pn.pane.HoloViews(
            linked_axes=False, object=hv.DynamicMap(lambda data: viz.accuracy_plot(
                data[0], data[1], METRICS[data[1]].label if data[1] in METRICS else data[1],
                methods=data[2], current=data[3], choice=data[4], current_label=data[5],
                bounded=data[1] in METRICS and METRICS[data[1]].proportion),
                streams=[self._pipe]).opts(hv.opts.Overlay(
                    responsive=True, height=height, title=self.TITLE,
                    show_grid=True, **viz.BEST_LEGEND)),
            sizing_mode="stretch_width", css_classes=["view-accuracy"])
        self._diff_pipe = Pipe(data=(pd.DataFrame(), "", metric, ()))
        self.difference_pane = pn.pane.HoloViews(
            linked_axes=False, object=hv.DynamicMap(lambda data: viz.difference_plot(
                data[0], data[1], METRICS[data[2]].label if data[2] in METRICS else data[2],
                others=data[3], points=data[2] not in METRICS or METRICS[data[2]].proportion),
                streams=[self._diff_pipe]).opts(
                hv.opts.Overlay(responsive=True, height=240, title=self.DIFFERENCES_TITLE,
                                show_grid=True, **viz.BEST_LEGEND)),
            sizing_mode="stretch_width", css_classes=["view-differences"])
        self.verdicts = pn.pane.Markdown("", css_classes=["sweep-verdicts"],
                                         sizing_mode="stretch_width")
        self._times = Pipe(data=empty)
        self.times = pn.pane.HoloViews(
            linked_axes=False, object=hv.DynamicMap(
                lambda data: viz.fit_time_plot(data[0], methods=data[2]),
                streams=[self._times]).opts(hv.opts.Overlay(
                    responsive=True, height=240, title="seconds per fit (mean over the folds)",
                    show_grid=True)),
            sizing_mode="stretch_width", css_classes=["view-fit-time"])
        self.download = W.download("Download sweep CSV", "sweep.csv", self._csv,
                                   "download-sweep")
        self.download_folds = W.download("Download every fold CSV", "sweep_folds.csv",
                                         self._folds_csv, "download-folds")

    def show(self, frame: pd.DataFrame, metric: str | None = None,
             methods: tuple[str, ...] | None = None, current=None, choice=None,
             current_label: str | None = None, differences: pd.DataFrame | None = None,
             method: str | None = None, verdicts: list[str] | None = None,
             note: str = "") -> None:
        """Draw ``frame``; ``methods`` (the ones being swept) get their curves and legend
        entries from the start, empty until their rows arrive; ``current`` and ``choice``
        are (#features, measure) points or None; ``current_label`` names the current
        setting's mark (say why it has none); ``differences`` (the core's frame of
        ``method`` minus each other method) and ``verdicts`` (their words) fill the panel
        below; ``note`` says why there are none."""
        self.metric = metric or self.metric
        if methods is not None:
            self.methods = tuple(methods)
        self.frame = frame
        data = (frame, self.metric, self.methods, current, choice, current_label)
        self._pipe.send(data)
        self._times.send(data)
        self.differences = differences if differences is not None else pd.DataFrame()
        method = method or (self.methods[0] if self.methods else "")
        self._diff_pipe.send((self.differences, method, self.metric, self.methods))
        self.verdicts.object = self._verdict_text(method, verdicts, note)
        _forget_drawn(self.pane, self.times, self.difference_pane)

    def _verdict_text(self, method: str, verdicts: list[str] | None, note: str = "") -> str:
        if note and not verdicts:  # why there is none, from the sweep's state
            return f"*{note}.*"
        if verdicts:
            return "\n".join(f"* {line}" for line in verdicts)
        if self.frame is None or self.frame.empty:
            return ""
        return (f"*No difference to show yet: {method or 'the current method'} and another "
                "method that can be asked for k need rows at the same k.*")

    def _csv(self):
        buf = io.StringIO()
        frame = self.frame.drop(columns=[c for c in self.frame.columns
                                         if c in ("supports", "estimator") or
                                         c.endswith("_folds")])
        frame.to_csv(buf, index=False)
        buf.seek(0)
        return buf

    def _folds_csv(self):
        from ..experiments import folds_frame

        buf = io.StringIO()
        frame = folds_frame(self.frame)
        frame["selection"] = [" ".join(map(str, s)) for s in frame["selection"]]
        frame.to_csv(buf, index=False)
        buf.seek(0)
        return buf

    def __panel__(self):
        return pn.Column(self.pane, self.difference_pane, self.verdicts, self.times,
                         pn.Row(self.download, self.download_folds),
                         sizing_mode="stretch_width")


class SelectedTable(pn.viewable.Viewer):
    """Selected features (name, weight, weight × the feature's sd, group, true?) as a plain
    HTML table, sorted by the user's choice of column (by default the weight times the
    feature's standard deviation: features in different units compare), with a CSV download
    of every row.

    A plain table, not Tabulator: Tabulator inside the explorer's dynamic tabs (and the
    stretch-width template) resized itself in a loop and froze the browser tab."""

    # (column, ascending, by absolute value); the first is the table's own order
    SORTS = {"largest |weight × sd| first": ("weight_per_sd", False, True),
             "largest |weight| first": ("abs_weight", False, False),
             "feature number": ("feature", True, False), "name": ("name", True, False),
             "weight": ("weight", False, False)}

    def __init__(self, frame: pd.DataFrame | None = None, max_rows: int = 200, **params):
        super().__init__(**params)
        self.max_rows = max_rows
        self.frame = frame if frame is not None else pd.DataFrame(
            columns=["feature", "name", "weight", "abs_weight"])
        self.sort = W.select("Sort by", list(self.SORTS), next(iter(self.SORTS)),
                             "sort-selected", width=220, sizing_mode="fixed")
        self.sort.param.watch(lambda *_: self._draw(), "value")
        self.table = pn.pane.DataFrame(self.frame, index=False, max_rows=max_rows,
                                       float_format="{:.6g}".format, escape=True,
                                       css_classes=["view-selected"],
                                       sizing_mode="stretch_width")
        self.note = pn.pane.Markdown("", css_classes=["selected-note"])
        self.download = W.download("Download CSV", "selected_features.csv", self._csv,
                                   "download-selected")
        # what the user knows, from the table: the app sets ``on_knowledge(action, feature)``
        self.on_knowledge = None
        # any feature of the data, typed by (part of) its name: pinning one the model already
        # holds changes nothing, so the table's own rows were not enough
        self.pick = W.autocomplete("Feature (type a name)", [], "pick-feature", width=260,
                                   placeholder="e.g. r3c5")
        self._positions: dict[str, int] = {}
        self.pin_button = W.button("Always include", "btn-pin", "primary",
                                   align="end")
        self.ban_button = W.button("Exclude", "btn-ban", "danger", align="end")
        self.release_button = W.button("Neither", "btn-release", align="end")
        for button, action in ((self.pin_button, "pin"), (self.ban_button, "ban"),
                               (self.release_button, "release")):
            button.on_click(lambda e, action=action: self._knowledge(action))
        self._draw()

    def set_features(self, names) -> None:
        """Offer every feature of the data (``names``, by position) to pin or exclude."""
        labels = [f"{name} ({j})" for j, name in enumerate(names)]
        self._positions = {label: j for j, label in enumerate(labels)}
        self.pick.options = labels
        if self.pick.value not in self._positions:
            self.pick.value = ""

    def _knowledge(self, action: str) -> None:
        feature = self._positions.get(self.pick.value)
        if self.on_knowledge is not None and feature is not None:
            self.on_knowledge(action, feature)

    def sorted_frame(self) -> pd.DataFrame:
        column, ascending, absolute = self.SORTS[self.sort.value]
        if column not in self.frame.columns or self.frame.empty:
            return self.frame
        return self.frame.sort_values(column, ascending=ascending, kind="stable",
                                      key=np.abs if absolute else None)

    def _draw(self) -> None:
        frame = self.sorted_frame()
        self.table.object = frame
        n = len(frame)
        self.note.object = ("" if n <= self.max_rows else
                            f"The first {self.max_rows} of {n} selected features; the CSV "
                            "has them all.")

    def _csv(self):
        buf = io.StringIO()
        self.sorted_frame().to_csv(buf, index=False)
        buf.seek(0)
        return buf

    def show(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._draw()

    def __panel__(self):
        return pn.Column(pn.Row(self.sort, self.download),
                         pn.Row(self.pick, self.pin_button, self.ban_button,
                                self.release_button),
                         self.note, self.table, sizing_mode="stretch_width")
