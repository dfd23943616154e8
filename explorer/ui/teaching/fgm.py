"""FGM's cutting plane one step at a time (/teach_fgm)."""

from __future__ import annotations

import panel as pn

from ... import viz
from ..views import SparsityView
from ._step import StepPage, first_panes


class FGMTeachingPage(StepPage):
    """FGM step by step: which features the worst-case analysis scored highest, which block
    entered, how the restricted master spread weight over the blocks, how the bounds moved."""

    method = "fgm"
    title = "FGM: feature generation by cutting planes"

    def __init__(self, dataset: str = "digits-3v8", B: int = 4, C: float = 20.0, **kw):
        super().__init__(dataset, {"B": B, "C": C, "feature_scaling": "norm", "tol": 1e-3}, **kw)
        self.scores = self.plot("view-scores")
        self.norms = self.plot("view-norms")
        self.convergence = self.convergence_view()
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
            frame, f"1 · iteration {last.iteration + 1}: block in red")
        self.norms.object = viz.block_norm_bars(
            last.info.get("block_norms", []),
            f"3 · master after {last.inner_steps} steps")
        self.sparsity.show(records, self.state.data)

    def __panel__(self):
        self._start()
        intro = (
            "### How FGM generates features\n"
            "Each **Step** runs one outer iteration of Algorithm 1: (1) score every feature "
            "by (Xᵀ(α⊙y))² with the current dual variables α, (2) add the B best as a new "
            "block, (3) re-solve the ℓ1²-regularised master over all blocks by APG, "
            "(4) recover α from the new training errors. The bounds of Theorem 2 close in "
            "on the optimum.")
        controls = pn.Row(self.knob("B"), self.knob("C"), self.step_button, self.run_button,
                          self.reset_button, sizing_mode="stretch_width")
        # the panels in the order of the algorithm's steps: 1 score, 2 add the block,
        # 3 re-solve the master; then how the bounds moved
        return pn.Column(
            *first_panes(self, intro, controls),
            self.panels(self.panel("1 · worst-case analysis (Alg. 2)",
                                   "c_j = (Σᵢ αᵢ yᵢ x_ij)², the B largest form d_t", self.scores),
                        self.panel("2 · the block enters the model",
                                   "D ← D ∪ {d_t}  (Alg. 1, step 2)", self.sparsity),
                        self.panel("3 · restricted master (eq. 31)",
                                   "min ½(Σ_t ‖ω_t‖)² + (C/2) Σᵢ ξᵢ²", self.norms)),
            self.panel("4 · the bounds of Theorem 2 close in",
                       "lower ≤ optimum ≤ upper", self.convergence),
            sizing_mode="stretch_width")


