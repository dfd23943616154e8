"""What every lesson shares: a session state in step mode, Step / Run to the end / Restart, a
poll loop, the line naming the data and its true features, and the paper's equation next to
each panel. Each *Step* releases exactly one outer iteration of the real solver; the page shows
what that iteration did from its record (and from a copy of the model it left)."""

from __future__ import annotations

import numpy as np
import panel as pn
import param

from ... import texts
from .. import _widgets as W
from .._server import in_server, poll_every
from .._state import ExplorerState
from ..views import ConvergenceView, _ensure_backend

PANEL_MIN_WIDTH = 360  # a weight map with its click modes and colorbar


class StepPage(pn.viewable.Viewer):
    """Shared plumbing: a state in step mode, Step/Run/Reset buttons, a poll loop."""

    method = "fgm"
    title = ""

    def __init__(self, dataset: str, params: dict, dataset_params: dict | None = None,
                 **kw):
        super().__init__(**kw)
        _ensure_backend()
        self.state = ExplorerState(live=False)
        with param.parameterized.discard_events(self.state):
            self.state.dataset = dataset
            self.state.method = self.method
        self.state.source.params = dict(dataset_params or {})
        self.state.load()
        for name, value in params.items():
            self.state.set_param(name, value, refit=False)
        self.step_button = W.button("Step", "btn-step", "primary")
        self.run_button = W.button("Run to the end", "btn-run")
        self.reset_button = W.button("Restart", "btn-reset")
        self.step_button.on_click(lambda e: self._advance(self.state.step))
        self.run_button.on_click(lambda e: self._advance(self.state.run))
        self.reset_button.on_click(lambda e: self.restart())
        self.explanation = pn.pane.Markdown("Press **Step** to run the first iteration.",
                                            css_classes=["explanation"],
                                            sizing_mode="stretch_width")
        self.status = pn.pane.Markdown("", css_classes=["status-line"])
        self.data_line = pn.pane.Markdown("", css_classes=["lesson-data"],
                                          sizing_mode="stretch_width")
        self.state.feedback.param.watch(self._on_text, ["explanation", "status", "message"])
        self._callback = None
        self.ended = ""

    def _advance(self, action) -> None:
        """Step or run on, never past the end: a fit that has ended stays on the page (its
        last iteration and why it stopped) until Restart, instead of silently starting anew."""
        if not self.ended:
            action()

    def _end(self) -> None:
        fits = self.state.fits
        if fits.estimator is None or not fits.records:
            return
        feedback = self.state.feedback
        self.ended = texts.ended(fits.estimator, len(fits.records),
                                 feedback.explanation or feedback.message)
        self.step_button.disabled = self.run_button.disabled = True
        self._on_text()

    def restart(self):
        """Start over from scratch (never from the previous model), paused after one step."""
        self.ended = ""
        self.step_button.disabled = self.run_button.disabled = False
        self.state.cancel_all()
        self.state.fits.records = []
        self.on_reset()
        self.state.fit(stepping=True, fresh=True)

    def on_reset(self):  # pragma: no cover - overridden
        pass

    def on_records(self, update):  # pragma: no cover - overridden
        pass

    def _on_text(self, *_):
        said = self.state.feedback.explanation or self.state.feedback.message
        self.explanation.object = f"{said}\n\n{self.ended}" if self.ended else said
        self.status.object = f"**{self.state.feedback.status}**"

    def _tick(self):
        update = self.state.poll()
        if update.reset:
            self.on_reset()
        if update.records or update.finished:
            self.on_records(update)
        if update.finished and not (update.cancelled or update.failed):
            self._end()
        if update.reset or update.records or update.finished:
            self.data_line.object = self.describe_data()

    def describe_data(self) -> str:
        """The lesson's dataset, its true features where known and how many the model holds."""
        data = self.state.data
        if data is None:
            return ""
        text = f"**Data:** {self.state.dataset} · {data.summary()}"
        if data.truth is None:
            return text + " · true features: not known (real data)"
        truth = np.asarray(data.truth)
        records = self.state.records
        found = np.intersect1d(records[-1].selected, truth).size if records else 0
        return text + f" · true features: {truth.size}, found so far: **{found}**"

    def model(self):
        """The model of the last step: a copy sent by the paused fit, or the finished one."""
        fits = self.state.fits
        return fits.snapshot if fits.running and fits.snapshot is not None else fits.estimator

    @staticmethod
    def plot(css: str, height: int = 300) -> pn.pane.HoloViews:
        """An empty plot pane of a lesson, as wide as its column (``css`` names it in tests)."""
        return pn.pane.HoloViews(sizing_mode="stretch_width", height=height, css_classes=[css])

    def convergence_view(self, show_bounds: bool = True) -> ConvergenceView:
        """The objective (and bounds) of the real fit, set up for the lesson's method."""
        view = ConvergenceView(height=260, show_bounds=show_bounds)
        view.configure_for(self.state.settings.cls)
        return view

    @staticmethod
    def panel(title: str, equation: str, view) -> pn.Column:
        """A panel under its title with the paper's equation beside it."""
        caption = f"#### {title}\n`{equation}`" if equation else f"#### {title}"
        return pn.Column(pn.pane.Markdown(caption, css_classes=["equation"],
                                          sizing_mode="stretch_width"),
                         view, sizing_mode="stretch_width")

    @staticmethod
    def panels(*columns) -> pn.FlexBox:
        """Panels side by side while each gets :data:`PANEL_MIN_WIDTH`; a narrower window
        wraps them (squeezed, a weight map's buttons and colorbar ran into the next panel)."""
        for column in columns:
            column.min_width = PANEL_MIN_WIDTH
            column.styles = {"flex": f"1 1 {PANEL_MIN_WIDTH}px"}
        return pn.FlexBox(*columns, flex_wrap="wrap", sizing_mode="stretch_width")

    def _start(self):
        if self._callback is None:
            self._callback = poll_every(self._tick)
        if in_server():
            pn.state.on_session_destroyed(lambda ctx: self.state.close())

    def knob(self, name):
        spec = {s.name: s for s in self.state.settings.specs}[name]

        def changed(n, v):
            self.state.set_param(n, v, refit=False)
            self.restart()

        return W.widget_for(spec, self.state.current_params()[name], changed)




def first_panes(page: StepPage, intro: str, controls) -> list:
    """The top of every lesson: what it shows, its knobs and buttons, the data, the status and
    the account of the last iteration."""
    page.data_line.object = page.describe_data()
    return [pn.pane.Markdown(intro, sizing_mode="stretch_width"), controls, page.data_line,
            page.status, page.explanation]
