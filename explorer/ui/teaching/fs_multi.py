"""FS-multi's bundle method one outer step at a time (/teach_fs_multi)."""

from __future__ import annotations

import holoviews as hv
import panel as pn

from ... import viz
from ..views import SparsityView
from ._step import StepPage, first_panes


class FSMultiTeachingPage(StepPage):
    """FS-multi step by step on an imbalanced set: each step's most violated labeling ȳ (its
    confusion table against y and its F1), the block of features it brings, and the bundle's
    certified gap closing."""

    method = "fs-multi"
    title = "FS-multi: feature selection for F1 and other multivariate measures"

    def __init__(self, dataset: str = "digits-9vr", B: int = 4, measure: str = "f1", **kw):
        super().__init__(dataset, {"B": B, "measure": measure, "max_outer": 12}, **kw)
        self.labeling = self.plot("view-labeling")
        self.block = self.plot("view-block")
        self.gaps = self.plot("view-gaps")
        self.convergence = self.convergence_view()
        self.sparsity = SparsityView(dataset=self.state.data, height=300)
        self.on_reset()

    def on_reset(self):
        self.convergence.reset()
        self.sparsity.show([], self.state.data)
        empty = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
        self.labeling.object = viz.confusion_heatmap(empty, "1 · most violated ȳ (no step yet)")
        self.block.object = viz.candidate_bars(viz.candidate_scores(
            type("R", (), {"info": {}})()), "2 · the block it brings (no step yet)")
        self.gaps.object = hv.Curve([], "bundle step", "gap").opts(
            title="3 · the bundle's gap (no step yet)")

    def on_records(self, update):
        self.convergence.push(update.records)
        records = self.state.records
        if not records:
            return
        last = records[-1]
        info = last.info
        names = self.state.data.names() if self.state.data is not None else None
        table = info.get("violated")
        if table is not None:
            self.labeling.object = viz.confusion_heatmap(
                table, f"1 · step {last.iteration + 1}: most violated ȳ, Δ = "
                f"{table['delta']:.3f}")
        self.block.object = viz.candidate_bars(
            viz.candidate_scores(last, names), f"2 · the block of {info.get('B', '')} (red)",
            ylabel="(Xᵀs)²")
        self.sparsity.show(records, self.state.data)
        self.gaps.object = viz.gap_trace(
            info.get("inner_gaps", []),
            f"3 · the bundle's certified gap ({info.get('K', 0)} cuts)")

    def __panel__(self):
        self._start()
        intro = ("### How FS-multi selects for a measure like F1\n"
                 "A labeling ȳ of the training rows is *most violated* when its loss Δ(y, ȳ) "
                 "(1 − F1 for F1) plus how well the current scores agree with it is largest. "
                 "Each **Step** adds one block: the features whose scores (Xᵀs)² are largest "
                 "for the labelings found so far; then the bundle method re-solves the model "
                 "over all blocks, adding the most violated labeling as a cut until its "
                 "certified gap closes.")
        controls = pn.Row(self.knob("B"), self.knob("measure"), self.step_button,
                          self.run_button, self.reset_button, sizing_mode="stretch_width")
        return pn.Column(
            *first_panes(self, intro, controls),
            self.panels(self.panel("1 · the most violated labeling against y (Alg. 3, eq. 14)",
                                   "ȳ = argmax Δ(y, ȳ) + (1/n) Σᵢ ȳᵢ f(xᵢ)", self.labeling),
                        self.panel("2 · the block it brings, with the runners-up (eq. 15)",
                                   "score_j = (Σᵢ sᵢ x_ij)², s = Σ_k α_k (y − ȳᵏ)/n", self.block),
                        self.panel("3 · the bundle's gap closing (eqs. 12–13)",
                                   "min ½(Σ_t‖w_t‖)² + C ξ,  ξ ≥ ⟨w, p_k⟩ + q_k", self.gaps)),
            self.panel("4 · the model's weights over the mean image", "f(x) = wᵀx + b",
                       self.sparsity),
            self.panel("5 · the outer bounds", "lower ≤ optimum ≤ upper", self.convergence),
            sizing_mode="stretch_width")
