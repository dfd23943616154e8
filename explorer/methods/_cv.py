"""C chosen by cross-validation along a warm-started path (``C="cv"``).

A method with a loss trade-off C takes ``C="cv"``: before the fit, each of ``cv``
stratified folds of the training rows fits the method at every C of the grid ``Cs`` and
scores it on the fold's held-out rows with the method's own ``score``. The C of best mean
score (ties: the smaller C, as scikit-learn's ``GridSearchCV`` ranks them) is then fitted on
all the rows. ``C_`` is the chosen C, ``cv_scores_`` the (len(Cs), cv) table of held-out
scores: the same grid, folds and scores as ``GridSearchCV(method, {"C": Cs}, cv=cv)``.

Along the grid, each fold's fit at the next C starts from what the fit at the previous C
left that does not depend on C (``_path_state``): FS-Manifold's graph and manifold kernel and
its optimal p as the level method's first point, FGM's feature scaling. The certificates are
those of cold fits, so the models, scores and chosen C are GridSearchCV's (tested); only the
work falls. FGM's own warm start (the previous features as first blocks, or the previous C's
selection as the refinement's start) is not used: it changes which features are selected —
measured by ``benchmarks/bench_cv.py --only fgm-warm``: at most 1.8× faster, another C on a
third of the splits.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold

DEFAULT_CS = tuple(float(c) for c in np.logspace(-3, 3, 13))  # 0.001 … 1000, half decades


def folds(y: np.ndarray, cv: int, task: str):
    """The ``cv`` folds of the rows (stratified for a classifier), without shuffling — the
    folds ``GridSearchCV(cv=cv)`` uses."""
    cv = int(cv)
    if cv < 2:
        raise ValueError(f"cv must be at least 2 folds, got {cv}")
    if task == "classification":
        _, counts = np.unique(y, return_counts=True)
        if counts.min() < cv:
            raise ValueError(f"cv={cv} folds need at least {cv} rows of every class; the "
                             f"smallest class has {int(counts.min())}")
        return list(StratifiedKFold(cv).split(np.zeros(len(y)), y))
    return list(KFold(cv).split(np.zeros(len(y))))


def grid(Cs, low: float | None, high: float | None) -> np.ndarray:
    """The grid of C values, increasing, checked against the parameter's range."""
    values = np.asarray(DEFAULT_CS if Cs is None else Cs, dtype=float).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"Cs must be positive finite numbers, got {Cs!r}")
    if low is not None and values.min() < low or high is not None and values.max() > high:
        raise ValueError(f"Cs must lie in [{low:g}, {high:g}], got {values.min():g} … "
                         f"{values.max():g}")
    return np.unique(values)


def cross_validate_C(estimator, X, y, Cs: np.ndarray, cv: int, fit_params: dict,
                     interrupted=None) -> np.ndarray:
    """Held-out scores (len(Cs), cv) of ``estimator`` (a clone of it, C set per point) along
    the increasing grid ``Cs``, each fit started from the previous C's ``_path_state`` on the
    same fold; ``interrupted()`` is polled between fits."""
    scores = np.full((len(Cs), int(cv)), np.nan)
    for f, (train, test) in enumerate(folds(np.asarray(y), cv, estimator._task)):
        member = clone(estimator)
        member.set_params(warm_start=False) if "warm_start" in member.get_params() else None
        X_train, X_test = X[train], X[test]
        state = None
        for i, C in enumerate(Cs):
            if interrupted is not None and interrupted():
                return scores
            member.set_params(C=float(C))
            if state is not None:
                member._path_start = state
            member.fit(X_train, y[train], **fit_params)
            scores[i, f] = member.score(X_test, y[test])
            state = member._path_state()
    return scores


def best_C(Cs: np.ndarray, scores: np.ndarray) -> float:
    """The C of best mean held-out score; ties go to the smaller C. A search stopped before
    any score (the user's *Stop*) gives the smallest C: the fit after it stops at once."""
    scored = ~np.all(np.isnan(scores), axis=1)
    if not scored.any():
        return float(Cs[0])
    mean = np.full(len(Cs), -np.inf)
    mean[scored] = np.nanmean(scores[scored], axis=1)
    return float(Cs[int(np.argmax(mean))])
