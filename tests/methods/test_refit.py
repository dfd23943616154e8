"""FSA's ``model="rbf_svm"``: a kernel SVM refitted on the kept variables, for labels that
depend on interactions no additive model can express."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestClassifier

from explorer import FSA
from explorer.data import load, make


@pytest.fixture(scope="module")
def interactions():
    return make("interactions", seed=0)


@pytest.fixture(scope="module")
def pair(interactions):
    ds = interactions
    return FSA(k=10).fit(ds.X, ds.y), FSA(k=10, model="rbf_svm").fit(ds.X, ds.y)


def test_refit_keeps_the_selection_and_predicts_what_the_additive_model_cannot(interactions,
                                                                             pair):
    ds = interactions
    own, refit = pair
    np.testing.assert_array_equal(refit.selected_features_, own.selected_features_)
    assert np.isin(own.selected_features_, ds.truth).sum() >= 8
    assert refit.refit_ is not None and own.refit_ is None
    gain = refit.score(ds.X_test, ds.y_test) - own.score(ds.X_test, ds.y_test)
    assert gain > 0.10, gain
    cols = own.selected_features_
    forest = RandomForestClassifier(300, random_state=0).fit(ds.X[:, cols], ds.y)
    assert refit.score(ds.X_test, ds.y_test) >= forest.score(ds.X_test[:, cols],
                                                             ds.y_test) - 0.05


def test_refit_reports_what_it_chose(pair):
    chosen = pair[1].refit_params_
    assert set(chosen) == {"C", "gamma", "cv_score"}
    assert chosen["C"] in (1.0, 10.0, 100.0) and 0.5 <= chosen["cv_score"] <= 1.0


def test_refit_is_reproducible(interactions, pair):
    ds = interactions
    again = FSA(k=10, model="rbf_svm").fit(ds.X, ds.y)
    np.testing.assert_array_equal(again.decision_function(ds.X_test),
                                  pair[1].decision_function(ds.X_test))


def test_refit_many_classes_gives_one_column_per_class():
    ds = load("wine")
    est = FSA(k=4, model="rbf_svm").fit(ds.X, ds.y)
    scores = est.decision_function(ds.X)
    assert scores.shape == (ds.X.shape[0], 3)
    np.testing.assert_array_equal(est.predict(ds.X), est.classes_[scores.argmax(1)])
    assert est.score(ds.X, ds.y) > 0.9


def test_refit_regression_uses_a_kernel_regressor():
    ds = make("fsa-regression", n_samples=400, n_features=200, k_star=5)
    est = FSA(k=5, loss="squared", model="rbf_svm").fit(ds.X, ds.y)
    assert est.predict(ds.X_test).shape == (ds.X_test.shape[0],)
    assert est.score(ds.X_test, ds.y_test) > 0.8
    assert not hasattr(est, "decision_function")


def test_refit_on_sparse_rows_equals_dense(interactions):
    ds = make("interactions", n_samples=400, n_features=60, seed=1)
    dense = FSA(k=6, model="rbf_svm").fit(ds.X, ds.y)
    sparse = FSA(k=6, model="rbf_svm").fit(sp.csr_matrix(ds.X), ds.y)
    np.testing.assert_array_equal(dense.selected_features_, sparse.selected_features_)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(ds.X_test)),
                               dense.decision_function(ds.X_test), atol=1e-8)


def test_refit_honours_excluded_features():
    ds = make("interactions", n_samples=400, n_features=60, seed=2)
    banned = ds.truth[:2]
    est = FSA(k=6, model="rbf_svm", exclude=banned).fit(ds.X, ds.y)
    assert not np.isin(banned, est.selected_features_).any()
    moved = ds.X_test.copy()
    moved[:, banned] = 1e6  # excluded columns play no part in what it predicts
    np.testing.assert_allclose(est.decision_function(moved), est.decision_function(ds.X_test))


def test_refit_is_skipped_when_the_fit_is_stopped():
    ds = make("interactions", n_samples=300, n_features=40, seed=3)
    est = FSA(k=4, model="rbf_svm").fit(ds.X, ds.y, callback=lambda record: False)
    assert est.stopped_early_ and est.refit_ is None
    assert est.predict(ds.X_test).shape == (ds.X_test.shape[0],)


def test_ranking_refuses_a_refit():
    ds = make("fsa-ranking", n_queries=10, docs_per_query=5, n_features=60)
    with pytest.raises(ValueError, match="ranking"):
        FSA(k=2, loss="ranking", model="rbf_svm").fit(ds.X, ds.y, query=ds.query)


def test_unknown_model_is_refused():
    ds = make("interactions", n_samples=100, n_features=20, seed=4)
    with pytest.raises(ValueError, match="model"):
        FSA(k=2, model="forest").fit(ds.X, ds.y)
