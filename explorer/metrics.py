"""Evaluation measures: accuracy, AUC, F1, PRBEP, Rec@k, RMSE, R², and recovery of true features.

Binary measures take the positive class to be the larger label (scikit-learn's ``classes_[1]``).
Multi-class F1/PRBEP/Rec@k/AUC are macro averages of the one-vs-rest values (FS-multi's
multi-class measures). :func:`evaluate` dispatches a measure on a fitted estimator, feeding it
labels or decision scores as the measure requires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn import metrics as skm

__all__ = [
    "METRICS", "Metric", "accuracy", "auc", "evaluate", "f1", "gaussian_sign_accuracy",
    "macro_auc", "macro_f1", "macro_prbep", "macro_recall_at_k", "metrics_for",
    "pairwise_accuracy", "percent_found", "prbep", "r2", "recall_at_k", "recovery", "rmse",
]


def _positive(y_true, pos_label=None):
    y_true = np.asarray(y_true)
    if pos_label is None:
        classes = np.unique(y_true)
        pos_label = classes[-1]
    return (y_true == pos_label).astype(np.int64)


def accuracy(y_true, y_pred) -> float:
    """Share of correct labels."""
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def f1(y_true, y_pred, pos_label=None) -> float:
    """F1 of the positive class (the larger label unless ``pos_label`` is given)."""
    y_true = np.asarray(y_true)
    if pos_label is None:
        pos_label = np.unique(y_true)[-1]
    t = y_true == pos_label
    p = np.asarray(y_pred) == pos_label
    tp = np.sum(t & p)
    denom = t.sum() + p.sum()
    return float(2 * tp / denom) if denom else 0.0


def auc(y_true, scores, pos_label=None) -> float:
    """Area under the ROC curve of decision scores (binary)."""
    t = _positive(y_true, pos_label)
    if t.min() == t.max():
        return float("nan")
    return float(skm.roc_auc_score(t, np.asarray(scores, dtype=float)))


def prbep(y_true, scores, pos_label=None) -> float:
    """Precision–recall break-even point: precision (= recall) among the top n_pos scores."""
    t = _positive(y_true, pos_label)
    n_pos = int(t.sum())
    if n_pos == 0:
        return float("nan")
    top = np.argsort(-np.asarray(scores, dtype=float), kind="stable")[:n_pos]
    return float(t[top].sum() / n_pos)


def recall_at_k(y_true, scores, k: int | None = None, pos_label=None) -> float:
    """Recall among the ``k`` highest scores; ``k=None`` is twice the number of positives
    (Rec@2p, the FS-multi paper's setting)."""
    t = _positive(y_true, pos_label)
    n_pos = int(t.sum())
    if n_pos == 0:
        return float("nan")
    k = 2 * n_pos if k is None else int(k)
    top = np.argsort(-np.asarray(scores, dtype=float), kind="stable")[:k]
    return float(t[top].sum() / n_pos)


def pairwise_accuracy(y_true, scores, query=None) -> float:
    """Share of pairs with different relevance (inside a query) that the scores order right."""
    y_true = np.asarray(y_true, dtype=float)
    scores = np.asarray(scores, dtype=float)
    query = np.zeros(y_true.size) if query is None else np.asarray(query)
    if query.shape != y_true.shape or scores.shape != y_true.shape:
        raise ValueError(f"pairwise accuracy needs one score and one query id per row: "
                         f"{y_true.shape[0]} rows, scores {scores.shape}, query {query.shape}")
    right = total = 0
    for q in np.unique(query):
        rows = np.flatnonzero(query == q)
        a, b = np.nonzero(y_true[rows][:, None] > y_true[rows][None, :])
        right += int(np.sum(scores[rows][a] > scores[rows][b]))
        total += a.size
    return right / total if total else float("nan")


def rmse(y_true, y_pred) -> float:
    """Root mean squared error."""
    diff = np.asarray(y_true, dtype=float) - np.asarray(y_pred, dtype=float)
    return float(np.sqrt(np.mean(diff**2)))


def r2(y_true, y_pred) -> float:
    """Coefficient of determination."""
    return float(skm.r2_score(y_true, y_pred))


def _macro(fn, y_true, scores, classes, **kw) -> float:
    y_true = np.asarray(y_true)
    values = [fn((y_true == c).astype(int), scores[:, j], pos_label=1, **kw)
              for j, c in enumerate(classes)]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def macro_f1(y_true, y_pred) -> float:
    """Unweighted mean over classes of the one-vs-rest F1."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean([f1(y_true == c, y_pred == c, pos_label=True)
                          for c in np.unique(y_true)]))


def macro_prbep(y_true, scores, classes) -> float:
    """Mean over classes of the one-vs-rest PRBEP (scores: n × n_classes)."""
    return _macro(prbep, y_true, np.asarray(scores), classes)


def macro_recall_at_k(y_true, scores, classes, k=None) -> float:
    """Mean over classes of the one-vs-rest Rec@k (k = 2·#positives per class by default)."""
    return _macro(recall_at_k, y_true, np.asarray(scores), classes, k=k)


def macro_auc(y_true, scores, classes) -> float:
    """Mean over classes of the one-vs-rest AUC."""
    return _macro(auc, y_true, np.asarray(scores), classes)


def recovery(selected, truth) -> dict:
    """Recovery of known informative features.

    Returns ``found`` (true features among the selected), ``percent_found`` (PCD: 100·found /
    #true), ``all_found`` (every true feature selected) and ``precision`` (found / #selected).
    """
    selected = np.asarray(selected)
    if selected.dtype == bool:
        selected = np.flatnonzero(selected)
    selected = selected.astype(np.int64).ravel()
    truth = np.asarray(truth, dtype=np.int64).ravel()
    found = int(np.isin(truth, selected).sum())
    return {
        "found": found,
        "percent_found": 100.0 * found / max(1, truth.size),
        "all_found": bool(found == truth.size),
        "precision": found / max(1, selected.size),
    }


def percent_found(selected, truth) -> float:
    """PCD: percent of the true features that were selected (FSA Tables 2–4)."""
    return recovery(selected, truth)["percent_found"]


def gaussian_sign_accuracy(coef, intercept: float, w) -> float:
    """The exact accuracy of the classifier sign(xᵀcoef + intercept) on the population of
    FGM's synthetic design (Tan et al., §6.2.1; :func:`explorer.data.make_fgm_linear` with
    density 1): x ~ N(0, I), y = sign(xᵀw). A test set of n points estimates it with a standard
    error of about √(a(1 − a)/n), 0.7 point at n = 4,096 — the size of the differences between
    best-subset methods at the same k, which this value resolves.

    With u = xᵀw/‖w‖ and z = xᵀcoef/‖coef‖ standard normal of correlation ρ and t =
    −intercept/‖coef‖, the accuracy is P(u > 0, z > t) + P(u < 0, z < t)
    = ∫₀^∞ φ(u) [Φ((ρu − t)/s) + Φ((ρu + t)/s)] du, s = √(1 − ρ²); 1 − arccos(ρ)/π at t = 0.
    A zero ``coef`` predicts one class everywhere: 0.5."""
    from scipy import integrate, stats

    coef = np.asarray(coef, dtype=np.float64).ravel()
    w = np.asarray(w, dtype=np.float64).ravel()
    intercept = float(intercept)
    if coef.shape != w.shape:
        raise ValueError(f"coef has {coef.size} entries and w {w.size}: they must match")
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(w)) and np.isfinite(intercept)):
        raise ValueError("coef, intercept and w must be finite")
    norm_w, norm_v = float(np.linalg.norm(w)), float(np.linalg.norm(coef))
    if norm_w == 0.0:
        raise ValueError("w is zero: the design's labels are then all one class")
    if norm_v == 0.0:
        return 0.5
    rho = float(np.clip(coef @ w / (norm_v * norm_w), -1.0, 1.0))
    t = -intercept / norm_v
    s = np.sqrt(max(1.0 - rho * rho, 0.0))
    if s < 1e-12:  # z = ±u: the sign agrees except where z and t disagree
        tail = stats.norm.sf(abs(t))  # P(0 < u < |t|) = ½ − tail is misclassified
        return float(0.5 + tail if rho > 0 else 0.5 - tail)

    def integrand(u):
        return stats.norm.pdf(u) * (stats.norm.cdf((rho * u - t) / s) +
                                    stats.norm.cdf((rho * u + t) / s))

    value, _err = integrate.quad(integrand, 0.0, np.inf, epsabs=1e-12, epsrel=1e-10)
    return float(min(max(value, 0.0), 1.0))


# ----------------------------------------------------------------------------- dispatch
@dataclass(frozen=True)
class Metric:
    """A named measure: what it needs, which way is better, which tasks it applies to."""

    name: str
    label: str
    needs: str  # "labels" or "scores"
    greater_is_better: bool
    tasks: tuple[str, ...]
    binary: Callable
    multi: Callable | None = None
    grouped: bool = False  # ``binary(y, values, query)``: measured inside each query
    proportion: bool = True  # a share in [0, 1] (spoken of in points); False: RMSE, R²


METRICS: dict[str, Metric] = {
    "accuracy": Metric("accuracy", "accuracy", "labels", True, ("classification",),
                       accuracy, lambda y, p, classes: accuracy(y, p)),
    "auc": Metric("auc", "AUC", "scores", True, ("classification",), auc, macro_auc),
    "f1": Metric("f1", "F1", "labels", True, ("classification",), f1,
                 lambda y, p, classes: macro_f1(y, p)),
    "prbep": Metric("prbep", "PRBEP", "scores", True, ("classification",), prbep, macro_prbep),
    "rec@2p": Metric("rec@2p", "Rec@2p", "scores", True, ("classification",), recall_at_k,
                     macro_recall_at_k),
    "rmse": Metric("rmse", "RMSE", "labels", False, ("regression",), rmse, proportion=False),
    "r2": Metric("r2", "R²", "labels", True, ("regression",), r2, proportion=False),
    # a ranking's scores have no scale of the grades (an RMSE of them says nothing): the share
    # of a query's pairs of different grades that they order right
    "pairwise": Metric("pairwise", "pairwise accuracy", "scores", True, ("ranking",),
                       pairwise_accuracy, grouped=True),
}


def metrics_for(task: str) -> list[str]:
    """Names of the measures that apply to a task."""
    return [name for name, m in METRICS.items() if task in m.tasks]


def evaluate(estimator, X, y, metrics: Sequence[str] = ("accuracy",),
             query=None) -> dict[str, float]:
    """Compute each named measure of a fitted estimator on (X, y); ``query``: the rows'
    query ids, inside which a ranking measure compares (None: one query).

    Measures that do not apply to the estimator's task are returned as NaN rather than raising,
    so a sweep over mixed methods keeps its columns aligned.
    """
    out: dict[str, float] = {}
    task = getattr(estimator, "_task", "classification")
    labels = scores = None
    for name in metrics:
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r}; known: {', '.join(METRICS)}")
        metric = METRICS[name]
        if task not in metric.tasks:
            out[name] = float("nan")
            continue
        if metric.needs == "labels":
            labels = estimator.predict(X) if labels is None else labels
            value_in = labels
        else:
            if scores is None:
                scores = estimator.decision_function(X) \
                    if hasattr(estimator, "decision_function") else estimator.predict(X)
            value_in = scores
        classes = getattr(estimator, "classes_", None)
        if metric.grouped:
            out[name] = float(metric.binary(y, value_in, query))
        elif task == "classification" and classes is not None and len(classes) > 2:
            out[name] = float(metric.multi(y, value_in, classes))
        elif task == "classification" and classes is not None:
            out[name] = float(metric.binary(y, value_in, pos_label=classes[1])
                              if name != "accuracy" else metric.binary(y, value_in))
        else:
            out[name] = float(metric.binary(y, value_in))
    return out
