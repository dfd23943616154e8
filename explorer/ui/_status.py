"""What the session says in words, owned apart from the state that runs fits
(:class:`Feedback`: the status line, the last notice and the teaching explanation, as the
fields the page watches). The line's text is a pure function of a record, the records so far
and the model (what was selected, the objective, the iteration, the work, the test measures,
whether the fit runs); its pace (:class:`StatusPacer`) decides which record it shows after each
poll and when the explanation is written. Testable without a session."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import param

from .. import metrics as M
from ..data import DataError, format_bytes
from ..texts import explain

log = logging.getLogger("explorer.ui")

STATUS_EVERY_S = 0.2   # a running fit's status line changes at most this often, …
SESSIONS_PER_STEP = 6  # … times one more for every 6 sessions of the server fitting at once
RUNNING: set[int] = set()  # the sessions of this server whose fit runs (ids)
IDLE = "Selected: 0 features"
REFUSED = "Selected: – features · not fitted: the method refused this setting (see the message)"

# measures that rank: their models set no decision threshold, so the status shows no accuracy
RANKING_MEASURES = ("prbep", "rec@k")


def run_state(*, paused: bool, running: bool, stopped: bool) -> str:
    if paused:
        return "paused"
    if running:
        return "running…"
    return "stopped" if stopped else "done"


def headline_measures(estimator) -> tuple[str, ...]:
    """The measures the status line shows: the one the model was trained for first
    (FS-multi's F1 or PRBEP); a ranking measure sets no decision threshold, so its model
    shows PRBEP and AUC, not accuracy."""
    trained = getattr(estimator, "measure", None)
    if trained in RANKING_MEASURES:
        return ("prbep", "auc")
    if trained == "f1":
        return ("f1", "accuracy")
    return ("accuracy", "f1", "rmse", "r2", "pairwise")


def test_scores(estimator, data, names=None) -> dict[str, float]:
    """Measures of ``estimator`` on the test part of ``data`` ({} without one)."""
    if estimator is None or data is None or not data.has_test:
        return {}
    task = getattr(estimator, "_task", "classification")
    measures = [m for m in (names or M.metrics_for(task)) if task in M.METRICS[m].tasks]
    return M.evaluate(estimator, data.X_test, data.y_test, measures, query=data.query_test)


def headline_scores(estimator, data) -> dict[str, float]:
    """The model's main test measures (accuracy and F1 for classification, RMSE and R² for
    regression, pairwise accuracy for ranking); empty without a test split."""
    try:
        scores = test_scores(estimator, data, headline_measures(estimator))
    except Exception as exc:  # a model that cannot score says why, the status stays
        log.warning("scoring the model on the test split failed: %s", exc)
        return {}
    return {k: v for k, v in scores.items() if np.isfinite(v)}


def status_line(record, *, records, estimator, data, state: str, scored: bool) -> str:
    """One fit's status line at ``record`` (``scored``: with the model's test measures)."""
    scores = ""
    if scored and estimator is not None:
        trained = getattr(estimator, "measure", None)
        scores = "".join(f" · test {M.METRICS[k].label} {v:.3f}"
                         + (" (trained for it)" if k == trained else "")
                         for k, v in headline_scores(estimator, data).items())
        if trained in RANKING_MEASURES:
            scores += " · no accuracy (a ranking measure sets no threshold)"
    info = record.info or {}
    passes = ""
    if "bytes_read" in info:  # a dask X: the physical work so far
        passes = (f" · {info['passes']} passes over X, "
                  f"{format_bytes(info.get('bytes_read', 0))} read")
    member = record.member
    if member is None:
        learned = info.get("n_learned")
        if learned is None:
            selected = f"Selected: {record.n_selected} features · objective"
        elif info.get("pooled"):  # Gabor filters pooled over the image: every pixel is read
            selected = (f"Selected: {learned} learned features (filters pooled over the "
                        "whole image: each reads every pixel) · objective")
        else:
            selected = (f"Selected: {record.n_selected} input features (through {learned} "
                        "learned features) · objective")
    else:  # one binary fit per class: the model selects the union of theirs
        from ..viz import one_vs_rest_selection

        n_union, n_fitted = one_vs_rest_selection(records or [record])
        fits = "fit" if n_fitted == 1 else "fits"
        selected = (f"Selected: {n_union} features (the union over {n_fitted} one-vs-rest "
                    f"{fits}; class {member}: {record.n_selected}) · class {member}'s "
                    "objective")
    warm = ""
    if info.get("warm_start"):
        warm = (" · warm-started from the previous fit: the URL and an exported session "
                "give a cold fit of these settings, which may differ (untick warm start "
                "and refit to see it)")
    return (f"{selected} {record.objective:.5g} · iteration {record.iteration + 1} · "
            f"{record.elapsed:.2f} s{passes}{scores} · {state}{warm}")


@dataclass
class Shown:
    """What a poll changes: a fixed status ``text``, or the ``record`` whose line to show, and
    whether to ``explain`` it (the teaching text)."""

    text: str | None = None
    record: object = None
    explain: bool = False


def set_running(session: int, running: bool) -> None:
    """Count ``session`` among the server's running fits (or not)."""
    (RUNNING.add if running else RUNNING.discard)(session)


def status_interval(every: float = STATUS_EVERY_S) -> float:
    """How often a running fit's line may change: ``every``, stretched by the number of
    fits running in this server (a class of 30: every 1 s). Each change is a patch through
    the one event loop that also serves every click and page: at 0.2 s each, 30 fits' lines
    took 23 % of it and a page opening waited 5–6 s."""
    return every * max(1.0, len(RUNNING) / SESSIONS_PER_STEP)


class StatusPacer:
    """The pace of the status line. A running fit's line changes at most every
    :func:`status_interval` (a class of 30 fits otherwise sent the server's event loop 600
    status patches a second); a fit's first record, its pause and its end are shown at once,
    and a record held back is shown by a later poll when no new one comes."""

    def __init__(self, every: float = STATUS_EVERY_S):
        self.base = float(every)
        self.at = 0.0
        self.behind = False  # a record arrived that the line does not show yet

    @property
    def every(self) -> float:
        return status_interval(self.base)

    def after_poll(self, update, *, records, running: bool, paused: bool, has_model: bool,
                   now: float | None = None, warming: float | None = None) -> Shown:
        """What the poll that produced ``update`` changes (``records``: all of the fit's;
        ``warming``: the share of the kernels' compilation done while it runs, else None)."""
        now = time.perf_counter() if now is None else now
        if update.failed:
            return Shown(text="Selected: – features · failed (see the message)")
        if update.records:
            last, settled = update.records[-1], paused or not running
            if settled or len(records) == len(update.records) or now - self.at >= self.every:
                return self._show(last, now, explain=settled)
            self.behind = True
            return Shown()
        if update.progress is not None and running and not records:
            stage, fraction = update.progress
            done = "" if fraction is None else f" {fraction:.0%}"
            return Shown(text=f"Selected: – features · {stage}…{done}")
        if update.queued and running:
            if warming is not None:  # what it waits for: the compiler, not a queue of fits
                return Shown(text="Selected: – features · waiting while the numerical "
                                  f"kernels compile once after an install ({warming:.0%} "
                                  "done)")
            return Shown(text=f"Selected: – features · queued ({update.queued} ahead)")
        if update.cancelled:
            return Shown(text="Selected: – features · stopped before its first model")
        if update.finished and records and has_model:
            # the fit's end came in a later poll than its last record: explain that record
            return self._show(records[-1], now, explain=True)
        if update.paused and paused and records:
            # the pause came in a later poll than the step's record: the line says "paused"
            # (the explanation is written with the pause); else it stayed at "running…"
            return self._show(records[-1], now)
        if self.behind and records and now - self.at >= self.every:
            return self._show(records[-1], now)  # no record since
        return Shown()

    def _show(self, record, now: float, *, explain: bool = False) -> Shown:
        self.at, self.behind = now, False
        return Shown(record=record, explain=explain)


class Feedback(param.Parameterized):
    """The session's words to the user: the status line of the fit session's model, the last
    notice (``message`` at ``message_level``) and the explanation of the last record."""

    status = param.String(default=IDLE, doc="the status line")
    message = param.String(default="", doc="the last notice for the user")
    message_level = param.Selector(default="info", objects=["info", "warning", "error"])
    explanation = param.String(default="", doc="teaching text for the last iteration")

    def __init__(self, **params):
        super().__init__(**params)
        self.pacer = StatusPacer()
        self._of_a_fit = False  # the message is a fit's (its warning, error or refusal)

    def notify(self, text: str, level: str = "info", *, of_a_fit: bool = False) -> None:
        """Say ``text`` in the message box; ``of_a_fit``: it belongs to a fit (its warning,
        error or refusal) and goes when another fit starts."""
        self._of_a_fit = of_a_fit
        self.message_level = level
        self.message = text

    def fit_notice(self, text: str, level: str = "info") -> None:
        """A fit's own message (:meth:`notify` with ``of_a_fit``)."""
        self.notify(text, level, of_a_fit=True)

    def reported(self, action, *args, of_a_fit: bool = False):
        """``action(*args)`` (True when it returns None), or None when it raised a data or
        value problem, which the notice says."""
        try:
            result = action(*args)
        except (DataError, ValueError) as exc:
            self.notify(str(exc), "error", of_a_fit=of_a_fit)
            return None
        return True if result is None else result

    def clear(self) -> None:
        """No model: the line at zero, no explanation."""
        self.explanation = ""
        self.status = IDLE

    def refused(self) -> None:
        """A fit that was refused before it started: the line says so, not "0 features"."""
        self.explanation = ""
        self.status = REFUSED

    def fit_starting(self) -> None:
        """A new fit: an earlier fit's warning, error or refusal goes (FSA's red refusal
        stayed above FS-Manifold's fit); what the page said of the data, the URL or an
        upload stays."""
        if self._of_a_fit and self.message_level in ("warning", "error"):
            self._of_a_fit = False
            self.message_level = "info"
            self.message = ""

    def starting(self, *, compiling: bool, done: float = 0.0) -> None:
        self.status = "Selected: – features · running…" + (
            f" (compiling the numerical kernels once after an install: {done:.0%} done)"
            if compiling else "")

    def after_poll(self, update, fits, data, method: str,
                   warming: float | None = None) -> None:
        """The line (and explanation) after a poll that produced ``update`` from ``fits``, a
        :class:`~._fit_session.FitSession`, at the pacer's pace (``warming``: the share of
        the kernels' compilation done while it runs, else None)."""
        shown = self.pacer.after_poll(update, records=fits.records, running=fits.running,
                                      paused=fits.paused, has_model=fits.estimator is not None,
                                      warming=warming)
        if shown.text is not None:
            self.status = shown.text
        if shown.record is not None:
            self.show(shown.record, fits, data)
        if shown.explain:
            self.explain(method, shown.record, data)

    def show(self, record, fits, data) -> None:
        """The line of ``record``, scored on the test part once the fit stopped running."""
        self.status = status_line(
            record, records=fits.records, estimator=fits.estimator, data=data,
            state=run_state(paused=fits.paused, running=fits.running, stopped=fits.stopped),
            scored=not fits.running)

    def explain(self, method: str, record, data) -> None:
        names = data.names() if data is not None else None
        self.explanation = explain(method, record, names) or (
            f"Iteration {record.iteration + 1}: objective {record.objective:.5g}, "
            f"{record.n_selected} features.")
