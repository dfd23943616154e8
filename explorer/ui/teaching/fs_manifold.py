"""FS-Manifold's level method one iteration at a time (/teach_fs_manifold)."""

from __future__ import annotations

import holoviews as hv
import panel as pn

from ... import viz
from ._step import StepPage, first_panes

RATIO_DEAD = 1e-3  # a manifold share below this leaves τ without effect


class FSManifoldTeachingPage(StepPage):
    """FS-Manifold step by step on digits with few labels: the level method's bounds closing
    around its level, the weights p moving on the capped simplex, and the manifold term's
    share of the kernel (what τ can do)."""

    method = "fs-manifold"
    title = "FS-Manifold: semi-supervised selection by the level method"

    def __init__(self, dataset: str = "digits-3v8-semi", m: int = 10, tau: float = 0.5,
                 **kw):
        super().__init__(dataset, {"m": m, "tau": tau}, **kw)
        self.bounds = self.plot("view-bounds")
        self.weights = self.plot("view-weights")
        self.ratio = self.plot("view-ratio", 260)
        self.tau_note = pn.pane.Markdown("", css_classes=["tau-note"],
                                         sizing_mode="stretch_width")
        self.on_reset()

    def on_reset(self):
        self.bounds.object = hv.Curve([], "iteration", "objective").opts(
            title="1 · bounds and level (no step yet)")
        self.weights.object = hv.Bars([], "feature", "p").opts(
            title="2 · p on the capped simplex (no step yet)")
        self.ratio.object = hv.Curve([], "iteration", "manifold / feature term").opts(
            title="3 · the manifold term's share (no step yet)")
        self.tau_note.object = ""

    def on_records(self, update):
        records = self.state.records
        if not records:
            return
        last = records[-1]
        info = last.info
        data = self.state.data
        self.bounds.object = viz.level_bounds(
            records, f"1 · iteration {last.iteration + 1}: gap {info.get('gap', 0):.3g}")
        p = info.get("p")
        if p is not None:
            m = int(self.state.current_params()["m"])
            self.weights.object = viz.simplex_weights(
                p, m, f"2 · p (Σp = {m}), the {m} largest in red",
                image_shape=getattr(data, "image_shape", None),
                truth=getattr(data, "truth", None))
        self.ratio.object = viz.ratio_curve(records, "3 · the manifold term's share")
        self.tau_note.object = self._tau_note(info)

    def _tau_note(self, info) -> str:
        ratio = info.get("manifold_ratio")
        tau = info.get("tau")
        if ratio is None or tau is None:
            return ""
        if tau == 0:
            return ("**τ = 0**: supervised selection, the unlabeled rows play no part. "
                    "Move τ up to let the graph of all rows shape the kernel.")
        if ratio < RATIO_DEAD:
            return (f"**At these settings τ cannot move the model**: the manifold term is "
                    f"{ratio:.1e} of the feature term, so any τ < 1 selects the same features. "
                    "Lower ρ (the manifold term is divided by it) to give the graph a say.")
        return (f"The manifold term is {ratio:.2g} of the feature term: τ = {tau:g} trades "
                "the labeled rows' fit against smoothness over the graph of all rows.")

    def __panel__(self):
        self._start()
        intro = ("### How FS-Manifold selects with few labels\n"
                 "FS-Manifold looks for weights p on the capped simplex (each in [0, 1], "
                 "summing to m) whose kernel, mixed with a graph of *all* rows (labeled and "
                 "unlabeled), gives the best SVM. Each **Step** is one iteration of the level "
                 "method: solve the SVM at the current p, add its cut, and move p to the "
                 "nearest point whose model is below the level between the bounds. The unlabeled "
                 "rows here are the test rows (transductive).")
        controls = pn.Row(self.knob("m"), self.knob("tau"), self.step_button,
                          self.run_button, self.reset_button, sizing_mode="stretch_width")
        return pn.Column(
            *first_panes(self, intro, controls),
            self.panels(self.panel("1 · lower and upper bounds close (Alg. 2)",
                                   "ℓ = λ·upper + (1 − λ)·lower,  λ = 0.9", self.bounds),
                        self.panel("2 · p on the capped simplex (eq. 12)",
                                   "P = {p ∈ [0, 1]^d : Σ p = m}", self.weights)),
            self.panel("3 · what τ can do",
                       "M = (1 − τ)² X_l diag(p) X_lᵀ + (τ²/ρ) H", self.ratio),
            self.tau_note, sizing_mode="stretch_width")
