"""The *Error control* tab: how many of the chosen features are noise? Stability selection of
the session's method, at the expected number of false selections (PFER) and the cutoff the
user chose, runs in the background (among the server's fits, like a sweep's points) and
streams its stability path; then the stable set with its bound, the coefficient path over k,
the redundancy of the model's chosen features, and model-X knockoffs (or why the design does
not allow them) — each verdict in words. *Check on permuted labels* reruns the selection on
labels that carry nothing and says how many features it still calls stable."""

from __future__ import annotations

import io
import queue

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
from holoviews.streams import Pipe

from .. import viz
from ..experiments.pfer import CUTOFF, PFER
from . import _widgets as W
from ._fit_pool import background_worker
from ._jobs import ErrorControlJob, PermutationJob
from .views import _ensure_backend

KINDS = ("error-control", "error-control-done", "error-control-error")
PAIRS = 20
MOST_CHOSEN = 30  # chosen features on the redundancy map (largest |weight| first)


class ErrorControlView(pn.viewable.Viewer):
    """Run / Stop, the stability path as pairs arrive, the stable set and its bound in words,
    knockoffs in words, the coefficient path and the redundancy heatmap; the path as CSV."""

    def __init__(self, **params):
        super().__init__(**params)
        _ensure_backend()
        self.events: queue.Queue = queue.Queue()
        self.worker = background_worker(self.events, KINDS)
        self.token = 0
        self.result = None
        self.dataset = None
        self.pairs = pn.widgets.IntSlider(label="complementary pairs (two half-samples each)",
                                          start=5, end=50, step=5, value=PAIRS, width=260,
                                          css_classes=["error-control-pairs"])
        self.pfer = pn.widgets.Select(
            label="false selections you tolerate (PFER)", options=[0.5, 1.0, 2.0, 5.0],
            value=PFER, width=230, css_classes=["error-control-pfer"])
        self.cutoff = pn.widgets.FloatSlider(
            label="cutoff (share of half-samples)", start=0.6, end=0.95, step=0.05,
            value=CUTOFF, width=230, css_classes=["error-control-cutoff"])
        self.start_button = W.button("Run error control", "btn-error-control", "primary")
        self.stop_button = W.stop_button("btn-error-control-stop")
        self.stop_button.on_click(lambda e: self.worker.halt())
        self.permute_button = W.button("Check on permuted labels", "btn-error-control-permute")
        self.permute_button.on_click(lambda e: self.check_permuted())
        self.status = pn.pane.Markdown(
            "Fits the method along a grid of k on both halves of random splits of the "
            "training rows (complementary pairs stability selection): a feature is stable when "
            "at least the cutoff's share of the fits select it, and each fit may select as "
            "many features as keeps the expected number of false ones among the stable at "
            "most the PFER you chose. Then model-X knockoffs at a false discovery rate of 0.1.",
            css_classes=["error-control-status"], sizing_mode="stretch_width")
        self.verdict = pn.pane.Markdown("", css_classes=["error-control-verdict"],
                                        sizing_mode="stretch_width")
        self.knockoffs = pn.pane.Markdown("", css_classes=["knockoff-verdict"],
                                          sizing_mode="stretch_width")
        self._path = Pipe(data=([1], np.zeros((1, 0)), [], CUTOFF, []))
        self.path_plot = pn.pane.HoloViews(
            hv.DynamicMap(lambda data: viz.stability_path_plot(*data).opts(
                responsive=True, height=300), streams=[self._path]),
            sizing_mode="stretch_width", css_classes=["view-stability-path"])
        # shown by its container: toggling a HoloViews pane's own visibility fails in Panel
        self.path_box = pn.Column(self.path_plot, sizing_mode="stretch_width")
        self.coefficients = pn.pane.HoloViews(sizing_mode="stretch_width",
                                              css_classes=["view-coefficient-path"])
        self.redundancy = pn.pane.HoloViews(sizing_mode="stretch_width",
                                            css_classes=["view-redundancy"])
        self.download = W.download("Download stability path CSV", "stability_path.csv",
                                   self._csv, "download-stability-path")
        # nothing to stop, draw or download before a run (an empty path's k axis ran from
        # 0.9 to 1.1)
        self.stop_button.disabled = self.permute_button.disabled = True
        self.path_box.visible = self.download.visible = False

    # ----------------------------------------------------------------- run
    def start(self, method: str, data, params: dict, estimator=None) -> None:
        self.token += 1
        self.result, self.dataset = None, data
        params = {n: v for n, v in params.items()
                  if n not in ("warm_start", "k", "m")}
        chosen = []
        if estimator is not None and getattr(estimator, "support_", None) is not None:
            weights = estimator.feature_weights()
            chosen = [int(j) for j in sorted(estimator.selected_features_,
                                             key=lambda j: -weights[j])[:MOST_CHOSEN]]
        self.verdict.object = self.knockoffs.object = ""
        self.coefficients.object = self.redundancy.object = None
        self.path_box.visible, self.download.visible = True, False
        self.stop_button.disabled, self.permute_button.disabled = False, True
        self.worker.start(self.token, data, [ErrorControlJob(
            method, params, int(self.pairs.value), chosen, pfer=float(self.pfer.value),
            cutoff=float(self.cutoff.value))])
        self.status.object = f"stability selection of {method}: 0/{int(self.pairs.value)} pairs"

    def check_permuted(self) -> None:
        """Rerun the last selection on permuted labels (one more permutation per click)."""
        if self.result is None or self.dataset is None:
            return
        self.token += 1
        self.stop_button.disabled, self.permute_button.disabled = False, True
        self.worker.start(self.token, self.dataset, [PermutationJob(self.result)])
        self.status.object = (f"the same selection on permuted labels: "
                              f"{2 * self.result.n_pairs} half-samples")

    def tick(self) -> None:
        """Apply the run's events (called by the page's periodic callback)."""
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event.token != self.token:
                continue
            if event.kind == "error-control-error":
                exc, _ = event.payload
                self.status.object = f"error control failed: {exc}"
                self.stop_button.disabled = True
                self.permute_button.disabled = self.result is None
                continue
            if event.kind == "error-control-done":
                self.status.object += " · done"
                self.stop_button.disabled = True
                self.permute_button.disabled = self.result is None
                continue
            self._apply(event.payload)

    def _apply(self, update: dict) -> None:
        names = self.dataset.names()
        if update["kind"] == "pair":
            shown = [names[j] for j in update["features"]]
            self._path.send((update["ks"], update["probabilities"], shown,
                             float(self.cutoff.value), []))
            self.status.object = (f"stability selection: {update['n_done']}/"
                                  f"{update['n_pairs']} pairs")
        elif update["kind"] == "selection":
            r = self.result = update["result"]
            top = np.argsort(-r.max_probability, kind="stable")[:viz.MOST_PATHS]
            stable = [i for i, j in enumerate(top) if j in set(r.stable.tolist())]
            self._path.send((r.ks, r.probabilities[:, top], [names[j] for j in top],
                             r.cutoff, stable))
            self.verdict.object = r.verdict()
            self.status.object = f"stability selection: {r.n_pairs} pairs done"
            self.download.visible = True
        elif update["kind"] == "path":
            self.coefficients.object = viz.coefficient_path_plot(update["frame"]).opts(
                responsive=True, height=280)
        elif update["kind"] == "redundancy":
            self.redundancy.object = viz.redundancy_heatmap(update["frame"]).opts(
                responsive=True, height=360)
        elif update["kind"] == "knockoffs":
            self.knockoffs.object = "**Knockoffs:** " + update["result"].verdict()
        elif update["kind"] == "permuted":
            self.result = update["result"]
            self.verdict.object = self.result.verdict()
            self.status.object = (f"on permuted labels: {int(self.result.null_stable[-1])} "
                                  "stable features")

    def _csv(self):
        buf = io.StringIO()
        frame = self.result.table() if self.result is not None else pd.DataFrame(
            columns=["feature", "index", "frequency", "probability", "k", "stable"])
        frame.to_csv(buf, index=False)
        buf.seek(0)
        return buf

    def close(self) -> None:
        self.worker.close()

    def __panel__(self):
        return pn.Column(pn.Row(self.pfer, self.cutoff, self.pairs),
                         pn.Row(self.start_button, self.stop_button, self.permute_button),
                         self.status, self.path_box, self.verdict, self.knockoffs,
                         self.coefficients, self.redundancy, self.download,
                         sizing_mode="stretch_width")
