"""Exactly k features on more than two classes: the one-vs-rest methods (FGM, FS-multi,
ℓ1-logistic) cut the union of their per-class fits to the k features of largest
Σ_c |w_cj|·σ_j and refit every class on them."""

import numpy as np
import pytest
import scipy.sparse as sp

from explorer import load
from explorer.data import DataError
from explorer.methods import get_method

OVR_WITH_K = ["fgm", "fs-multi", "l1-logreg", "fsa"]


@pytest.fixture(scope="module")
def digits():
    data = load("digits")
    return np.asarray(data.X, dtype=float), np.asarray(data.y)


@pytest.mark.parametrize("name", OVR_WITH_K)
@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_k_counts_the_model_not_each_class(name, storage, digits):
    X, y = digits
    X = sp.csr_matrix(X) if storage == "csr" else X
    k = 6
    per_class = [get_method(name)(k=k).fit(X, np.where(y == c, 1, -1)).support_ for c in
                 np.unique(y)]
    assert np.logical_or.reduce(per_class).sum() > k  # the union the cut has to fix
    est = get_method(name)(k=k).fit(X, y)
    assert est.n_selected_ == k == est.get_support().sum()
    assert est.transform(X).shape == (X.shape[0], k)
    kept = np.flatnonzero(est.support_)
    for member in est.estimators_:  # every class uses only the kept columns
        assert set(np.flatnonzero(member.coef_)) <= set(kept)
    assert est.score(X, y) > 0.6  # ten classes from six pixels: far above the 0.1 of chance


def test_the_kept_features_are_the_largest_effects_and_each_class_is_refit_on_them(digits):
    X, y = digits
    k = 5
    classes = np.unique(y)
    members = [get_method("fgm")(k=k).fit(X, np.where(y == c, 1, -1)) for c in classes]
    effect = np.abs(np.vstack([m.coef_ for m in members])).sum(0) * X.std(axis=0)
    expected = np.sort(np.argsort(-effect, kind="stable")[:k])
    est = get_method("fgm")(k=k).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(est.support_), expected)
    for c, member in zip(classes, est.estimators_):  # = a binary fit on those columns alone
        alone = get_method("fgm")(k=k).fit(X[:, expected], np.where(y == c, 1, -1))
        np.testing.assert_allclose(member.coef_[expected], alone.coef_, atol=1e-10)
        assert member.intercept_ == pytest.approx(alone.intercept_, abs=1e-10)
    cut = [r for r in est.history_ if r.info.get("stage") == "shared cut"]
    assert [r.info["class"] for r in cut] == [int(c) for c in classes]


def test_binary_and_unset_k_are_unchanged(digits):
    X, y = digits
    b = np.where(y == 3, 1, -1)
    assert get_method("fgm")(k=6).fit(X, b).n_selected_ == 6
    est = get_method("fgm")(B=2, max_outer=3).fit(X, y)  # B alone: the union, as before
    union = np.logical_or.reduce([m.support_ for m in est.estimators_])
    np.testing.assert_array_equal(est.support_, union)
    assert not any(r.info.get("stage") == "shared cut" for r in est.history_)


@pytest.mark.parametrize("name", ["lasso", "abess-reg"])
def test_a_regression_method_on_class_labels_says_so(name):
    data = load("hepatic-injury")
    with pytest.raises(DataError, match="holds class labels .*'mild'.*regression method needs "
                                        "numbers"):
        get_method(name)(k=5).fit(data.X, data.y)


def test_the_shared_cut_is_explained_with_the_dataset_names():
    from explorer.texts import explain

    data = load("wine")
    est = get_method("fgm")(k=3).fit(data.X, data.y)
    record = est.history_[-1]
    text = explain("fgm", record, data.names())
    assert record.info["stage"] == "shared cut" and "Exactly k for all classes" in text
    assert all(data.names()[j] in text for j in record.selected)


@pytest.mark.parametrize("name", ["fgm", "fs-multi"])
def test_a_pinned_feature_stays_in_the_shared_cut_at_weight_zero(name, digits):
    """A pinned column that carries no weight (constant) was in the shared k but fell out of
    ``support_`` after the refit, which held k − 1 features."""
    X, y = digits
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    pinned = X.shape[1] - 1
    est = get_method(name)(k=6, always_include=[pinned]).fit(X, y)
    assert est.support_[pinned] and est.n_selected_ == 6 == est.support_.sum()
    for member in est.estimators_:
        assert member.support_[pinned]


def test_abess_takes_many_classes_with_its_multinomial_model(digits):
    X, y = digits
    est = get_method("abess")(k=12).fit(X, y)
    assert est.coef_.shape == (10, 64) and est.n_selected_ == 12
    assert set(np.flatnonzero(np.any(est.coef_ != 0, axis=0))) == set(est.selected_features_)
    assert est.score(X, y) > 0.8
    labels = np.array([f"digit {c}" for c in y])  # labels as words keep their names
    named = get_method("abess")(k=12).fit(X, labels)
    assert named.predict(X[:3]).tolist() == [f"digit {c}" for c in
                                              est.predict(X[:3]).tolist()]


def test_every_classifier_takes_fifteen_classes():
    from explorer.methods import REGISTRY

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(1, 16), 8)
    X = rng.normal(size=(120, 36)) + np.eye(15, 36)[y - 1] * 3.0
    for name, cls in sorted(REGISTRY.items()):
        if cls()._task != "classification":
            continue
        params = {"k": 10} if "k" in cls().get_params() else {}
        params = {"m": 10} if name == "fs-manifold" else params
        est = cls(**params).fit(X, y)
        assert est.predict(X).shape == (120,), name
        assert set(est.predict(X)) <= set(y.tolist()), name
