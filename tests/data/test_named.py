"""A catalogue set's names reach the estimators fitted on ``data.X`` (sparse text and dense
tables), survive the trips a dataset makes (folds, pickles to worker processes), and come
back out of ``get_feature_names_out`` and ``set_output(transform="pandas")``."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import explorer
from explorer import FGM, FSA
from explorer.data import Dataset, NamedArray, NamedCSR, as_matrix, with_names


@pytest.fixture(scope="module")
def foods():
    return explorer.load("fine-foods")


def test_the_words_of_fine_foods_reach_the_estimator(foods):
    assert sp.issparse(foods.X) and isinstance(foods.X, NamedCSR)
    model = FGM(k=10).fit(foods.X, foods.y)
    np.testing.assert_array_equal(model.feature_names_in_, foods.feature_names)
    words = model.get_feature_names_out()
    assert len(words) == 10
    assert list(words) == [foods.feature_names[j] for j in model.selected_features_]
    assert "great" in words
    assert model.score(foods.X_test, foods.y_test) > 0.7  # the names changed no number


def test_grants_predictors_reach_the_estimator_and_a_pipeline():
    data = explorer.load("grants").split()
    assert isinstance(data.X, NamedArray)
    model = FSA(k=5).fit(data.X, data.y)
    assert set(model.get_feature_names_out()) <= set(data.feature_names)
    pipe = make_pipeline(FSA(k=5), LogisticRegression(max_iter=1000)).fit(data.X, data.y)
    assert pipe.score(data.X_test, data.y_test) > 0.7


def test_sparse_selections_come_out_as_sparse_frames(foods):
    model = FGM(k=8).set_output(transform="pandas").fit(foods.X, foods.y)
    out = model.transform(foods.X_test)
    assert isinstance(out, pd.DataFrame) and out.shape == (foods.X_test.shape[0], 8)
    assert all(isinstance(t, pd.SparseDtype) for t in out.dtypes)
    assert list(out.columns) == list(model.get_feature_names_out())
    np.testing.assert_array_equal(out.sparse.to_coo().toarray(),
                                  foods.X_test[:, model.selected_features_].toarray())
    # and a frame of sparse columns is taken as sparse input by the next selector
    second = FGM(k=3).fit(model.transform(foods.X), foods.y)
    assert set(second.get_feature_names_out()) <= set(model.get_feature_names_out())
    assert sp.issparse(as_matrix(out))


def test_default_output_stays_a_plain_sparse_matrix(foods):
    model = FGM(k=4).fit(foods.X, foods.y)
    out = model.transform(foods.X_test)
    assert sp.issparse(out) and type(out) is sp.csr_matrix and out.shape[1] == 4


def test_names_survive_folds_and_pickles(foods):
    fold = foods.fold(np.arange(100), np.arange(100, 150))
    assert list(fold.X.columns) == foods.feature_names
    assert list(fold.X_test.columns) == foods.feature_names
    data = explorer.load("grants")
    back = pickle.loads(pickle.dumps(data))
    assert isinstance(back.X, NamedArray) and list(back.X.columns) == data.feature_names
    np.testing.assert_array_equal(back.X, data.X)


def test_derived_matrices_drop_the_names():
    X = with_names(np.eye(3), ["a", "b", "c"])
    assert X[:, :2].columns is None and (X * 2).columns is None
    S = with_names(sp.random(4, 3, density=0.5, format="csr", random_state=0), ["a", "b", "c"])
    assert getattr(S[:, :2], "columns", None) is None and S.copy().columns is None
    assert type(as_matrix(S)) is sp.csr_matrix and type(as_matrix(X)) is np.ndarray
    assert with_names(np.eye(3), ["a", "b"]) is not None  # names that do not fit: unnamed
    assert getattr(with_names(np.eye(3), ["a", "b"]), "columns", None) is None


def test_a_dataset_without_names_and_a_refitted_column_order():
    data = Dataset(X=np.eye(4), y=np.array([0, 1, 0, 1]))
    assert type(data.X) is np.ndarray
    named = Dataset(X=np.random.default_rng(0).random((20, 3)), y=np.r_[np.zeros(10),
                    np.ones(10)], feature_names=["a", "b", "c"])
    model = FSA(k=2).fit(named.X, named.y)
    other = with_names(named.X[:, ::-1].copy(), ["c", "b", "a"])
    with pytest.raises(explorer.data.DataError, match="column names are not those"):
        model.predict(other)
