"""The abess peers: best subset by brute force on tiny problems, the path, constant columns,
sparse input (densified only when it fits), and the contract's records."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LinearRegression, LogisticRegression

from explorer.data import DataError, make
from explorer.experiments import sweep
from explorer.methods import REGISTRY, Abess, AbessRegressor


def _tiny(task: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 8))
    X[:, 5] = X[:, 2] + 0.3 * rng.standard_normal(120)  # a correlated decoy
    signal = 1.5 * X[:, 2] - 1.0 * X[:, 6]
    if task == "regression":
        return X, signal + 0.5 * rng.standard_normal(120)
    return X, np.where(signal + 0.8 * rng.standard_normal(120) > 0, 1, 0)


def _brute_force(X, y, k, task):
    """The support of size k with the smallest training loss, over all C(8, k) subsets."""
    best = None
    for cols in itertools.combinations(range(X.shape[1]), k):
        Xs = X[:, cols]
        if task == "regression":
            r = y - LinearRegression().fit(Xs, y).predict(Xs)
            loss = float(r @ r)
        else:
            p = LogisticRegression(C=1e6, max_iter=10000).fit(Xs, y).predict_proba(Xs)[:, 1]
            loss = -float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))
        if best is None or loss < best[0]:
            best = (loss, set(cols))
    return best[1]


def test_regression_k_equals_two_of_eight_is_the_brute_force_best_subset():
    X, y = _tiny("regression")
    est = AbessRegressor(k=2).fit(X, y)
    assert set(est.selected_features_) == _brute_force(X, y, 2, "regression")
    assert est.n_selected_ == 2 and len(est.history_) == 1


def test_classification_is_abess_itself():
    """The wrapper adds nothing to abess's own fit (on this instance abess's logistic splicing
    returns {5, 6}, a decoy pair, where the best pair by training loss is {2, 6}: best subset
    by splicing is a heuristic for the logistic loss)."""
    from abess.linear import LogisticRegression as AbessLogistic

    X, y = _tiny("classification")
    est = Abess(k=2).fit(X, y)
    direct = AbessLogistic(support_size=[2]).fit(X, y.astype(float))
    np.testing.assert_allclose(est.coef_, direct.coef_)
    assert est.intercept_ == pytest.approx(float(np.ravel(direct.intercept_)[0]))
    assert set(est.selected_features_) == {5, 6} != _brute_force(X, y, 2, "classification")


def test_the_path_records_every_size_and_keeps_the_best_criterion():
    X, y = _tiny("classification")
    est = Abess(k=None, k_max=6).fit(X, y)
    sizes = [r.info["support_size"] for r in est.history_]
    assert sizes == [1, 2, 3, 4, 5, 6]
    assert all(r.n_selected <= r.info["support_size"] for r in est.history_)
    best = min(est.history_, key=lambda r: r.info["criterion"])
    assert est.k_ == best.info["support_size"]
    np.testing.assert_array_equal(est.selected_features_, best.selected)


def test_a_stopped_path_keeps_a_usable_model():
    X, y = _tiny("classification")
    est = Abess(k=None, k_max=6).fit(X, y, callback=lambda r: r.iteration < 2)
    assert est.stopped_early_ and est.n_iter_ == 3
    assert est.score(X, y) > 0.8


def test_constant_columns_are_left_out_not_an_error():
    ds = make("digits-3v8").split(test_size=0.3, seed=0)  # border pixels are always 0
    constant = np.flatnonzero(ds.X.std(axis=0) == 0)
    assert constant.size > 0
    est = Abess(k=5).fit(ds.X, ds.y)
    assert est.n_selected_ == 5 and not set(constant) & set(est.selected_features_)
    assert est.score(ds.X_test, ds.y_test) > 0.9


def test_sparse_input_is_densified_only_when_it_fits(monkeypatch):
    import explorer.methods.best_subset as module

    X, y = _tiny("classification")
    dense = Abess(k=3).fit(X, y)
    sparse = Abess(k=3).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.selected_features_, sparse.selected_features_)
    np.testing.assert_allclose(dense.coef_, sparse.coef_)
    monkeypatch.setattr(module, "DENSE_LIMIT_BYTES", 1000)
    with pytest.raises(DataError, match="abess works on dense matrices.*FGM or FSA"):
        Abess(k=3).fit(sp.csr_matrix(X), y)


def test_registered_and_sweepable():
    assert REGISTRY["abess"] is Abess and REGISTRY["abess-reg"] is AbessRegressor
    ds = make("digits-3v8").split(test_size=0.3, seed=0)
    frame = sweep("abess", ds, values=[2, 4, 8])
    assert list(frame["n_selected"]) == [2, 4, 8]
    assert frame["accuracy"].iloc[-1] > 0.9


def test_a_column_constant_inside_a_fold_of_z_scored_data_is_left_out():
    # a rare indicator, z-scored on all rows: inside a fold that lacks its one row it takes
    # a single value, whose computed sd is ~1e-17 — abess standardised that rounding into a
    # column of noise (a weight of -47 when pinned) or overflowed
    data = make("breast-cancer")
    X = np.asarray(data.X, dtype=float)
    rare = np.zeros((X.shape[0], 1))
    rare[0] = 1.0
    X = np.hstack([X, rare])
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = np.arange(1, X.shape[0])
    assert 0 < np.std(X[rows, -1]) < 1e-15
    est = Abess(k=5, always_include=[30]).fit(X[rows], data.y[rows])
    assert est.coef_[30] == 0 and 30 in est.selected_features_ and est.n_selected_ == 5
    assert 30 not in Abess(k=5).fit(X[rows], data.y[rows]).selected_features_


def test_k_against_the_training_rows_is_refused_or_warned():
    wide = np.random.default_rng(0).standard_normal((40, 60))
    with pytest.raises(ValueError, match="k = 39 features on 40 training rows"):
        Abess(k=39).fit(wide, np.r_[np.zeros(20), np.ones(20)])
    with pytest.warns(UserWarning, match="more than half as many features as rows"):
        Abess(k=25).fit(wide, np.r_[np.zeros(20), np.ones(20)])
