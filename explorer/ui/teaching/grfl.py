"""GrFL's column generation one step at a time (/teach_grfl)."""

from __future__ import annotations

import panel as pn

from ... import viz
from ._step import StepPage, first_panes


class GrFLTeachingPage(StepPage):
    """GrFL step by step on xor: each step draws candidate Fourier pairs, scores them by their
    violation against λ, adds the best; the decision function on a 2-D slice and the learned
    features' group norms follow."""

    method = "grfl"
    title = "GrFL: learning features by column generation"

    def __init__(self, dataset: str = "xor", max_features: int = 12, n_candidates: int = 50,
                 **kw):
        super().__init__(dataset, {"max_features": max_features,
                                   "n_candidates": n_candidates},
                         dataset_params={"n_samples": 400, "n_features": 10}, **kw)
        self.draw = self.plot("view-draw")
        self.slice = self.plot("view-slice")
        self.norms = self.plot("view-norms")
        self.convergence = self.convergence_view(show_bounds=False)
        self.on_reset()

    def on_reset(self):
        self.convergence.reset()
        self.draw.object = viz.violation_bars([], "1 · candidates drawn (no step yet)")
        self.slice.object = viz.group_norm_bars([], "2 · decision function (no step yet)")
        self.norms.object = viz.group_norm_bars([], "3 · learned features (no step yet)")

    def on_records(self, update):
        self.convergence.push(update.records)
        records = self.state.records
        if not records:
            return
        last = records[-1]
        info = last.info
        self.draw.object = viz.violation_bars(
            info.get("candidate_violations", []),
            f"1 · step {last.iteration + 1}: the draw's best")
        model, data = self.model(), self.state.data
        if model is not None and data is not None:
            self.slice.object = viz.decision_slice(
                model, data.X, data.y, (0, 1),
                "2 · f(x) on the plane (x0, x1)")
        self.norms.object = viz.group_norm_bars(
            info.get("group_norms", []),
            f"3 · master after {last.inner_steps} steps")

    def __panel__(self):
        self._start()
        intro = ("### How GrFL learns features\n"
                 "Each **Step** runs one iteration of Algorithm 1: draw `n_candidates` random "
                 "Fourier pairs [cos vᵀx, sin vᵀx], score each by how much it violates the "
                 "optimality conditions of the current model (its ‖h‖ relative to λ), add the "
                 "best if it exceeds 1, and re-solve the group-sparse master over the learned "
                 "features. On xor only the first two inputs matter: watch the decision function "
                 "bend to the four quadrants.")
        controls = pn.Row(self.knob("max_features"), self.knob("n_candidates"),
                          self.step_button, self.run_button, self.reset_button,
                          sizing_mode="stretch_width")
        return pn.Column(
            *first_panes(self, intro, controls),
            self.panels(self.panel("1 · the draw and its violations (Alg. 1, eq. 10)",
                                   "h_t = φᵀ L′_t,  enters when ‖h‖_{q′} > λ", self.draw),
                        self.panel("2 · the learned decision function (other inputs at their "
                                   "median)",
                                   "f(x) = Σ_g W_gᵀ φ_g(x) + b", self.slice),
                        self.panel("3 · the restricted master (eq. 7)",
                                   "min Σᵢ L(yᵢ, Φw + b) + λ Σ_g ‖W_g‖_q", self.norms)),
            self.panel("4 · the objective falls as features enter", "", self.convergence),
            sizing_mode="stretch_width")
