"""The status line's text, owned apart from the state that runs fits: what was selected, the
objective, the iteration, the work, the test measures and whether the fit is running. Pure
functions of a record, the records so far and the model (testable without a session)."""

from __future__ import annotations

import logging

import numpy as np

from .. import metrics as M
from ..data import format_bytes

log = logging.getLogger("explorer.ui")

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
    member = info.get("class")
    if member is None:
        learned = info.get("n_learned")
        selected = (f"Selected: {record.n_selected} features · objective"
                    if learned is None else
                    f"Selected: {record.n_selected} input features (through {learned} "
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
