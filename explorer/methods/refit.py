"""A nonlinear model refitted on a selection: what a method's own model cannot express.

FSA's model is additive in the kept variables — one weight, or one piecewise-linear response
(§2.5), per variable — so a label that depends on a product of two variables (an interaction,
an XOR) is out of its reach even when the variables it keeps are the right ones. An RBF-kernel
SVM on the kept columns can express such a label; :func:`kernel_refit` fits one with its C and γ
chosen by cross-validation, and :func:`refit_scores` gives its outputs in the shapes
:meth:`~explorer.methods.base.BaseSelector.decision_function` promises.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

MODELS = ("own", "rbf_svm")
REFIT_CS = (1.0, 10.0, 100.0)
REFIT_GAMMAS = (0.5, 1.0, 2.0)  # times 1/k on standardised columns (scikit-learn's "scale")
REFIT_FOLDS = 3


def selected_columns(X, support: np.ndarray) -> np.ndarray:
    """The columns ``support`` (a mask) of X as a dense float64 array: dense, sparse or a
    ``dask.array`` (computed; n × k is small)."""
    from ..kernels import take_columns
    from ..kernels.chunked import is_dask

    columns = np.flatnonzero(support)
    if is_dask(X):
        return np.asarray(X[:, columns].compute(), dtype=np.float64)
    taken = take_columns(X, columns)
    return taken.toarray() if sp.issparse(taken) else np.asarray(taken, dtype=np.float64)


def kernel_refit(Z: np.ndarray, y: np.ndarray, task: str, random_state: int = 0):
    """An RBF-kernel SVM (SVC for classification, SVR for regression) on the standardised
    columns ``Z``, C in ``REFIT_CS`` and γ in ``REFIT_GAMMAS``/k chosen by ``REFIT_FOLDS``-fold
    cross-validation (stratified for classes). Returns the fitted search: its
    ``best_params_`` and ``best_score_`` say what was chosen and how well it scored."""
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR

    if task not in ("classification", "regression"):
        raise ValueError(f"model='rbf_svm' refits a classifier or a regressor, not a {task}")
    k = max(Z.shape[1], 1)
    classify = task == "classification"
    learner = SVC(kernel="rbf") if classify else SVR(kernel="rbf")
    smallest = int(np.min(np.unique(y, return_counts=True)[1])) if classify else Z.shape[0]
    folds = min(REFIT_FOLDS, smallest)
    grid = {"svm__C": list(REFIT_CS), "svm__gamma": [g / k for g in REFIT_GAMMAS]}
    model = Pipeline([("scale", StandardScaler()), ("svm", learner)])
    if folds < 2:  # a class with one row: no split can hold it out; the middle of the grid
        return model.set_params(svm__C=1.0, svm__gamma=1.0 / k).fit(Z, y)
    splitter = (StratifiedKFold if classify else KFold)(folds, shuffle=True,
                                                        random_state=random_state)
    return GridSearchCV(model, grid, cv=splitter).fit(Z, y)


def refit_scores(model, Z: np.ndarray, task: str) -> np.ndarray:
    """Decision values (classification: (n,) for two classes, (n, n_classes) one-vs-rest for
    more) or predictions (regression) of a :func:`kernel_refit` model."""
    if task == "classification":
        return np.asarray(model.decision_function(Z))
    return np.asarray(model.predict(Z), dtype=np.float64)


def refit_summary(model) -> dict:
    """What the refit chose, for the records and the user: C, γ and its CV score."""
    params = getattr(model, "best_params_", None) or {
        "svm__C": model.get_params()["svm__C"], "svm__gamma": model.get_params()["svm__gamma"]}
    return {"C": float(params["svm__C"]), "gamma": float(params["svm__gamma"]),
            "cv_score": float(getattr(model, "best_score_", np.nan))}
