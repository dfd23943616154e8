"""The explorer dashboard: a ``pn.viewable.Viewer`` over :class:`ExplorerState`.

The same object runs under ``panel serve apps/explorer.py`` (in a template, with the URL query
synced both ways and the session's threads stopped when the tab closes) and inside a Jupyter
cell (a plain layout): ``from explorer.ui import ExplorerApp; ExplorerApp()``.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import time

import panel as pn

from ..methods import REGISTRY
from ..metrics import METRICS, metrics_for
from ..viz import selected_table
from . import _widgets as W
from ._data_source import UPLOAD, available_datasets, max_upload_mb
from ._page import page_template
from ._server import in_server, poll_every
from ._state import ExplorerState
from ._tabs import ViewTab, ViewTabs
from .error_control_view import ErrorControlView
from .stability_view import StabilityView, k_of
from .views import AccuracyView, ConvergenceView, SelectedTable, SparsityView

MAP_EVERY_S = 0.25
log = logging.getLogger("explorer.ui")


def reported(method):
    """Run a UI reaction so that a failure is logged with its traceback and shown in the
    page's message box, never swallowed by the event loop."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            log.exception("%s failed", method.__name__)
            self.state.feedback.notify(f"Something went wrong ({method.__name__.strip('_')}): "
                                       f"{type(exc).__name__}: {exc}", "error")
            return None

    return guarded


class DrawBudget:
    """The share of the server's event loop that drawing may take, across all sessions.

    Every session's views are drawn on the one event loop that also carries every click and
    status line. After a drawing of ``d`` seconds the next may start ``d·(1/share − 1)`` later
    (``share = 0.25``: drawing takes at most a quarter of the loop), whichever session it is
    for; the records that wait meanwhile are drawn together. So a classroom of fits degrades into
    coarser curve updates, never into clicks that queue behind plots (a quarter, not a half:
    *Stop* went from 0.59 s to 0.36 s median on `benchmarks/bench_app.py`)."""

    def __init__(self, share: float = 0.25):
        self.share = share
        self.next_free = 0.0

    def ready(self, now: float) -> bool:
        return now >= self.next_free

    def spent(self, start: float) -> None:
        end = time.perf_counter()
        self.next_free = end + (end - start) * (1.0 / self.share - 1.0)


DRAWING = DrawBudget()


def _merged(first, second):
    """Two undrawn updates as one (the records of both, in order)."""
    first.records = list(first.records) + list(second.records)
    return first


def _flat_query(query) -> dict:
    """A URL query ({name: [bytes or str]}, as ``pn.state.session_args`` gives it) as texts."""
    out = {}
    for name, values in (query or {}).items():
        value = values[0] if isinstance(values, (list, tuple)) else values
        out[name] = value.decode() if isinstance(value, bytes) else str(value)
    return out


class ExplorerApp(pn.viewable.Viewer):
    """Load data, pick a method, move its knobs and watch it work.

    Parameters
    ----------
    dataset : Dataset or str, optional
        A dataset object or a catalogue name to start with (default ``digits-3v8``).
    estimator : fitted estimator, optional
        Show this fitted estimator (its history, selection and weights) instead of fitting.
    query : mapping, optional
        A URL query (``pn.state.session_args`` under ``panel serve``): dataset, its knobs,
        method and knobs, applied before the page is first drawn.
    """

    def __init__(self, dataset=None, estimator=None, query=None, **params):
        super().__init__(**params)
        query = _flat_query(query)
        if dataset is None and "dataset" not in query:
            dataset = "digits-3v8"
        self.state = ExplorerState(dataset=dataset, estimator=estimator)
        if query:  # before anything is drawn: the page renders the URL's view once
            self.state.from_query(query, fit=False)
        self.convergence = ConvergenceView()
        self.convergence.configure_for(self.state.settings.cls)
        self.sparsity = SparsityView(dataset=self.state.data)
        self.accuracy = AccuracyView(metric=self.state.metric)
        self.selected = SelectedTable()
        self.stability = StabilityView()
        self.stability.start_button.on_click(lambda e: self._start_stability())
        self.error_control = ErrorControlView()
        self.error_control.start_button.on_click(lambda e: self._start_error_control())
        self._last_map = 0.0
        self._carried = None
        self._page_loaded = not in_server()  # a served page draws once the browser has it
        self._callback = None
        self._closed = False  # the browser tab closed: nothing more is drawn
        self._layout = None
        self._building = False
        self._sweep_after_fit = False
        self._swept_version = -1
        self._accuracy_methods: tuple[str, ...] = ()
        self._build_controls()
        self._build_views()
        self.state.param.watch(self._on_version, "data_version")
        self.state.param.watch(self._on_metric, "metric")
        self.state.param.watch(self._on_baselines, "baselines")
        if estimator is not None:
            self._refresh_all()

    # ================================================================= controls
    def _build_controls(self):
        s = self.state
        names = available_datasets() + ([UPLOAD] if s.dataset == UPLOAD else [])
        self.dataset_select = W.select("Dataset", names, s.dataset, "select-dataset")
        self.dataset_select.param.watch(self._on_dataset_select, "value")
        self.dataset_knobs = pn.Column(sizing_mode="stretch_width")
        self.upload = W.UploadBox("upload-file", max_upload_mb() * 1024 * 1024,
                                  self._on_too_large, self._on_upload)
        self._last_upload = None
        self.label_select = W.select("Label column", [], None, "select-label", visible=False)
        self.label_select.param.watch(self._on_label, "value")
        self.image_input = pn.widgets.TextInput(
            label="Image shape (rows × columns)", placeholder="e.g. 32x32; none: not images",
            css_classes=["input-image-shape"], sizing_mode="stretch_width")
        self.image_input.param.watch(self._on_image_shape, "value")
        self.method_select = W.select("Method", {f"{cls.display_name or n} ({n})": n
                                                 for n, cls in sorted(REGISTRY.items())},
                                      s.method, "select-method")
        self.method_select.param.watch(self._on_method_select, "value")
        self.method_knobs = pn.Column(sizing_mode="stretch_width")
        self._build_knowledge()
        self.live = W.checkbox("Live refit", s.live, "toggle-live")
        self.live.link(s, value="live", bidirectional=True)
        self.run_button = W.button("Run", "btn-run", "primary")
        self.stop_button = W.stop_button("btn-stop")
        self.step_button = W.button("Step", "btn-step", "default")
        self.run_button.on_click(lambda e: self._press(s.run))
        self.stop_button.on_click(lambda e: self._press(s.stop))
        self.stop_button.disabled = not s.fits.running
        self.step_button.on_click(lambda e: self._press(s.step))
        self.sweep_button = W.button("Sweep", "btn-sweep", "default")
        self.sweep_button.on_click(lambda e: self._sweep_now())
        self.metric_select = W.select("Measure", {METRICS[m].label: m for m in METRICS},
                                      s.metric, "select-metric")
        self.metric_select.link(s, value="metric", bidirectional=True)
        self.baseline_select = W.multi_choice("Compare with", self._compare_options(),
                                              self._compared(), "select-baselines")
        self.baseline_select.param.watch(self._on_compare_choice, "value")
        s.param.watch(self._show_compared, ["baselines", "method"])
        self.export = W.download("Export session", "session.json", self._export, "btn-export")
        self.status = pn.pane.Markdown(self._status_text, css_classes=["status-line"],
                                       sizing_mode="stretch_width")
        self.message = pn.pane.Alert(s.feedback.message or " ", alert_type="info",
                                     css_classes=["message"], sizing_mode="stretch_width")
        self.explanation = pn.pane.Markdown("", css_classes=["explanation"],
                                            sizing_mode="stretch_width")
        self.progress = W.progress("sweep-progress")
        self.sweep_status = pn.pane.Markdown("", css_classes=["sweep-status"])
        self.summary = pn.pane.Markdown("", css_classes=["data-summary"])
        self.lesson_link = pn.pane.Markdown("", css_classes=["lesson-link"])
        s.feedback.param.watch(self._on_message, ["message", "message_level"])
        s.feedback.param.watch(self._on_status, ["status", "explanation"])
        s.sweeps.param.watch(self._on_status, ["status", "progress"])
        s.fits.param.watch(self._on_status, ["running", "paused"])
        self._rebuild_dataset_knobs()
        self._rebuild_method_knobs()
        self._on_message()
        self._update_summary()
        self._update_lesson_link()

    def _build_views(self):
        """The tabs under the curves, by name; each draws while shown (:mod:`._tabs`)."""
        self.views = ViewTabs(
            ViewTab("map", "Sparsity map", self.sparsity, draw=self._draw_map_now),
            ViewTab("accuracy", "Accuracy vs #features",
                    pn.Column(self.accuracy, self.sweep_status, self.progress,
                              sizing_mode="stretch_width"),
                    draw=self._draw_accuracy, on_shown=self._on_accuracy_shown),
            ViewTab("selected", "Selected features", self.selected, draw=self._draw_selected),
            ViewTab("stability", "Stability", self.stability, tick=self.stability.tick),
            ViewTab("error control", "Error control", self.error_control,
                    tick=self.error_control.tick),
            css_classes=["view-tabs"])

    def _build_knowledge(self):
        """*What you know*: features always in and never in (names or numbers), penalty
        factors from a CSV file, the sign; also set from the table and by a click on the map."""
        s = self.state
        self.pin_input = pn.widgets.TextInput(
            label="Always include", placeholder="names or numbers, comma-separated",
            css_classes=["input-pin"], sizing_mode="stretch_width")
        self.ban_input = pn.widgets.TextInput(
            label="Exclude", placeholder="names or numbers, comma-separated",
            css_classes=["input-ban"], sizing_mode="stretch_width")
        self.pin_input.param.watch(lambda e: self._on_features("pinned", e.new), "value")
        self.ban_input.param.watch(lambda e: self._on_features("banned", e.new), "value")
        self.factor_upload = pn.widgets.FileInput(accept=".csv", multiple=False,
                                                  css_classes=["upload-factors"],
                                                  sizing_mode="stretch_width")
        self.factor_upload.param.watch(self._on_factors, "value")
        self.factor_clear = W.button("No penalty factors", "btn-clear-factors")
        self.factor_clear.on_click(lambda e: self._press(lambda: s.set_factors(None)))
        self.positive = W.checkbox("Weights ≥ 0 (positive)", s.known.positive,
                                   "toggle-positive")
        self.positive.param.watch(lambda e: self._press(lambda: s.set_positive(e.new)),
                                  "value")
        self.knowledge_line = pn.pane.Markdown("", css_classes=["knowledge-line"],
                                               sizing_mode="stretch_width")
        self.selected.on_knowledge = self._on_knowledge_action
        self.sparsity.on_click = self._on_knowledge_action
        s.param.watch(self._on_knowledge, "knowledge_version")
        self._show_knowledge()

    @reported
    def _on_features(self, kind: str, text: str):
        if not self._building:
            self.state.set_features(kind, text)

    @reported
    def _on_factors(self, event):
        if event.new:
            self.state.set_factors(event.new)

    @reported
    def _given(self) -> tuple[list[int], list[int]]:
        """The features the user pinned and banned, which the views mark."""
        return list(self.state.known.pinned), list(self.state.known.banned)

    def _on_knowledge_action(self, action: str, feature: int):
        known = self.state.known
        edit = {"pin": known.pin, "ban": known.ban, "release": known.release}[action]
        self.state.change_knowledge(edit, feature)

    def _on_knowledge(self, *_):
        self._show_knowledge()
        self._sync_url()
        self._swept_version = -1  # the comparison starts over with it, when looked at
        self._maybe_sweep()
        self._show_selected()

    def _show_knowledge(self):
        """The inputs and the page's line say what every fit is given."""
        s = self.state
        names = s.data.names() if s.data is not None else []
        self._building = True
        try:
            self.pin_input.value = ", ".join(str(names[j]) for j in sorted(s.known.pinned))
            self.ban_input.value = ", ".join(str(names[j]) for j in sorted(s.known.banned))
            self.positive.value = s.known.positive
        finally:
            self._building = False
        said = s.known.describe(names)
        self.knowledge_line.object = f"What you know, given to every fit: {said}" \
            if said else ""

    @property
    def _status_text(self) -> str:
        return f"**{self.state.feedback.status}**"

    @reported
    def _press(self, action):
        action()

    def _rebuild_dataset_knobs(self):
        s = self.state
        values = {**{p.name: p.default for p in s.source.specs(s.dataset)}, **s.source.params}
        self.dataset_knobs.objects = list(W.widgets_for(s.source.specs(s.dataset), values,
                                                        self._on_dataset_knob).values())

    def _rebuild_method_knobs(self):
        """Widgets of the method's knobs, their ranges ending where the data does."""
        s = self.state
        sizes = {}
        if s.data is not None:
            sizes = dict(n_samples=s.data.n_samples, n_features=s.data.n_features)
        self._knobs = W.widgets_for(s.settings.specs, s.current_params(),
                                    self._on_method_knob, **sizes)
        self.method_knobs.objects = list(self._knobs.values())
        self.convergence.configure_for(s.settings.cls)

    def _show_applicable_knobs(self):
        values = self.state.current_params()
        for spec in self.state.settings.specs:
            widget = self._knobs.get(spec.name)
            if widget is not None:
                widget.visible = spec.applies(values)

    # ================================================================= reactions
    @reported
    def _on_dataset_select(self, event):
        if self._building or event.new == UPLOAD:
            return
        self.state.dataset = event.new
        self._rebuild_dataset_knobs()
        self._rebuild_method_knobs()
        self._sync_url()
        self._maybe_fit()
        self._sweep_after_fit = self.state.live and self._accuracy_visible()

    @reported
    def _on_dataset_knob(self, name, value):
        if self.state.set_dataset_param(name, value):
            self._rebuild_method_knobs()  # ranges follow the data's size
            self._sync_url()
            self._maybe_fit()

    @reported
    def _on_method_select(self, event):
        if self._building:
            return
        self.state.method = event.new
        self._rebuild_method_knobs()
        self._sync_url()
        self._maybe_fit()
        self._sweep_after_fit = self.state.live and self._accuracy_visible()

    @reported
    def _on_method_knob(self, name, value):
        if self.state.set_param(name, value):
            self._show_applicable_knobs()
            self._sync_url()

    @reported
    def _on_too_large(self, name, size):
        self.state.feedback.notify(self.state.source.refusal(name, size), "error")

    @reported
    def _on_upload(self, *_):
        if not self.upload.value:
            return
        name, content = list(self.upload.value.items())[-1]  # the newest file
        if isinstance(content, str):  # the widget decodes text/* files
            content = content.encode("utf-8")
        key = (name, len(content), hash(content[:4096]))
        if key == self._last_upload:
            return
        self._last_upload = key
        if self.state.upload(content, name):
            self._after_upload()
            self._sync_url()
        else:  # refused: the drop zone would say "Upload complete" beside the refusal
            self._last_upload = None
            self.upload.clear()

    def _after_upload(self):
        s = self.state
        self._building = True
        try:
            if UPLOAD not in self.dataset_select.options:
                self.dataset_select.options = available_datasets() + [UPLOAD]
            self.dataset_select.value = UPLOAD
            columns = s.source.table_columns()
            self.label_select.options = columns
            self.label_select.visible = bool(columns)
            if columns:
                self.label_select.value = s.source.label_column or columns[-1]
        finally:
            self._building = False
        self._rebuild_dataset_knobs()
        self._rebuild_method_knobs()
        self._maybe_fit()

    @reported
    def _on_image_shape(self, event):
        if self._building:
            return
        if self.state.set_image_shape(event.new):
            self._sync_url()
            self._maybe_fit()
        else:
            self._show_image_shape()

    def _show_image_shape(self):
        """The box says how the data are drawn: their image shape, or nothing."""
        data = self.state.data
        shape = None if data is None else data.image_shape
        self._building = True
        try:
            self.image_input.value = "" if shape is None else f"{shape[0]}x{shape[1]}"
        finally:
            self._building = False

    @reported
    def _on_label(self, event):
        if self._building or not event.new or self.state.source.upload_bytes is None:
            return
        source = self.state.source
        if self.state.upload(source.upload_bytes, source.upload_name, event.new):
            self._sync_url()
            self._maybe_fit()

    def _maybe_fit(self):
        if self.state.live and self.state.data is not None:
            self.state.fit()

    def _on_version(self, *_):
        self.convergence.configure_for(self.state.settings.cls)
        self.selected.set_features(self.state.data.names() if self.state.data is not None
                                   else [])
        self.sparsity.show([], self.state.data, self._given())
        self.convergence.reset()
        self._show_accuracy(methods=self.state.sweep_methods())
        self._show_selected()
        self._update_summary()
        self._refresh_metric_options()
        self._update_lesson_link()
        self._show_image_shape()

    def _update_lesson_link(self):
        self.lesson_link.object = lesson_link(self.state.settings.cls.display_name,
                                              in_server())

    def _on_metric(self, *_):
        self._show_accuracy()
        self._sync_url()

    def _compare_options(self) -> list[str]:
        """The methods *Compare with* offers: every registered one but the method itself
        (its curve is always drawn)."""
        return [name for name in sorted(REGISTRY) if name != self.state.method]

    def _compared(self) -> list[str]:
        return [name for name in self.state.baselines if name != self.state.method]

    def _on_compare_choice(self, event):
        """The user's choice, keeping a compared method that is now the method itself (it
        comes back when another method is picked)."""
        method = self.state.method
        wanted = list(event.new) + ([method] if method in self.state.baselines else [])
        if sorted(wanted) != sorted(self.state.baselines):
            self.state.baselines = wanted

    def _show_compared(self, *_):
        self.baseline_select.param.update(options=self._compare_options(),
                                          value=self._compared())

    @reported
    def _on_baselines(self, *_):
        """A compared method that cannot run on this data is said, not silently dropped."""
        self._sync_url()
        left_out = self.state.sweeps.left_out(self.state.baselines, self.state.data)
        if left_out:
            self.state.feedback.notify("Compare with: " + "; ".join(
                f"{name} cannot run here ({why})" for name, why in left_out.items()),
                "warning")

    def _refresh_metric_options(self):
        data = self.state.data
        if data is None:
            return
        allowed = metrics_for(data.task)
        self.metric_select.options = {METRICS[m].label: m for m in allowed}
        if self.state.metric not in allowed:
            self.state.metric = allowed[0]

    def _on_message(self, *_):
        s = self.state
        self.message.object = s.feedback.message or " "
        self.message.alert_type = {"info": "info", "warning": "warning",
                                   "error": "danger"}[s.feedback.message_level]
        self.message.visible = bool(s.feedback.message)

    def _on_status(self, *_):
        s = self.state
        self.status.object = self._status_text
        self.explanation.object = s.feedback.explanation
        self.sweep_status.object = s.sweeps.status
        self.progress.value = s.sweeps.progress
        self.stop_button.disabled = not s.fits.running
        self.run_button.label = "Resume" if s.fits.paused else "Run"

    def _update_summary(self):
        d = self.state.data
        self.summary.object = "" if d is None else \
            f"`{d.name}` · {d.summary()}" + (f"  \n{d.description}" if d.description else "")

    @reported
    def _sweep_now(self):
        self._swept_version = self.state.data_version
        self.state.sweep()
        self.views.show("accuracy")

    def _export(self):
        return io.StringIO(json.dumps(self.state.export_session(), indent=2))

    # ================================================================= polling
    @reported
    def _tick(self):
        """Apply the worker's events to the views (every ``POLL_MS``).

        Drawing shares the server's one event loop with every click of every session: each
        view update costs a walk over the document's models, so drawing takes turns under
        :data:`DRAWING` (records pile up meanwhile and go out in one batch). *Stop* and the
        status line never queue behind plot updates. Nothing is drawn once the tab closed
        (a stability run's last events reached a destroyed document: a traceback in the
        server's log)."""
        if self._closed:
            return
        now = time.perf_counter()
        update = self.state.poll()
        # a paused (stepped) fit is paced by its user, who waits for this one iteration's
        # pictures, and a finished fit's last frame is all its user will get: both go out
        # on the next tick, whatever the drawing budget (under a class's load the budget
        # went to other sessions, and a page said "done" over empty plots)
        stepping = self.state.fits.paused
        drawn_map = self.views["map"]
        ended = not self.state.fits.running and \
            (self._carried is not None or drawn_map.stale)
        ready = self._page_loaded and (stepping or ended or DRAWING.ready(now))
        # Bokeh sends plot patches as they are rendered but the status text when the callback
        # returns: a tick whose status starts or ends a fit ("running…", "stopped", "done")
        # draws nothing, and a tick's records are drawn on a later tick
        news = update.finished or update.reset
        if self._carried is not None and not news and ready:
            carried, self._carried = self._carried, None
            # one recomputation of the document's model graph for the whole frame, not one
            # per changed model (each walks every model of the page: 0.2 s on a served page,
            # 0.6 s of a stepped iteration's 0.7 s)
            with pn.io.hold(freeze=True):
                if carried.reset:
                    self.convergence.replace(carried.records)
                else:
                    self.convergence.push(carried.records)
                if drawn_map.stale and (stepping or not self.state.fits.running):
                    # the fit's last curves: its map goes with them, not a budget's wait
                    # later (the previous fit's map stayed 3–5 s beside the new fit's "done")
                    self._draw_map()
            DRAWING.spent(now)
        elif drawn_map.stale and drawn_map.drawable and self._carried is None and \
                not news and ready and \
                (stepping or ended or now - self._last_map > MAP_EVERY_S):
            # the map is the slowest view: after the curves, at most every 0.25 s
            with pn.io.hold(freeze=True):
                self._draw_map()
            DRAWING.spent(now)
        if update.reset or update.records:
            self._carried = update if self._carried is None or update.reset else \
                _merged(self._carried, update)
            drawn_map.mark()
        if update.reset and not update.finished:  # a new fit: its curves will come
            self.convergence.one_shot([])
        if update.finished:
            self._show_selected()
            self._show_used_values()
            self.convergence.one_shot(self.state.records, self._method_label())
            if self._sweep_after_fit:
                self._sweep_after_fit = False
                self._maybe_sweep()
        if update.sweep_reset:
            self._show_accuracy(methods=self.state.sweeps.swept)
        elif update.sweep_rows:
            self._show_accuracy()
        self.views.tick()  # a hidden tab's background events wait until it is shown

    def _start_stability(self) -> None:
        """Resamples of the method with the session's knobs, then the methods of *Compare
        with* at the model's k (GrFL's cap searched for it)."""
        s = self.state
        if s.data is None:
            return
        params = dict(s.current_params())
        others = [m for m in s.sweep_methods() if m != s.method]
        self.stability.start(s.method, s.data, params, others,
                             k_of(s.method, params, s.estimator),
                             knowledge=s.knowledge_params())

    @reported
    def _start_error_control(self) -> None:
        """Stability selection, coefficient path, redundancy and knockoffs of the method with
        the session's knobs (its count knob moves over the grid)."""
        s = self.state
        if s.data is not None:
            self.error_control.start(s.method, s.data,
                                     {**s.current_params(), **s.knowledge_params()},
                                     s.estimator)

    def _method_label(self) -> str:
        cls = self.state.settings.cls
        return cls.display_name or self.state.method

    def _show_used_values(self) -> None:
        """Each *auto* knob's slider shows the value the fit used (``<name>_``)."""
        s = self.state
        for name, value in s.settings.used_auto_values(s.estimator, s.data).items():
            if name in self._knobs:
                W.show_used(self._knobs[name], value)

    def _draw_map(self) -> None:
        self.views["map"].draw()

    @reported
    def _draw_map_now(self) -> None:
        self.sparsity.show(self.state.records, self.state.data, self._given())
        self._last_map = time.perf_counter()

    def _show_selected(self) -> None:
        self.views["selected"].draw()

    @reported
    def _draw_selected(self) -> None:
        self.selected.show(selected_table(self.state.estimator, self.state.data,
                                          pinned=self.state.known.pinned))

    def _show_accuracy(self, methods=None) -> None:
        if methods is not None:
            self._accuracy_methods = tuple(methods)
        self.views["accuracy"].draw()

    @reported
    def _draw_accuracy(self) -> None:
        if not self._accuracy_methods and self.state.data is not None:
            # the methods a sweep would draw, from the start: the figure's legend then exists
            # before the first row (a legend added to a figure in a hidden tab was left
            # without a view: "cannot find a view for Legend" on every later layout)
            self._accuracy_methods = tuple(self.state.sweep_methods())
        sweeps = self.state.sweeps
        current, choice = sweeps.marks(self.state.metric)
        differences, verdicts, note = sweeps.differences(self.state.metric)
        self.accuracy.show(sweeps.frame, self.state.metric,
                           methods=self._accuracy_methods, current=current, choice=choice,
                           current_label=sweeps.current_label, differences=differences,
                           method=sweeps.current, verdicts=verdicts, note=note)

    def _accuracy_visible(self) -> bool:
        return self.views["accuracy"].shown

    def _maybe_sweep(self, force: bool = False):
        """Sweep in the background once per data/method version, when its tab is shown (the
        sweep competes with live fits for the CPU, so it waits until someone looks)."""
        if (force or self._accuracy_visible()) and \
                self._swept_version != self.state.data_version:
            self._swept_version = self.state.data_version
            self.state.sweep()

    @reported
    def _on_accuracy_shown(self):
        if not self.state.fits.running:
            self._maybe_sweep()
        else:
            self._sweep_after_fit = True

    def _refresh_all(self):
        self.convergence.reset()
        self.convergence.push(self.state.records)
        self.convergence.one_shot(self.state.records, self._method_label())
        self._draw_map()
        self._show_selected()
        self._show_accuracy()

    def _start_polling(self):
        if self._callback is None:
            self._callback = poll_every(self._tick)

    # ================================================================= URL
    def _sync_url(self):
        if pn.state.location is not None and pn.state.curdoc is not None:
            try:
                pn.state.location.search = self.state.query_string()
            except Exception:  # no browser attached (tests building the layout)
                pass

    @reported
    def _on_load(self):
        """The page is in the browser: write the view into its URL, draw what the fit started
        with the session has recorded (or fit, if it did not start)."""
        self._sync_url()
        self._page_loaded = True
        if self.state.live and self.state.estimator is None and not self.state.fits.running:
            self.state.fit()

    def _start_served(self) -> None:
        """A served session: stop with the page, and start the fit with the session (under a
        class's load a fit that waited for the browser left the page at "Selected: 0
        features" for 8–12 s), drawing only once the page is loaded: a page whose first
        render carried a running fit's curves and map kept the browser busy, and *Stop*
        reached the server 3.5 s after the click."""
        pn.state.on_session_destroyed(lambda ctx: self.close())
        pn.state.onload(self._on_load)
        if self.state.live and self.state.data is not None and self.state.estimator is None:
            self.state.fit()

    # ================================================================= layout
    def controls(self):
        return pn.Column(
            "### Data", self.dataset_select, self.dataset_knobs,
            pn.pane.Markdown(f"Upload a CSV, LIBSVM, .npz, Parquet or MATLAB .mat file (up "
                             f"to {max_upload_mb():g} MB; larger files: `explorer serve "
                             "--data PATH`):", css_classes=["upload-help"]),
            self.upload, self.label_select, self.image_input,
            "### Method", self.method_select, self.lesson_link, self.method_knobs,
            "### What you know", self.pin_input, self.ban_input,
            pn.pane.Markdown("Penalty factors (CSV of name, factor; 0: always in, inf: "
                             "never):", css_classes=["factors-help"]),
            self.factor_upload, self.factor_clear, self.positive, self.live,
            pn.Row(self.run_button, self.stop_button, self.step_button),
            "### Compare", self.metric_select, self.baseline_select, self.sweep_button,
            self.export, sizing_mode="stretch_width", css_classes=["controls"])

    def main(self):
        return pn.Column(self.message, self.status, self.knowledge_line, self.summary,
                         self.explanation,
                         self.convergence, self.convergence.gap_note, self.views,
                         sizing_mode="stretch_width")

    def close(self) -> None:
        """Stop the session's fit, sweep and stability run (the browser tab closed)."""
        self._closed = True
        if self._callback is not None:
            try:
                self._callback.stop()
            except Exception:  # noqa: BLE001 - the document may be gone already
                pass
        self.state.close()
        self.stability.run.close()
        self.error_control.close()

    def __panel__(self):
        if self._layout is not None:
            return self._layout
        self._start_polling()
        self._on_version()
        if in_server():
            self._start_served()
        else:
            if self.state.estimator is not None:
                self._refresh_all()  # a fitted estimator: show its history, do not refit
            elif self.state.live:
                self.state.fit()
        self._layout = pn.Row(pn.Column(self.controls(), width=330),
                              self.main(), sizing_mode="stretch_width")
        return self._layout

    def servable_template(self, title: str = "Feature Selection Explorer"):
        """The app in a template (``panel serve``), or the plain layout elsewhere."""
        if in_server():
            self._start_polling()
            self._on_version()
            self._start_served()
            template = page_template(title, main=[self.main()], sidebar=[self.controls()])
            self._layout = template
            return template
        return self



def lesson_link(method_name: str, served: bool = True) -> str:
    """A link to the lesson of the method (when it has one) and to the lessons' index; in a
    notebook, where no lesson is served beside the cell, where to find them."""
    from .teaching.index import LESSONS

    own = [lesson for lesson in LESSONS if lesson.method == method_name]
    if not served:
        where = f"/{own[0].path}, " if own else ""
        return (f"Lessons: run `explorer serve` and open {where}/lessons "
                "(each method step by step).")
    text = f"[How {method_name} works, step by step](./{own[0].path}) · " if own else ""
    return text + "[all lessons](./lessons)"
