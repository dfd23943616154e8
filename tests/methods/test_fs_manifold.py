"""FS-Manifold: the Woodbury manifold kernel, the level-method pieces against generic solvers,
the saddle value against a brute-force search, bounds, τ = 0, sparse input."""

from __future__ import annotations

import itertools
import warnings

import clarabel
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from explorer import FSManifold
from explorer.data import DataError, make
from explorer.engines.fs_manifold import (
    knn_graph,
    laplacian,
    manifold_kernel,
    manifold_kernel_direct,
)
from explorer.methods.fs_manifold import _weighted_gram
from explorer.optim.level import level_projection, lower_bound, project_capped_simplex
from explorer.texts import explain


@pytest.fixture(scope="module")
def semi():
    return make("digits-2v3-semi", n_labeled=10, seed=1)


@pytest.mark.parametrize("d", [6, 40, 90])
@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
@pytest.mark.parametrize("sparse", [False, True])
def test_woodbury_kernel_equals_the_direct_formula(d, kind, sparse):
    rng = np.random.default_rng(d)
    X = np.abs(rng.normal(size=(60, d))) * (rng.random((60, d)) < 0.6)
    X[:, 0] += 1.0  # keep every row non-zero for the cosine graph
    W = knn_graph(X, 7, "cosine", "heat")
    L = laplacian(W, kind)
    mk = manifold_kernel(sp.csr_matrix(X) if sparse else X, 12, L)
    direct = manifold_kernel_direct(X, 12, L, mk.ridge)
    np.testing.assert_allclose(mk.H, direct, rtol=1e-6, atol=1e-8 * np.abs(direct).max())
    assert mk.components == 1


def test_graph_and_laplacians():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    W = knn_graph(X, 5, "euclidean", "binary")
    assert (W != W.T).nnz == 0 and W.diagonal().sum() == 0
    assert np.all(np.asarray((W > 0).sum(1)).ravel() >= 5)
    L = laplacian(W).toarray()
    np.testing.assert_allclose(L.sum(1), 0, atol=1e-12)
    assert np.linalg.eigvalsh(L).min() > -1e-10
    Ln = laplacian(W, "normalized").toarray()
    ev = np.linalg.eigvalsh(Ln)
    assert ev.min() > -1e-10 and ev.max() <= 2 + 1e-10


def test_capped_simplex_projection_is_the_nearest_point():
    rng = np.random.default_rng(1)
    for _ in range(20):
        v = rng.normal(size=6) * 2
        m = float(rng.integers(1, 5))
        p = project_capped_simplex(v, m)
        assert p.sum() == pytest.approx(m) and p.min() >= 0 and p.max() <= 1
        # any other feasible point is farther (random feasible points)
        for _ in range(50):
            q = project_capped_simplex(rng.normal(size=6) * 3, m)
            assert np.sum((p - v) ** 2) <= np.sum((q - v) ** 2) + 1e-10


def _qp_reference(p0, c, G, level, m):
    """min ‖p − p0‖² s.t. c − Gp ≤ ℓ, 0 ≤ p ≤ 1, Σp = m — a generic conic QP."""
    d = p0.size
    P = 2 * sp.eye(d, format="csc")
    q = -2 * p0
    A = sp.vstack([sp.csr_matrix(np.ones((1, d))), sp.csr_matrix(-G), -sp.eye(d), sp.eye(d)],
                  format="csc")
    b = np.concatenate([[m], level - c, np.zeros(d), np.ones(d)])
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(len(c) + 2 * d)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    sol = clarabel.DefaultSolver(P, q, A, b, cones, settings).solve()
    return np.array(sol.x)


@pytest.mark.parametrize("seed", range(5))
def test_level_projection_matches_a_generic_qp(seed):
    rng = np.random.default_rng(seed)
    d, k, m = 8, 4, 3.0
    G = np.abs(rng.normal(size=(k, d)))
    c = rng.uniform(2, 3, size=k)
    p0 = project_capped_simplex(rng.random(d), m)
    low, _ = lower_bound(c, G, m)
    upper = float(np.max(c - G @ p0))
    level = 0.9 * upper + 0.1 * low
    ours = level_projection(p0, c, G, level, m)
    ref = _qp_reference(p0, c, G, level, m)
    np.testing.assert_allclose(ours, ref, atol=1e-5)
    assert np.all(c - G @ ours <= level + 1e-6)


def _libsvm_dual(K, y, C):
    """The inner max by libsvm directly (independent of the explorer's dual solver)."""
    svm = SVC(kernel="precomputed", C=C, tol=1e-10, max_iter=10**7).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[svm.support_] = np.abs(svm.dual_coef_.ravel())
    return alpha


def _saddle_by_grid(X, y, m, C, step=0.02):
    """min over a fine grid of P of the SVM dual value (the inner max, by libsvm)."""
    d = X.shape[1]
    best = np.inf
    grid = np.arange(0, 1 + 1e-9, step)
    for p in itertools.product(grid, repeat=d - 1):
        last = m - sum(p)
        if not 0 <= last <= 1:
            continue
        pv = np.array([*p, last])
        K = _weighted_gram(X, pv)
        alpha = _libsvm_dual(K, y, C)
        s = alpha * y
        best = min(best, alpha.sum() - 0.5 * s @ K @ s)
    return best


@pytest.mark.filterwarnings("ignore:FS-Manifold's level method used its max_iter")
def test_level_method_value_equals_brute_force_saddle_point():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=12) > 0, 1.0, -1.0)
    est = FSManifold(m=1, tau=0.0, C=0.5, max_iter=300, tol=1e-6, n_neighbors=3).fit(X, y)
    value = _saddle_by_grid(X, y, 1, 0.5)
    assert est.lower_bound_ <= value + 1e-6
    assert est.upper_bound_ == pytest.approx(value, rel=2e-2)
    assert est.upper_bound_ - est.lower_bound_ <= 1e-5 * abs(est.upper_bound_)


@pytest.mark.filterwarnings("ignore:FS-Manifold's level method used its max_iter")
def test_bounds_are_monotone_and_records_complete(semi):
    est = FSManifold(m=8, tau=0.5, rho="auto", laplacian="normalized", max_iter=40).fit(
        semi.X, semi.y, X_unlabeled=semi.X_unlabeled)
    lows = [r.lower for r in est.history_]
    ups = [r.upper for r in est.history_]
    assert all(b >= a - 1e-9 for a, b in zip(lows, lows[1:]))
    assert all(b <= a + 1e-12 for a, b in zip(ups, ups[1:]))
    assert all(r.info["gap"] >= -1e-9 for r in est.history_)
    # φ(p) ≥ 0, so no bound is reported below 0 (the first cuts' LP minimum is), and each
    # record's gap is that of its bounds
    assert min(lows) >= 0.0 and est.lower_bound_ >= 0.0
    assert all(r.inner_measure <= (r.upper - r.lower) / r.upper + 1e-12 for r in est.history_)
    assert all(r.n_selected == 8 == r.selected.size for r in est.history_)
    # ρ = "auto" balances the two kernel traces at p⁰: the first ratio is τ²/(1−τ)² = 1
    assert est.history_[0].info["manifold_ratio"] == pytest.approx(1.0, rel=1e-6)
    assert "trace ratio" in explain("fs-manifold", est.history_[-1])
    assert est.n_selected_ == 8 and est.score(semi.X_test, semi.y_test) > 0.8


@pytest.mark.filterwarnings("ignore:FS-Manifold's level method used its max_iter")
def test_tau_zero_is_supervised_selection(semi):
    # raw columns: scaled ones would depend on the unlabelled rows through their scales
    kw = dict(m=6, tau=0.0, max_iter=30, feature_scaling=None)
    a = FSManifold(**kw).fit(semi.X, semi.y)
    b = FSManifold(**kw).fit(semi.X, semi.y, X_unlabeled=semi.X_unlabeled)
    np.testing.assert_array_equal(a.get_support(), b.get_support())
    np.testing.assert_allclose(a.p_, b.p_, atol=1e-8)


@pytest.mark.filterwarnings("ignore:FS-Manifold's level method used its max_iter")
def test_sparse_input_equals_dense():
    ds = make("text-like", n_samples=300, n_features=400, seed=2)
    X, Xu = ds.X[:40], ds.X[40:]
    y = ds.y[:40]
    y[:3] = 1  # make sure both classes are present
    dense = FSManifold(m=10, tau=0.4, max_iter=20).fit(X.toarray(), y, X_unlabeled=Xu.toarray())
    sparse = FSManifold(m=10, tau=0.4, max_iter=20).fit(X, y, X_unlabeled=Xu)
    np.testing.assert_array_equal(dense.get_support(), sparse.get_support())
    np.testing.assert_allclose(dense.p_, sparse.p_, atol=1e-6)


@pytest.mark.filterwarnings("ignore:FS-Manifold's level method used its max_iter")
@pytest.mark.slow
def test_tau_one_is_rejected_and_auto_is_cross_validated(semi):
    with pytest.raises(ValueError, match="tau=1 removes the feature term"):
        FSManifold(tau=1.0).fit(semi.X, semi.y)
    est = FSManifold(m=6, tau="auto", max_iter=15).fit(semi.X, semi.y,
                                                       X_unlabeled=semi.X_unlabeled)
    assert set(est.tau_scores_) == {round(0.1 * i, 1) for i in range(10)}
    assert est.tau_ in est.tau_scores_
    assert est.tau_scores_[est.tau_] == max(est.tau_scores_.values())


def test_multiclass_joint_form():
    from explorer.data import make_semi_supervised

    wine = make("wine")
    wine.X = (wine.X - wine.X.mean(0)) / wine.X.std(0)
    ds = make_semi_supervised(wine, n_labeled=30, setting="transductive", seed=0)
    est = FSManifold(m=4, tau=0.3, max_iter=25, metric="euclidean").fit(
        ds.X, ds.y, X_unlabeled=ds.X_unlabeled)
    assert est.coef_.shape == (3, 13) and est.n_selected_ == 4
    assert est.score(ds.X_test, ds.y_test) > 0.75


def test_bad_unlabeled_shape(semi):
    with pytest.raises((ValueError, DataError), match="features"):
        FSManifold(m=3).fit(semi.X, semi.y, X_unlabeled=semi.X_unlabeled[:, :10])


@pytest.mark.filterwarnings("ignore:FS-Manifold's level method used its max_iter")
def test_tau_moves_the_model_at_the_defaults():
    """digits-3v8-semi, m = 10: with ρ = 10 the manifold term was ~1e-6 of the feature term
    and τ ∈ {0, ½, 0.9} gave the same 10 features; the default ρ = "auto" balances them."""
    from explorer.data import load

    data = load("digits-3v8-semi")
    fits = {tau: FSManifold(m=10, tau=tau).fit(data.X, data.y, X_unlabeled=data.X_unlabeled)
            for tau in (0.0, 0.5, 0.9)}
    supports = {tau: tuple(est.selected_features_) for tau, est in fits.items()}
    assert len(set(supports.values())) == 3
    assert 0.1 < fits[0.5].history_[-1].info["manifold_ratio"] < 10
    assert "transductive" in data.summary()


def test_a_level_method_out_of_iterations_says_so(semi):
    with pytest.warns(Warning, match="raise max_iter"):
        est = FSManifold(m=6, max_iter=3).fit(semi.X, semi.y)
    assert not est.converged_ and est.n_selected_ == 6


@pytest.mark.parametrize("name", ["digits-3v8-semi", "breast-cancer"])
def test_the_defaults_certify_their_selection_on_real_data(name):
    """At the defaults (tol 1e-3, max_iter 100) the level method closes its gap on the
    catalogue's semi-supervised digits and on raw-unit features with ten labels, whose SVM
    value is ~1e-5 (the projection's absolute tolerances stalled there for 400 iterations)."""
    from explorer.data import load, make_semi_supervised

    data = load(name)
    if data.X_unlabeled is None:
        data = make_semi_supervised(data, n_labeled=10)
    raw = {"feature_scaling": None} if name == "breast-cancer" else {}  # raw units
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        est = FSManifold(m=10, **raw).fit(data.X, data.y, X_unlabeled=data.X_unlabeled)
    assert est.converged_ and len(est.history_) < 100
    assert est.upper_bound_ - est.lower_bound_ <= 1e-3 * est.upper_bound_
    if name == "breast-cancer":
        assert est.upper_bound_ < 1e-3  # the small-valued case is exercised


@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_scaled_columns_are_the_raw_fit_of_prescaled_data_mapped_back(storage):
    """feature_scaling: the fit on raw columns in units 1e-3…1e3 equals the raw fit
    (feature_scaling=None) of the columns divided by their RMS, its weights mapped back."""
    from explorer.data import load, make_semi_supervised

    data = make_semi_supervised(load("breast-cancer"), n_labeled=20)
    X, Xu = np.asarray(data.X, float), np.asarray(data.X_unlabeled, float)
    rms = np.sqrt(np.mean(np.vstack([X, Xu]) ** 2, axis=0))
    if storage == "csr":
        X, Xu = sp.csr_matrix(X), sp.csr_matrix(Xu)
    auto = FSManifold(m=5).fit(X, data.y, X_unlabeled=Xu)
    scaled = FSManifold(m=5, feature_scaling=None).fit(
        X @ sp.diags(1 / rms) if sp.issparse(X) else X / rms, data.y,
        X_unlabeled=Xu @ sp.diags(1 / rms) if sp.issparse(Xu) else Xu / rms)
    np.testing.assert_array_equal(auto.get_support(), scaled.get_support())
    np.testing.assert_allclose(auto.p_, scaled.p_, atol=1e-8)
    np.testing.assert_allclose(auto.coef_ * rms, scaled.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(auto.decision_function(data.X_test),
                               scaled.decision_function(np.asarray(data.X_test) / rms),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.slow
def test_features_in_mixed_units_are_selected_on_their_merit():
    """pd-speech's raw columns span 1e-21 to 4e10: unscaled, p stays at its start and the
    first m features are taken (test accuracy the majority's); scaled by default, not."""
    from explorer.data import load

    data = load("pd-speech").split(test_size=0.3, seed=0)
    raw = FSManifold(m=10, feature_scaling=None).fit(data.X, data.y)
    auto = FSManifold(m=10).fit(data.X, data.y)
    np.testing.assert_array_equal(raw.selected_features_, np.arange(10))
    assert not np.array_equal(auto.selected_features_, np.arange(10))
    assert auto.score(data.X_test, data.y_test) > raw.score(data.X_test, data.y_test) + 0.05


# ---------------------------------------------------------------------- many rows
@pytest.mark.parametrize("name", ["digits-3v8-semi", "digits-2v3-semi", "digits-4v7-semi",
                                  "pd-speech"])
def test_the_routes_select_the_same_features_on_catalogue_sets(name):
    """At the default knobs the route auto picks (d × d on the digits, n × n on pd-speech)
    gives the n × n route's H to 1e-6 and the same selected features."""
    ds = make(name)
    kw = {} if ds.X_unlabeled is None else {"X_unlabeled": ds.X_unlabeled}
    auto = FSManifold().fit(ds.X, ds.y, **kw)
    gram = FSManifold(kernel="gram").fit(ds.X, ds.y, **kw)
    assert gram.kernel_route_ == "gram"
    assert auto.kernel_route_ == ("gram" if ds.X.shape[1] >= ds.X.shape[0] + (
        0 if ds.X_unlabeled is None else ds.X_unlabeled.shape[0]) else "covariance")
    assert np.linalg.norm(auto._mk.H - gram._mk.H) <= 1e-6 * np.linalg.norm(gram._mk.H)
    np.testing.assert_array_equal(auto.selected_features_, gram.selected_features_)


def test_records_say_which_routes_ran_and_the_stages_are_reported():
    semi = make("digits-3v8-semi")
    stages = []

    class Watch:
        def __call__(self, record):
            pass

        def progress(self, stage, fraction):
            stages.append((stage, fraction))

    fsm = FSManifold(m=10).fit(semi.X, semi.y, X_unlabeled=semi.X_unlabeled, callback=Watch())
    info = fsm.history_[0].info
    assert (info["kernel_route"], info["graph_route"], info["graph_recall"]) == (
        "covariance", "exact", 1.0)
    assert fsm.n_unlabeled_ == semi.X_unlabeled.shape[0]
    names = [s for s, _ in stages]
    assert names[0] == "finding the nearest neighbours" and \
        names[-1] == "building the manifold kernel"
    assert ("finding the nearest neighbours", 1.0) in stages


def test_a_stop_while_the_graph_is_built_leaves_no_model_and_says_so():
    semi = make("digits-3v8-semi")

    class StopAtOnce:
        def __call__(self, record):
            pass

        def cancelled(self):
            return True

    from explorer.methods.records import FitStopped
    with pytest.raises(FitStopped, match="before its first model"):
        FSManifold(m=10).fit(semi.X, semi.y, X_unlabeled=semi.X_unlabeled,
                             callback=StopAtOnce())


def test_unlabeled_rows_must_have_the_features_of_the_labeled_ones():
    semi = make("digits-3v8-semi")
    with pytest.raises(ValueError, match="X_unlabeled has 10 features, X has 64"):
        FSManifold(m=5).fit(semi.X, semi.y, X_unlabeled=semi.X_unlabeled[:, :10])
