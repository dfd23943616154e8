"""Generators reproduce the statistics of the papers' designs; the catalogue builds them all."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import (
    catalogue,
    catalogue_entries,
    make,
    make_fgm_groups,
    make_fgm_linear,
    make_fsa_correlated,
    make_fsa_equicorrelated,
    make_fsa_nonlinear,
    make_ranking,
    make_semi_supervised,
    make_text_like,
    make_textures,
    make_xor,
)


def test_fgm_linear_labels_are_sign_of_planted_weights():
    ds = make_fgm_linear(n_samples=300, n_features=500, n_informative=40, n_test=200, seed=1)
    w = ds.meta["w"]
    assert np.flatnonzero(w).tolist() == ds.truth.tolist() and ds.truth.size == 40
    np.testing.assert_array_equal(ds.y, np.sign(ds.X @ w))
    np.testing.assert_array_equal(ds.y_test, np.sign(ds.X_test @ w))
    assert 0.4 < np.mean(ds.y == 1) < 0.6
    assert abs(ds.X.mean()) < 0.02 and abs(ds.X.std() - 1) < 0.02


def test_fgm_weightings_have_the_papers_shapes():
    kw = dict(n_samples=10, n_features=2000, n_informative=1000, n_test=10, seed=3)
    w1, w2, w3 = (make_fgm_linear(weighting=t, **kw).meta["w"] for t in ("I", "II", "III"))
    support = w1 != 0
    np.testing.assert_allclose(w2[support], w1[support] ** 0.3)
    np.testing.assert_allclose(w3[support], w1[support] ** 3)
    # Type II is flatter, Type III sharper: compare the means of U(0,1)^p = 1/(p+1)
    assert abs(w1[support].mean() - 0.5) < 0.03
    assert abs(w2[support].mean() - 1 / 1.3) < 0.03
    assert abs(w3[support].mean() - 0.25) < 0.03


def test_fgm_density_subsampling_is_sparse():
    ds = make_fgm_linear(n_samples=400, n_features=3000, n_informative=50, n_test=100,
                         density=0.01, seed=0)
    assert sp.issparse(ds.X) and sp.issparse(ds.X_test)
    assert abs(ds.X.nnz / (400 * 3000) - 0.01) < 0.001
    np.testing.assert_array_equal(ds.y, np.where(ds.X @ ds.meta["w"] >= 0, 1, -1))


def test_fgm_groups():
    ds = make_fgm_groups(n_samples=200, n_groups=50, group_size=10, n_informative_groups=5,
                         n_test=50, seed=0)
    assert ds.X.shape == (200, 500) and ds.groups.shape == (500,)
    assert np.bincount(ds.groups).tolist() == [10] * 50
    informative = np.unique(ds.groups[ds.truth])
    assert informative.size == 5 and ds.truth.size == 50
    np.testing.assert_array_equal(informative, ds.meta["informative_groups"])


def test_fsa_correlation_is_delta_to_the_lag():
    ds = make_fsa_correlated(n_samples=20000, n_features=60, k_star=5, n_test=10, seed=0)
    corr = np.corrcoef(ds.X, rowvar=False)
    for lag in (1, 2, 5, 10):
        observed = np.mean(np.diag(corr, lag))
        assert abs(observed - 0.9**lag) < 0.01, (lag, observed)
    assert abs(ds.X.var(axis=0).mean() - 1) < 0.02


def test_fsa_classification_truth_and_balance():
    ds = make_fsa_correlated(n_samples=2000, n_features=200, k_star=10, seed=4)
    np.testing.assert_array_equal(ds.truth, np.arange(10, 101, 10) - 1)
    np.testing.assert_array_equal(ds.y, (ds.X[:, ds.truth].sum(1) > 0).astype(int))
    assert 0.45 < ds.y.mean() < 0.55


def test_fsa_label_noise_flips_about_half_of_ten_percent():
    clean = make_fsa_correlated(n_samples=20000, n_features=100, k_star=5, seed=2)
    noisy = make_fsa_correlated(n_samples=20000, n_features=100, k_star=5, label_noise=0.1,
                                seed=2)
    np.testing.assert_array_equal(clean.X, noisy.X)
    wrong = np.mean(clean.y != noisy.y)
    assert 0.04 < wrong < 0.06


def test_fsa_regression_noise_is_unit():
    ds = make_fsa_correlated(n_samples=20000, n_features=300, k_star=30, task="regression",
                             seed=0)
    residual = ds.y - ds.X[:, ds.truth].sum(1)
    assert abs(residual.std() - 1) < 0.03 and ds.task == "regression"


def test_equicorrelated_correlation():
    ds = make_fsa_equicorrelated(n_samples=20000, n_features=40, k_star=3, alpha=0.5, seed=0)
    assert ds.X.dtype == np.float32
    corr = np.corrcoef(ds.X.astype(float), rowvar=False)
    off = corr[~np.eye(40, dtype=bool)]
    assert abs(off.mean() - 0.25 / 1.25) < 0.01


def test_nonlinear_sets_have_no_linear_signal():
    ds = make_fsa_nonlinear(n_samples=20000, n_features=60, k_star=3, seed=0)
    for j in ds.truth:
        assert abs(np.corrcoef(ds.X[:, j], ds.y)[0, 1]) < 0.03
    xor = make_xor(n_samples=20000, n_features=10, seed=0)
    for j in range(10):
        assert abs(np.corrcoef(xor.X[:, j], xor.y)[0, 1]) < 0.03
    assert 0.45 < np.mean(xor.y == 1) < 0.55


def test_textures_and_text_like():
    tex = make_textures(n_per_class=20, n_test_per_class=5, seed=0)
    assert tex.image_shape == (16, 16) and tex.X.shape == (60, 256)
    assert np.bincount(tex.y).tolist() == [20, 20, 20]
    text = make_text_like(n_samples=3000, n_features=2000, seed=0)
    assert sp.issparse(text.X) and text.X.min() >= 0
    assert 0.03 < np.mean(text.y == 1) < 0.07
    norms = np.sqrt(np.asarray(text.X.multiply(text.X).sum(1)).ravel())
    np.testing.assert_allclose(norms, 1.0)


def test_ranking_has_queries_and_grades():
    ds = make_ranking(n_queries=10, docs_per_query=6, n_features=60, k_star=2, seed=0)
    assert ds.task == "ranking" and len(np.unique(ds.query)) == 10
    assert set(np.unique(ds.y)) == {0, 1, 2}


@pytest.mark.parametrize("setting", ["transductive", "semi-supervised"])
def test_semi_supervised_helper(setting):
    base = make("digits-2v3")
    ds = make_semi_supervised(base, n_labeled=10, setting=setting, seed=0)
    assert ds.X.shape[0] == 10 and np.unique(ds.y, return_counts=True)[1].tolist() == [5, 5]
    n_rest = base.n_samples - 10
    if setting == "transductive":
        assert ds.X_unlabeled.shape[0] == n_rest and ds.X_test.shape[0] == n_rest
    else:
        assert ds.X_unlabeled.shape[0] + ds.X_test.shape[0] == n_rest


def test_generators_are_seeded():
    a = make_fsa_correlated(n_samples=50, n_features=30, k_star=2, seed=7)
    b = make_fsa_correlated(n_samples=50, n_features=30, k_star=2, seed=7)
    c = make_fsa_correlated(n_samples=50, n_features=30, k_star=2, seed=8)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)


def test_catalogue_lists_required_entries_and_builds_each():
    names = catalogue()
    for required in ("digits-3v8", "digits-2v3", "digits-4v7", "digits", "breast-cancer",
                     "wine", "fgm-type1", "fgm-type2", "fgm-type3", "fgm-groups",
                     "fsa-correlated", "fsa-noisy", "fsa-regression", "fsa-equicorrelated",
                     "xor", "textures"):
        assert required in names
    for entry in catalogue_entries():
        small = {}
        for p in entry.params:
            if p.name in ("n_samples", "n_test", "n_per_class", "n_queries"):
                small[p.name] = max(int(p.low), min(p.default, 300))
        ds = entry.make(**small)
        assert ds.name == entry.name and ds.n_samples > 0
        if entry.name.startswith("digits-") and not entry.name.endswith(("semi", "vr")):
            assert ds.image_shape == (8, 8) and len(ds.classes) == 2


def test_catalogue_rejects_unknown_knobs():
    with pytest.raises(ValueError, match="has no parameter"):
        make("xor", bogus=3)
    with pytest.raises(ValueError, match="below its minimum"):
        make("xor", n_samples=-5)


def test_split_is_stratified_and_idempotent():
    ds = make("breast-cancer").split(test_size=0.3, seed=0)
    assert ds.has_test and ds.X.shape[0] + ds.X_test.shape[0] == 569
    assert abs(ds.y.mean() - ds.y_test.mean()) < 0.02
    assert ds.split() is ds
