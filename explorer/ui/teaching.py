"""Teaching pages: FGM's cutting plane one step at a time, FSA's annealing schedule and kills.

Both are thin views over :class:`ExplorerState` in step mode: each *Step* releases exactly one
outer iteration of the real solver, and the page shows what that iteration did from its record.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from .. import viz
from ..methods import FSA
from . import _widgets as W
from ._state import ExplorerState
from .app import in_server, poll_every
from .views import ConvergenceView, SparsityView, _ensure_backend

SCHEDULE_TITLE = "the schedule M_e (eq. 3): area = cost"


class _StepPage(pn.viewable.Viewer):
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
        self.state.dataset_params = dict(dataset_params or {})
        self.state.load()
        for name, value in params.items():
            self.state.set_param(name, value, refit=False)
        self.step_button = W.button("Step", "btn-step", "primary")
        self.run_button = W.button("Run to the end", "btn-run")
        self.reset_button = W.button("Restart", "btn-reset")
        self.step_button.on_click(lambda e: self.state.step())
        self.run_button.on_click(lambda e: self.state.run())
        self.reset_button.on_click(lambda e: self.restart())
        self.explanation = pn.pane.Markdown("Press **Step** to run the first iteration.",
                                            css_classes=["explanation"],
                                            sizing_mode="stretch_width")
        self.status = pn.pane.Markdown("", css_classes=["status-line"])
        self.state.param.watch(self._on_text, ["explanation", "status", "message"])
        self._callback = None

    def restart(self):
        """Start over from scratch (never from the previous model), paused after one step."""
        self.state.cancel_all()
        self.state.records = []
        self.on_reset()
        self.state.fit(stepping=True, fresh=True)

    def on_reset(self):  # pragma: no cover - overridden
        pass

    def on_records(self, update):  # pragma: no cover - overridden
        pass

    def _on_text(self, *_):
        self.explanation.object = self.state.explanation or self.state.message
        self.status.object = f"**{self.state.status}**"

    def _tick(self):
        update = self.state.poll()
        if update.reset:
            self.on_reset()
        if update.records or update.finished:
            self.on_records(update)

    def _start(self):
        if self._callback is None:
            self._callback = poll_every(self._tick)
        if in_server():
            pn.state.on_session_destroyed(lambda ctx: self.state.close())

    def knob(self, name):
        spec = {s.name: s for s in self.state.method_specs()}[name]

        def changed(n, v):
            self.state.set_param(n, v, refit=False)
            self.restart()

        return W.widget_for(spec, self.state.current_params()[name], changed)


class FGMTeachingPage(_StepPage):
    """FGM step by step: which features the worst-case analysis scored highest, which block
    entered, how the restricted master spread weight over the blocks, how the bounds moved."""

    method = "fgm"
    title = "FGM: feature generation by cutting planes"

    def __init__(self, dataset: str = "digits-3v8", B: int = 4, C: float = 20.0, **kw):
        super().__init__(dataset, {"B": B, "C": C, "feature_scaling": "norm", "tol": 1e-3}, **kw)
        self.scores = pn.pane.HoloViews(sizing_mode="stretch_width", height=300,
                                        css_classes=["view-scores"])
        self.norms = pn.pane.HoloViews(sizing_mode="stretch_width", height=300,
                                       css_classes=["view-norms"])
        self.convergence = ConvergenceView(height=260)
        self.convergence.configure_for(self.state.method_class)
        self.sparsity = SparsityView(dataset=self.state.data, height=300)
        self.on_reset()

    def on_reset(self):
        self.convergence.reset()
        empty = viz.candidate_scores(type("R", (), {"info": {}})())
        self.scores.object = viz.candidate_bars(empty, "1 · worst-case analysis (no step yet)")
        self.norms.object = viz.block_norm_bars([], "3 · restricted master (no step yet)")
        self.sparsity.show([], self.state.data)

    def on_records(self, update):
        self.convergence.push(update.records)
        records = self.state.records
        if not records:
            return
        last = records[-1]
        names = self.state.data.names() if self.state.data is not None else None
        frame = viz.candidate_scores(last, names)
        self.scores.object = viz.candidate_bars(
            frame, f"1 · iteration {last.iteration + 1}: scores (Xᵀ(α⊙y))², block in red")
        self.norms.object = viz.block_norm_bars(
            last.info.get("block_norms", []),
            f"3 · master after {last.inner_steps} APG steps: ‖ω_t‖ per block")
        self.sparsity.show(records, self.state.data)

    def __panel__(self):
        self._start()
        intro = pn.pane.Markdown(
            "### How FGM generates features\n"
            "Each **Step** runs one outer iteration of Algorithm 1: (1) score every feature "
            "by (Xᵀ(α⊙y))² with the current dual variables α, (2) add the B best as a new "
            "block, (3) re-solve the ℓ1²-regularised master over all blocks by APG, "
            "(4) recover α from the new training errors. The bounds of Theorem 2 close in "
            "on the optimum.", sizing_mode="stretch_width")
        controls = pn.Row(self.knob("B"), self.knob("C"), self.step_button, self.run_button,
                          self.reset_button, sizing_mode="stretch_width")
        # the panels in the order of the algorithm's steps: 1 score, 2 add the block,
        # 3 re-solve the master; then how the bounds moved
        return pn.Column(intro, controls, self.status, self.explanation,
                         pn.Row(self.scores, pn.Column("#### 2 · the block enters the model",
                                                       self.sparsity),
                                self.norms, sizing_mode="stretch_width"),
                         self.convergence, sizing_mode="stretch_width")


class FSATeachingPage(_StepPage):
    """FSA's annealing: the schedule M_e for the chosen μ, and what each iteration kills."""

    method = "fsa"
    title = "FSA: feature selection with annealing"

    def __init__(self, dataset: str = "fsa-correlated", k: int = 10, mu: float = 30.0,
                 n_iter: int = 200, **kw):
        super().__init__(dataset, {"k": k, "mu": mu, "n_iter": n_iter},
                         dataset_params={"n_samples": 400, "n_features": 200, "k_star": k},
                         **kw)
        self.schedule = pn.pane.HoloViews(sizing_mode="stretch_width", height=320,
                                          css_classes=["view-schedule"])
        self.paths = pn.pane.HoloViews(sizing_mode="stretch_width", height=320,
                                       css_classes=["view-paths"])
        self.convergence = ConvergenceView(height=260, show_bounds=False)
        self.convergence.configure_for(self.state.method_class)
        self.on_reset()

    def _schedules(self):
        p = self.state.current_params()
        M = self.state.data.n_features
        mus = sorted({0.0, 10.0, 100.0, 1000.0, float(p["mu"])})
        curves = {mu: FSA.planned_schedule(M, p["k"], p["n_iter"], mu) for mu in mus}
        plot = viz.schedule_plot(curves)
        mine = hv.Curve((np.arange(1, int(p["n_iter"]) + 1), curves[float(p["mu"])]),
                        "iteration e", "M_e", label=f"your μ = {p['mu']:g}").opts(
            color=viz.YOURS_COLOR, line_width=4)
        return plot * mine

    def on_reset(self):
        self.convergence.reset()
        self.schedule.object = self._schedules().opts(title=SCHEDULE_TITLE,
                                                      **viz.BEST_LEGEND)
        self.paths.object = viz.path_curves(viz.coefficient_paths([]))

    def on_records(self, update):
        self.convergence.push(update.records)
        records = self.state.records
        if records:
            kept = hv.Scatter((np.array([r.iteration + 1 for r in records]),
                               np.array([r.n_selected for r in records])),
                              "iteration e", "M_e", label="kept so far").opts(
                color=viz.SELECTED_COLOR, size=5)
            self.schedule.object = (self._schedules() * kept).opts(
                title=SCHEDULE_TITLE, **viz.BEST_LEGEND)
            self.paths.object = viz.path_curves(viz.coefficient_paths(records))

    def __panel__(self):
        self._start()
        intro = pn.pane.Markdown(
            "### How FSA anneals\n"
            "Each **Step** takes one gradient step on the surviving coefficients and keeps "
            "only the M_e largest |β_j|. Move **μ** to see the schedule change: a large μ "
            "kills most variables in the first iterations (cheap), a small μ keeps them "
            "longer (the cost is the area under the curve).", sizing_mode="stretch_width")
        controls = pn.Row(self.knob("k"), self.knob("mu"), self.knob("n_iter"),
                          self.step_button, self.run_button, self.reset_button,
                          sizing_mode="stretch_width")
        return pn.Column(intro, controls, self.status, self.explanation,
                         pn.Row(self.schedule, self.paths, sizing_mode="stretch_width"),
                         self.convergence, sizing_mode="stretch_width")
