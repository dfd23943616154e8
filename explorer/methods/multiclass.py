"""One-vs-rest for the methods without a multi-class form, apart from the estimator base
(as scikit-learn keeps ``multiclass.py`` apart): one binary fit per class, then — when the
method was asked for k — one shared cut to k features for all the classes together."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .records import MEMBER_KEY, STAGE_KEY, Recorder


def fit_one_vs_rest(estimator, X, y, recorder: Recorder, fit_params: dict) -> None:
    """One-vs-rest for methods without a multi-class form (``estimator``, a
    :class:`~explorer.methods.BaseSelector`): one binary fit per class.

    ``coef_`` stacks the per-class weights (n_classes, n_features); ``support_`` is the
    union of the per-class selections.
    """
    previous = getattr(estimator, "estimators_", None) if getattr(estimator, "warm_start", False) \
        else None
    members = []
    if previous is not None and len(previous) == len(estimator.classes_):
        recorder.info["warm_start"] = True
    for k, label in enumerate(estimator.classes_):
        if previous is not None and len(previous) == len(estimator.classes_):
            member = previous[k]
            member.set_params(**estimator.get_params(deep=False))
        else:
            member = clone(estimator)
        member.n_features_in_ = estimator.n_features_in_
        member.__dict__["_knowledge"] = estimator._known()
        y_pm = np.where(y == label, 1.0, -1.0)
        member.classes_ = np.array([-1.0, 1.0])
        member._fit(X, y_pm, recorder.child(**{MEMBER_KEY: _py(label)}), **fit_params)
        members.append(member)
        if recorder.should_stop:
            break
    if len(members) == len(estimator.classes_) and not recorder.should_stop:
        members = shared_cut(estimator, X, y, members, recorder, fit_params)
    while len(members) < len(estimator.classes_):  # stopped early: untrained classes score -inf
        empty = clone(estimator)
        empty.n_features_in_ = estimator.n_features_in_
        empty.coef_ = np.zeros(estimator.n_features_in_)
        empty.intercept_ = -np.inf
        empty.support_ = np.zeros(estimator.n_features_in_, dtype=bool)
        members.append(empty)
    estimator.estimators_ = members
    estimator.coef_ = np.vstack([m.coef_ for m in members])
    estimator.intercept_ = np.array([m.intercept_ for m in members], dtype=float)
    estimator.support_ = np.logical_or.reduce([m.support_ for m in members])

def shared_cut(estimator, X, y, members: list, recorder: Recorder, fit_params) -> list:
    """Exactly ``k`` features for all the classes together: when the union of the
    per-class fits holds more than k, keep the k of largest Σ_c |w_cj|·σ_j (each feature's
    weight on the classes' decision values per standard deviation of the feature, so the
    rule does not depend on its unit; scikit-learn's ``SelectFromModel`` ranks a
    multi-class model's features by their weights' norm across classes too) and refit
    every class on those k, asked for k. Each refit class records once (stage "shared
    cut"). Not for groups (k counts groups) or nonlinear maps (weights are not per input
    feature)."""
    k = estimator.get_params(deep=False).get("k")
    if k is None or isinstance(k, str) or fit_params.get("groups") is not None:
        return members
    W = np.vstack([np.atleast_2d(m.coef_) for m in members])
    if W.shape[1] != estimator.n_features_in_ or np.any(W != 0, axis=0).sum() <= int(k):
        return members
    if not (isinstance(X, np.ndarray) or sp.issparse(X)):
        recorder.warn(f"{estimator._describe()}: k = {k} applies to each class on data that is "
                      "not in memory; the model holds their union")
        return members
    from ..kernels import column_moments, take_columns

    effect = np.abs(W).sum(axis=0) * column_moments(X)[1]
    know = estimator._known()
    if know is not None:
        effect[know.pinned] = np.inf  # always in the shared k
    keep = np.sort(np.lexsort((np.arange(effect.size), -effect))[: int(k)])
    Xk = take_columns(X, keep)
    refit = []
    for label, old in zip(estimator.classes_, members):
        member = clone(estimator).set_params(k=keep.size)
        member.n_features_in_ = keep.size
        member.classes_ = old.classes_
        if know is not None:
            member.__dict__["_knowledge"] = know.on(keep)
        quiet = Recorder()
        member._fit(Xk, np.where(y == label, 1.0, -1.0), quiet, **fit_params)
        coef = np.zeros(estimator.n_features_in_)
        coef[keep] = np.ravel(member.coef_)
        support = np.zeros(estimator.n_features_in_, dtype=bool)
        support[keep] = np.ravel(member.support_)  # the refit's own: a pinned feature at w = 0
        member.coef_, member.support_ = coef, support
        member.n_features_in_ = estimator.n_features_in_
        for fitted_on_k in ("_warm", "space_", "_master"):  # their columns are keep's
            member.__dict__.pop(fitted_on_k, None)
        last = quiet.history[-1] if quiet.history else None
        recorder.child(**{MEMBER_KEY: _py(label), STAGE_KEY: "shared cut"}).emit(
            objective=last.objective if last else float("nan"),
            n_selected=int(member.support_.sum()), selected=np.flatnonzero(member.support_),
            info={"kept": keep.size, "of": int(np.any(W != 0, axis=0).sum())})
        refit.append(member)
    return refit


def _py(value):
    return value.item() if isinstance(value, np.generic) else value
