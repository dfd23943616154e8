"""FSA's annealing schedule and kills one step at a time (/teach_fsa)."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn

from ... import viz
from ...methods import FSA
from ._step import StepPage, first_panes

SCHEDULE_TITLE = "the schedule M_e (eq. 3): area = cost"


class FSATeachingPage(StepPage):
    """FSA's annealing: the schedule M_e for the chosen μ, and what each iteration kills."""

    method = "fsa"
    title = "FSA: feature selection with annealing"

    def __init__(self, dataset: str = "fsa-correlated", k: int = 10, mu: float = 30.0,
                 n_iter: int = 200, **kw):
        super().__init__(dataset, {"k": k, "mu": mu, "n_iter": n_iter},
                         dataset_params={"n_samples": 400, "n_features": 200, "k_star": k},
                         **kw)
        self.schedule = self.plot("view-schedule", 320)
        self.paths = self.plot("view-paths", 320)
        self.convergence = self.convergence_view(show_bounds=False)
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
        intro = (
            "### How FSA anneals\n"
            "Each **Step** takes one gradient step on the surviving coefficients and keeps "
            "only the M_e largest |β_j|. Move **μ** to see the schedule change: a large μ "
            "kills most variables in the first iterations (cheap), a small μ keeps them "
            "longer (the cost is the area under the curve).")
        controls = pn.Row(self.knob("k"), self.knob("mu"), self.knob("n_iter"),
                          self.step_button, self.run_button, self.reset_button,
                          sizing_mode="stretch_width")
        return pn.Column(
            *first_panes(self, intro, controls),
            self.panels(self.panel("1 · the schedule (eq. 3)",
                                   "M_e = k + (M − k)·max(0, (N − 2e)/(2eμ + N))", self.schedule),
                        self.panel("2 · gradient step, then keep the M_e largest (Alg. 1)",
                                   "β ← β − η ∂L/∂β;  keep |β_j| among the M_e largest",
                                   self.paths)),
            self.panel("3 · the loss falls", "L(β) = (1/N) Σᵢ ℓ(yᵢ, xᵢᵀβ) + s‖β‖²",
                       self.convergence),
            sizing_mode="stretch_width")
