"""The *Stability* tab: would the same features be chosen on other rows, and do the methods
agree? Resamples of the session's method run in the background (one at a time among the
server's fits, like a sweep's points) and stream Φ̂ with its interval; then the methods of
*Compare with* are fitted at the same k and compared."""

from __future__ import annotations

import io
import queue

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
from holoviews.streams import Pipe

from .. import viz
from ..experiments import StabilityResult, at_k
from . import _widgets as W
from ._fit_pool import background_worker
from ._jobs import StabilityJob
from .views import _ensure_backend

KINDS = ("resample", "stability-done", "stability-error")
RESAMPLES = 50


class StabilityRun:
    """One stability run at a time: resamples, then the agreement of the compared methods;
    ``poll()`` hands their events to the caller's thread."""

    def __init__(self):
        self.events: queue.Queue = queue.Queue()
        self.worker = background_worker(self.events, KINDS)
        self.token = 0
        self.halted = False

    def start(self, method: str, data, params: dict, n_resamples: int,
              others: list[str], k: int | None, knowledge: dict | None = None) -> None:
        self.token += 1
        self.halted = False
        self.worker.start(self.token, data, [StabilityJob(method, params, n_resamples,
                                                          list(others), k, knowledge or {})])

    def stop(self) -> None:
        """End the resampling; the resamples done so far still make the result."""
        self.halted = True
        self.worker.halt()

    def close(self) -> None:
        self.worker.close()

    def poll(self) -> list:
        out = []
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return out
            if event.token == self.token:
                out.append(event)


class StabilityView(pn.viewable.Viewer):
    """Run / Stop, Φ̂ with its 95 % interval as resamples arrive and, once the label
    permutations have run, the chance reference beside it (Φ̂ of the same method on permuted
    labels) with the verdict in words; selection frequency per feature (named bars, or the
    image grid), the agreement matrix and both tables as CSV."""

    def __init__(self, **params):
        super().__init__(**params)
        _ensure_backend()
        self.run = StabilityRun()
        self.result: StabilityResult | None = None
        self.agreement = None
        self.dataset = None
        self._given: tuple[list[int], list[int]] = ([], [])  # (pinned, banned), marked
        self._phis: list[tuple[int, float, float, float]] = []
        self.resamples = pn.widgets.IntSlider(label="resamples (half of the rows each)",
                                              start=10, end=200, step=10, value=RESAMPLES,
                                              css_classes=["stability-resamples"], width=260)
        self.start_button = W.button("Run stability", "btn-stability", "primary")
        self.stop_button = W.stop_button("btn-stability-stop")
        self.status = pn.pane.Markdown("Fits the method on resamples of the training rows "
                                       "and measures how alike the selected sets are "
                                       "(Nogueira et al.'s Φ̂: 1 = the same features every "
                                       "time, 0 = what random sets of that size give), then "
                                       "on permuted labels: how stable the method is on "
                                       "labels that carry nothing.",
                                       css_classes=["stability-status"])
        self.verdict = pn.pane.Markdown("", css_classes=["stability-verdict"],
                                        sizing_mode="stretch_width")
        self._pipe = Pipe(data=([], None))
        self.phi_plot = pn.pane.HoloViews(hv.DynamicMap(self._phi_curve, streams=[self._pipe]),
                                          sizing_mode="stretch_width",
                                          css_classes=["view-phi"])
        # shown by its container: toggling a HoloViews pane's own visibility fails in Panel
        # (its Bokeh stylesheets are re-validated as strings)
        self.phi_box = pn.Column(self.phi_plot, sizing_mode="stretch_width")
        self.frequency = pn.pane.HoloViews(sizing_mode="stretch_width",
                                           css_classes=["view-frequency"])
        self.matrix = pn.pane.HoloViews(sizing_mode="stretch_width",
                                        css_classes=["view-agreement"])
        # shown by its container: toggling a HoloViews pane's own visibility trips Panel's
        # stylesheet sync in a template ("List parameter 'Bokeh.stylesheets' items must be
        # instances of str", a traceback in the server's log)
        self.matrix_box = pn.Column(self.matrix, sizing_mode="stretch_width", visible=False)
        self.differences = pn.pane.Markdown("", css_classes=["agreement-lists"])
        self.download_frequency = W.download("Download frequencies CSV", "stability.csv",
                                             self._frequency_csv, "download-stability")
        self.download_agreement = W.download("Download agreement CSV", "agreement.csv",
                                             self._agreement_csv, "download-agreement")
        self.stop_button.on_click(lambda e: self.run.stop())
        # nothing to stop, draw or download before a run: an empty Φ̂ axis ran from 2 to 3
        # resamples in fifths
        self._idle()

    def _idle(self) -> None:
        self.stop_button.disabled = True
        self.phi_box.visible = False
        self.download_frequency.visible = self.download_agreement.visible = False

    @staticmethod
    def _phi_curve(data):
        progress, chance = data
        frame = pd.DataFrame(progress, columns=["resamples", "phi", "low", "high"])
        return viz.phi_plot(frame, chance).opts(responsive=True, height=260, **viz.BEST_LEGEND)

    # ----------------------------------------------------------------- run
    def start(self, method: str, data, params: dict, others: list[str], k,
              knowledge: dict | None = None) -> None:
        self.result, self.agreement, self.dataset = None, None, data
        known = knowledge or {}
        self._given = ([int(j) for j in known.get("always_include") or ()],
                       [int(j) for j in known.get("exclude") or ()])
        self._phis = []
        self._pipe.send(([], None))
        self._idle()
        self.stop_button.disabled = False
        self.verdict.object = ""
        self.matrix_box.visible = False
        self.differences.object = ""
        params = {n: v for n, v in params.items() if n != "warm_start"}
        self.run.start(method, data, {**params, **(knowledge or {})},
                       int(self.resamples.value), others, k, knowledge or {})
        self.status.object = f"resampling {method}: 0/{int(self.resamples.value)}"

    def tick(self) -> None:
        """Apply the run's events (called by the page's periodic callback)."""
        for event in self.run.poll():
            if event.kind == "stability-error":
                exc, _ = event.payload
                self.status.object = f"stability failed: {exc}"
                self.stop_button.disabled = True
                continue
            if event.kind == "stability-done":
                self.stop_button.disabled = True
                continue
            update = event.payload
            if update["kind"] == "resample" and update.get("stage") == "chance":
                self.status.object = (f"chance reference: permutation "
                                      f"{update['permutation'] + 1}/{update['n_permutations']}"
                                      f" of the labels, resample {update['n_done']}/"
                                      f"{update['n_resamples']}")
            elif update["kind"] == "resample":
                low, high = update["phi_ci"]
                self._phis.append((update["n_done"], update["phi"], low, high))
                self._pipe.send((list(self._phis), None))
                self.phi_box.visible = True
                self.status.object = self._line(update["n_done"], update["n_resamples"],
                                                 update["phi"], (low, high))
            elif update["kind"] == "result":
                self.result = update["result"]
                self._draw_frequency()
                self.download_frequency.visible = True
                if self.run.halted:
                    self.status.object += " · stopped"
            else:
                self.agreement = update["result"]
                self._draw_agreement()
                self.download_agreement.visible = True

    @staticmethod
    def _line(done, total, phi, ci) -> str:
        if not np.isfinite(phi):
            return f"resample {done}/{total}"
        return (f"Φ̂ = **{phi:.3f}** (95 % interval {ci[0]:.3f} – {ci[1]:.3f}) after "
                f"{done}/{total} resamples")

    def _draw_frequency(self) -> None:
        r = self.result
        ds = self.dataset
        if r.empty:
            self.status.object = (f"{r.method} selected no feature on any resample: the "
                                  "model is empty")
        else:
            self.status.object = self._line(r.n_resamples, int(self.resamples.value), r.phi,
                                            r.phi_ci) + f" · mean Jaccard {r.jaccard:.3f}"
        self.verdict.object = r.verdict()
        chance = None if r.chance is None else (r.chance.phi, *r.chance.band)
        self._pipe.send((list(self._phis), chance))
        shape = getattr(ds, "image_shape", None)
        if shape is not None and int(np.prod(shape)) == r.frequency.size:
            # square pixels: a figure of fixed size
            self.frequency.sizing_mode = "fixed"
            pinned, banned = self._given
            self.frequency.object = viz.frequency_image(
                r.frequency, shape, pinned=pinned, banned=banned).opts(
                frame_width=320, frame_height=int(320 * shape[0] / shape[1]))
        else:
            self.frequency.sizing_mode = "stretch_width"
            self.frequency.object = viz.frequency_bars(r.table(), truth=ds.truth,
                                                       pinned=self._given[0]).opts(
                responsive=True, height=300)

    def _draw_agreement(self) -> None:
        a = self.agreement
        self.matrix.object = viz.agreement_heatmap(a.jaccard).opts(responsive=True,
                                                                   height=260)
        self.matrix_box.visible = True
        lines = []
        for _, row in a.table().iterrows():
            lines.append(f"* **{row['method']}** and **{row['other']}**: Jaccard "
                         f"{row['jaccard']:.2f}; only {row['method']}: "
                         f"{_names(row['only_method'])}; only {row['other']}: "
                         f"{_names(row['only_other'])}")
        for m, n in a.off_target().items():
            setting = ", ".join(f"{knob}={v}" for knob, v in a.settings.get(m, {}).items())
            lines.append(f"* **{m}** cannot be asked for {a.k} features here: its nearest "
                         f"({setting}) holds {n}")
        if a.recovery:
            lines.append("* true features found: " + ", ".join(
                f"{m} {n}" for m, n in a.recovery.items()))
        self.differences.object = "\n".join(lines)

    def _frequency_csv(self):
        return _csv(self.result, ["feature", "index", "frequency"])

    def _agreement_csv(self):
        return _csv(self.agreement, ["method", "other", "jaccard"])

    def __panel__(self):
        return pn.Column(pn.Row(self.resamples, self.start_button, self.stop_button),
                         self.status, self.phi_box, self.verdict, self.frequency,
                         pn.Row(self.download_frequency, self.download_agreement),
                         self.matrix_box, self.differences, sizing_mode="stretch_width")


def _csv(result, columns: list[str]):
    """``result.table()`` (or an empty table of ``columns``) as CSV to download."""
    buf = io.StringIO()
    frame = result.table() if result is not None else pd.DataFrame(columns=columns)
    frame.to_csv(buf, index=False)
    buf.seek(0)
    return buf


def _names(joined: str, most: int = 8) -> str:
    names = [n for n in joined.split("; ") if n]
    if not names:
        return "none"
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def k_of(method: str, params: dict, estimator) -> int | None:
    """The k at which to compare methods: the method's own count knob, else the fitted
    model's number of features."""
    knob = next(iter(at_k(method, 1)), None) if _has_count(method) else None
    if knob is not None and isinstance(params.get(knob), (int, np.integer)):
        return int(params[knob])
    return int(estimator.n_selected_) if estimator is not None and \
        getattr(estimator, "n_selected_", 0) else None


def _has_count(method: str) -> bool:
    try:
        at_k(method, 1)
        return True
    except ValueError:
        return False
