"""FGM against independent references: scikit-learn's ℓ2 models, a conic solver, brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from explorer import FGM
from explorer.data import make
from explorer.features import LinearSpace, Poly2Space
from explorer.kernels import _reference as ref
from explorer.texts import explain
from tests.conftest import as_layout
from tests.reference_solvers import fgm_relaxation_reference, l12_master_reference


@pytest.fixture(scope="module")
def cancer():
    ds = make("breast-cancer")
    X = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    return X, np.where(ds.y == 1, 1, -1)


def test_one_block_is_an_l2_svm(cancer):
    X, y = cancer
    C = 0.5
    fgm = FGM(B=X.shape[1], C=C, fit_intercept=False, inner_tol=1e-14, max_inner=100000)
    fgm.fit(X, y)
    assert fgm.n_iter_ == 1 and fgm.history_[0].info["n_blocks"] == 1
    svm = LinearSVC(C=C / 2, fit_intercept=False, dual=False, tol=1e-12, max_iter=100000)
    svm.fit(X, y)
    np.testing.assert_allclose(fgm.coef_, svm.coef_.ravel(), atol=1e-5)


def test_one_block_is_l2_logistic_regression(cancer):
    X, y = cancer
    C = 0.5
    fgm = FGM(B=100, C=C, loss="logistic", fit_intercept=False, inner_tol=1e-14,
              max_inner=100000).fit(X, y)
    lr = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(fgm.coef_, lr.coef_.ravel(), atol=1e-5)


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_final_master_equals_conic_solver_on_its_blocks(loss):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 12))
    y = np.sign(X[:, :3] @ [1.0, -1.0, 0.5] + 0.3 * rng.normal(size=40))
    fgm = FGM(B=3, C=1.0, loss=loss, max_outer=3, tol=1e-12).fit(X, y)  # default inner_tol
    assert all(r.info["converged_inner"] for r in fgm.history_)
    last = fgm.history_[-1]
    assert last.inner_measure <= FGM().inner_tol  # the last master is solved to inner_tol
    assert all(r.inner_measure <= 1e-2 for r in fgm.history_)  # the others coarsely
    master = fgm._master
    blocks = [c.matrix for c in master.columns]
    _, _, obj = l12_master_reference(blocks, y, 1.0, loss, fit_intercept=True)
    # the certified gap bounds the distance to the optimum
    assert -1e-7 <= (last.objective - obj) / obj <= last.inner_measure + 1e-7


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("shape,seed", [((300, 40), 0), ((200, 150), 1), ((500, 20), 2)])
@pytest.mark.parametrize("c", [0.01, 1.0, 10.0])
def test_one_block_default_equals_sklearn(loss, shape, seed, c):
    """FGM with one block and its default tolerances is scikit-learn's ℓ2 model (squared
    hinge: LinearSVC with C = c for FGM's C = 2c; logistic: LogisticRegression, same C) to
    1e-4 relative coefficient error; the references are solved to 1e-12."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    y = np.sign(X[:, :5] @ rng.standard_normal(5) + 0.5 * rng.standard_normal(shape[0]))
    if loss == "squared_hinge":
        fgm = FGM(B=shape[1], C=2 * c, fit_intercept=False).fit(X, y)
        ref = LinearSVC(C=c, fit_intercept=False, dual=False, tol=1e-12, max_iter=100000)
    else:
        fgm = FGM(B=shape[1], C=c, loss="logistic", fit_intercept=False).fit(X, y)
        ref = LogisticRegression(C=c, fit_intercept=False, tol=1e-12, max_iter=100000)
    w = ref.fit(X, y).coef_.ravel()
    assert fgm.history_[-1].info["n_blocks"] == 1
    assert np.linalg.norm(fgm.coef_ - w) / np.linalg.norm(w) <= 1e-4


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # gap < floor
def test_bounds_are_monotone_and_bracket_the_relaxed_optimum():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 8))
    y = np.sign(X[:, :2] @ [1.0, -1.0] + 0.5 * rng.normal(size=30))
    C, B = 0.5, 2
    fgm = FGM(B=B, C=C, max_outer=40, tol=1e-12, inner_tol=1e-13, max_inner=100000)
    fgm.fit(X, y)
    lower = [r.lower for r in fgm.history_]
    upper = [r.upper for r in fgm.history_]
    assert all(b >= a - 1e-9 for a, b in zip(lower, lower[1:]))
    assert all(b <= a + 1e-9 for a, b in zip(upper, upper[1:]))
    optimum = fgm_relaxation_reference(X, y, C, B, fit_intercept=True)
    assert lower[-1] <= optimum + 1e-6 <= upper[-1] + 2e-6
    # with enough outer iterations the certificate is tight
    assert upper[-1] - lower[-1] <= 0.02 * upper[-1]


def test_records_carry_what_the_views_need(digits38):
    fgm = FGM(B=4).fit(digits38.X, digits38.y)
    first = fgm.history_[0]
    assert len(first.info["inner_objective"]) == first.inner_steps + 1
    assert first.info["block"].size == 4 and first.n_selected <= 4
    assert all(r.lower <= r.upper + 1e-9 for r in fgm.history_)
    assert fgm.history_[-1].info["passes"] == fgm.n_passes_
    assert "Outer iteration 1" in explain("fgm", first)
    # B ≤ #selected ≤ T·B (Remark 2)
    assert 4 <= fgm.n_selected_ <= 4 * fgm.n_outer_


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # gap < floor
@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_equals_dense(layout, dtype, easy_sparse):
    X, y = easy_sparse
    dense = FGM(B=5, inner_tol=1e-10).fit(X.toarray(), y)
    other = FGM(B=5, inner_tol=1e-10).fit(as_layout(X, layout, dtype), y)
    np.testing.assert_array_equal(dense.get_support(), other.get_support())
    tol = 1e-4 if dtype == np.float32 else 1e-7
    np.testing.assert_allclose(other.coef_, dense.coef_, rtol=tol, atol=tol)
    assert sp.issparse(other.transform(as_layout(X, layout, dtype)))


def test_sparse_counts_whose_masters_crawl_give_the_dense_model():
    """The same counts stored dense and sparse go through the same solvers: here the coarse
    masters crawl under APG and go on by proximal Newton, where a solver chosen by the
    storage (a Newton switch for sparse caches only, tried once) gave 49 features against
    the dense 30."""
    from explorer.data import make_sparse_wide

    ds = make_sparse_wide(1500, 10000, nnz_per_row=200, seed=0)
    sparse = FGM(B=10, feature_scaling=None).fit(ds.X, ds.y)
    assert sparse._master.crawled  # APG crawled on a master: the case this test is about
    dense = FGM(B=10, feature_scaling=None).fit(ds.X.toarray(), ds.y)
    np.testing.assert_array_equal(sparse.get_support(), dense.get_support())
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-9)


def test_finds_the_planted_features(easy_sparse):
    X, y = easy_sparse
    fgm = FGM(B=5).fit(X, y)
    assert set(range(5)) <= set(fgm.selected_features_[np.argsort(
        -np.abs(fgm.coef_[fgm.selected_features_]))][:8])


def test_group_selection_brute_force():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(25, 12))
    ids = np.repeat(np.arange(4), 3)
    s = rng.normal(size=25)
    space = LinearSpace(X, groups=ids, group_weights=np.array([1.0, 0.5, 2.0, 1.0]))
    top, scores = space.top(s, 2)
    v = X.T @ s
    brute = [(w**2 * np.sum(v[ids == g] ** 2), g) for g, w in enumerate([1.0, 0.5, 2.0, 1.0])]
    expected = [g for _, g in sorted(brute, reverse=True)[:2]]
    assert top.tolist() == expected
    fgm = FGM(B=1, groups=ids, max_outer=2).fit(X, np.sign(X[:, 3] + 0.1))
    chosen = np.unique(ids[fgm.get_support()])
    assert np.all(np.isin(np.flatnonzero(np.isin(ids, chosen)), fgm.selected_features_))


def test_overlapping_groups_map_back_to_original_features():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 6))
    y = np.sign(X[:, 1] + 0.5 * X[:, 2])
    groups = [[0, 1], [1, 2], [3, 4, 5]]
    fgm = FGM(B=2, groups=groups, max_outer=2, inner_tol=1e-10).fit(X, y)
    assert fgm.coef_.shape == (6,)
    # feature 1 lives in two groups: its weight is the sum of both duplicated columns
    master = fgm._master
    total = sum(w[c.feature_a == 1].sum() for c, w in master.weights_by_column())
    assert fgm.coef_[1] == pytest.approx(total)
    np.testing.assert_allclose(fgm.decision_function(X),
                               X @ fgm.coef_ + fgm.intercept_, atol=1e-10)


def _random_tree(rng, m):
    """Nested groups: a root, halves, quarters, … down to single features."""
    groups = []

    def split(lo, hi):
        groups.append(list(range(lo, hi)))
        if hi - lo > 1:
            mid = (lo + hi) // 2 + rng.integers(-1, 2) * (hi - lo > 3)
            mid = min(max(mid, lo + 1), hi - 1)
            split(lo, mid)
            split(mid, hi)

    split(0, m)
    return groups


@pytest.mark.parametrize("seed", range(5))
def test_tree_groups_pruned_search_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    m = 64
    groups = _random_tree(rng, m)
    weights = 1.0 / np.sqrt([len(g) for g in groups])  # deeper groups weigh more
    X = rng.normal(size=(40, m))
    s = rng.normal(size=40)
    space = LinearSpace(X, groups=groups, group_weights=weights)
    assert space.tree is not None
    ids, vals = space.top(s, 5)
    brute = ref.group_sumsq(X.T @ s, groups, weights)
    expected = ref.top_k(brute, 5)
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_allclose(vals, brute[expected])
    assert space.last_visited < len(groups)  # Proposition 2 pruned part of the tree


def test_poly2_scores_equal_the_explicit_expansion():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 6))
    s = rng.normal(size=50)
    space = Poly2Space(X, gamma=0.7, r=1.3, block_bytes=8 * 6 * 2)  # 2 rows per block
    assert space.n_candidates == (6 + 2) * (6 + 1) // 2 - 1
    np.testing.assert_allclose(space.scores(s), ref.poly2_scores(X, s, 0.7, 1.3), rtol=1e-10)
    for a, c in itertools.combinations_with_replacement(range(6), 2):
        kind, aa, cc = space.decode(np.array([space.encode(a, c)]))
        assert (aa[0], cc[0]) == (a, c) and kind[0] == (1 if a == c else 2)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # gap < floor
def test_poly2_fgm_equals_fgm_on_the_expanded_matrix():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(80, 5))
    y = np.sign(X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=80))
    implicit = FGM(B=2, feature_map="poly2", max_outer=3, inner_tol=1e-12).fit(X, y)
    space = Poly2Space(X)
    Phi = space.columns(np.arange(space.n_candidates)).matrix
    explicit = FGM(B=2, max_outer=3, inner_tol=1e-12).fit(Phi, y)
    np.testing.assert_allclose(implicit.decision_function(X), explicit.decision_function(Phi),
                               atol=1e-8)
    names = [name for name, _ in implicit.generated_features_]
    assert "x0·x1" in names  # the planted interaction is found
    assert set(implicit.selected_features_) >= {0, 1}


def test_binned_map_learns_a_nonlinear_response():
    ds = make("fsa-nonlinear", n_samples=600, n_features=30, k_star=2, seed=0)
    linear = FGM(B=2, max_outer=3).fit(ds.X, ds.y)
    binned = FGM(B=2, max_outer=3, feature_map="binned", n_bins=12).fit(ds.X, ds.y)
    assert set(ds.truth) <= set(binned.selected_features_)
    assert binned.score(ds.X_test, ds.y_test) > linear.score(ds.X_test, ds.y_test) + 0.15


def test_warm_start_refit_does_less_work(digits38):
    X, y = digits38.X / 16, digits38.y
    cold = FGM(B=5, C=10, max_outer=15, warm_start=True).fit(X, y)
    cold_work = sum(r.inner_steps for r in cold.history_)
    cold.set_params(C=12.0)
    cold.fit(X, y)
    warm_work = sum(r.inner_steps for r in cold.history_)
    fresh = FGM(B=5, C=12.0, max_outer=15).fit(X, y)
    fresh_work = sum(r.inner_steps for r in fresh.history_)
    assert warm_work < fresh_work and cold_work > 0
    assert cold.n_passes_ < fresh.n_passes_
    assert cold.history_[-1].objective <= fresh.history_[-1].objective * 1.02


def test_warm_start_after_changing_B(digits38):
    X, y = digits38.X / 16, digits38.y
    est = FGM(B=8, warm_start=True).fit(X, y)
    est.set_params(B=4).fit(X, y)
    assert all(len(b) <= 4 for b in (c.candidate for c in est._master.columns))
    assert est.score(digits38.X_test / 16, digits38.y_test) > 0.95


def test_stop_leaves_a_usable_model(digits38):
    fgm = FGM(B=3).fit(digits38.X, digits38.y, callback=lambda r: r.iteration < 1)
    assert fgm.stopped_early_ and fgm.n_iter_ == 2
    np.testing.assert_array_equal(fgm.selected_features_, fgm.history_[-1].selected)
    assert fgm.score(digits38.X_test, digits38.y_test) > 0.8


def test_multiclass_one_vs_rest():
    ds = make("wine").split(seed=0)
    X = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    Xt = (ds.X_test - ds.X.mean(0)) / ds.X.std(0)
    fgm = FGM(B=2, C=1.0).fit(X, ds.y)
    assert fgm.coef_.shape == (3, 13)
    assert {r.member for r in fgm.history_} == {0, 1, 2}
    assert fgm.score(Xt, ds.y_test) > 0.85


def test_bad_parameters():
    X = np.random.default_rng(0).normal(size=(20, 5))
    y = np.sign(X[:, 0])
    with pytest.raises(ValueError, match="loss='hinge' is not one of"):
        FGM(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="B=0 is below"):
        FGM(B=0).fit(X, y)
    with pytest.raises(ValueError, match="cannot be combined"):
        FGM(feature_map="poly2", feature_scaling="norm").fit(X, y)
    with pytest.raises(ValueError, match="one id per feature"):
        FGM(groups=[0, 1]).fit(X, y)


def _wide_raw(seed=0):
    """Raw-scaled (0…16) wide data whose last master is wider than proximal Newton takes."""
    rng = np.random.default_rng(seed)
    X = np.round(16 * np.abs(rng.standard_normal((120, 600))) / 3)
    y = np.where(X[:, :10].sum(1) > np.median(X[:, :10].sum(1)), 1, -1)
    return X, y


def test_raw_pixels_with_an_intercept_converge_and_an_unconverged_master_warns(digits38):
    """Uncentred columns (raw pixels) with an intercept: the master works on centred columns
    (the same model), so the default fit is certified; a budget too small for it says so."""
    fgm = FGM(B=4, C=1.0).fit(digits38.X, digits38.y)
    assert fgm.inner_measure_ <= 3e-5 and fgm.fit_warnings_ == []
    X, y = _wide_raw()
    with pytest.warns(ConvergenceWarning, match="max_inner=20 steps"):
        short = FGM(B=450, C=1.0, max_inner=20, max_outer=1).fit(X, y)
    assert short.inner_measure_ > 3e-5 and len(short.fit_warnings_) == 1
    # the intercept is reported for the raw columns: predictions equal X·coef + b
    np.testing.assert_allclose(fgm.decision_function(digits38.X),
                               digits38.X @ fgm.coef_ + fgm.intercept_, atol=1e-9)


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("C", [1.0, 10.0])
def test_raw_pixels_at_large_C_are_certified_by_default(loss, C):
    """On raw pixels (0…16, digit 3 against the other nine) with C ≥ 1 the first-order
    master used its 2,000 steps and stopped at a 1e-3…2e-2 gap (a warning on the catalogue's
    digits); the last (narrow) master is now solved by proximal Newton. Its objective equals
    an independent conic solver's on the same blocks."""
    ds = make("digits").split(test_size=0.3, seed=0)
    X, y = ds.X, np.where(ds.y == 3, 1.0, -1.0)
    fgm = FGM(B=5, C=C, loss=loss).fit(X, y)
    assert fgm.fit_warnings_ == [] and fgm.inner_measure_ <= 3e-5
    blocks = [c.matrix for c in fgm._master.columns]
    _, _, obj = l12_master_reference(blocks, y, C, loss, fit_intercept=True)
    last = fgm.history_[-1].objective
    assert -1e-6 <= (last - obj) / obj <= fgm.inner_measure_ + 1e-6


def test_once_a_master_crawls_the_polish_goes_straight_to_newton():
    """Sparse counts (text-like): APG crawls on a coarse master, which goes on by proximal
    Newton, so the last master is polished by Newton at once instead of after APG's 300-step
    budget (which it used to spend in full). The polished objective still equals an
    independent conic solver's on the same blocks."""
    from explorer.data import make_sparse_wide
    from explorer.engines.fgm.l12_master import APG_FIRST

    ds = make_sparse_wide(1000, 30_000, nnz_per_row=150, seed=0)
    fgm = FGM(B=10, feature_scaling=None).fit(ds.X, ds.y)
    steps = [r.inner_steps for r in fgm.history_]
    assert fgm._master.crawled and max(steps) < APG_FIRST
    assert fgm.fit_warnings_ == [] and fgm.inner_measure_ <= 3e-5
    blocks = [c.matrix.toarray() for c in fgm._master.columns]
    _, _, obj = l12_master_reference(blocks, ds.y, fgm.C, "squared_hinge", fit_intercept=True)
    assert abs(fgm.history_[-1].objective - obj) / obj <= 1e-5  # the conic solver's accuracy


def test_a_callback_with_a_warning_method_receives_the_warning():
    got = []

    class Listener:
        def __call__(self, record):
            return True

        def warning(self, message):
            got.append(message)

    X, y = _wide_raw()
    FGM(B=450, C=1.0, max_inner=20, max_outer=1).fit(X, y, callback=Listener())
    assert len(got) == 1 and "not certified" in got[0]


# ----------------------------------------------------------------------------- refine
def _decoy_problem(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 8))
    X[:, 5] = X[:, 2] + 0.3 * rng.standard_normal(120)  # a correlated decoy of feature 2
    s = 1.5 * X[:, 2] - 1.0 * X[:, 6]
    return X, np.where(s + 0.8 * rng.standard_normal(120) > 0, 1, -1)


def _best_pair(X, y, C):
    """Exhaustive search over the 28 restricted ℓ2 SVMs (scikit-learn's LinearSVC, whose
    ½‖w‖² + c Σ ξ² is FGM's with c = C/2)."""
    best = None
    for cols in itertools.combinations(range(X.shape[1]), 2):
        svm = LinearSVC(C=C / 2, fit_intercept=False, dual=False, tol=1e-10, max_iter=100000)
        w = svm.fit(X[:, cols], y).coef_.ravel()
        xi = np.maximum(0.0, 1.0 - y * (X[:, cols] @ w))
        J = 0.5 * w @ w + 0.5 * C * xi @ xi
        if best is None or J < best[0]:
            best = (J, set(cols), w)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_refine_finds_the_brute_force_best_pair(seed):
    """k = 2 of 8 features: FGM(refine='auto') grows to 4, prunes by elimination and refits;
    the pair and its weights are the exhaustive search's (the decoy is chosen when it is
    the better pair)."""
    X, y = _decoy_problem(seed)
    fgm = FGM(B=1, C=1.0, max_outer=2, fit_intercept=False, refine="auto",
              loss="squared_hinge").fit(X, y)
    J, pair, w = _best_pair(X, y, 1.0)
    assert set(fgm.selected_features_) == pair
    np.testing.assert_allclose(fgm.coef_[sorted(pair)], w, rtol=1e-4, atol=1e-6)
    assert fgm.n_selected_ == 2 and set(pair) <= set(fgm.refined_from_)


def _three_of_twelve(seed, n=150):
    """Two correlated decoys (5 ~ 2, 7 ~ 6 − ½·1) among 12 features, four of them in y."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 12))
    X[:, 5] = X[:, 2] + 0.4 * rng.standard_normal(n)
    X[:, 7] = X[:, 6] - 0.5 * X[:, 1] + 0.4 * rng.standard_normal(n)
    s = 1.2 * X[:, 2] - 1.0 * X[:, 6] + 0.7 * X[:, 1] + 0.5 * X[:, 9]
    return X, np.where(s + rng.standard_normal(n) > 0, 1, -1)


def test_refine_defaults_to_the_logistic_loss_and_finds_the_best_subset():
    """refine='auto' searches on the logistic loss by default (``loss_``; the paper's
    algorithm keeps the squared hinge): on 10 correlated designs, k = 3 of 12, the subset
    is the exhaustive search's over all 220 — each scored by scikit-learn's
    LogisticRegression, whose ½‖w‖² + C Σ log(1 + e^−z) is FGM's — and the weights are
    scikit-learn's. Elimination alone misses one of the 10; the one-for-one swaps find it."""
    assert FGM(refine="auto").loss_ == "logistic" and FGM().loss_ == "squared_hinge"
    assert FGM(refine="auto", loss="squared_hinge").loss_ == "squared_hinge"

    def fitted(X, y, cols):
        return LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(X[:, cols], y)

    def objective(X, y, cols):
        model = fitted(X, y, cols)
        w = model.coef_.ravel()
        return 0.5 * w @ w + np.logaddexp(0, -y * model.decision_function(X[:, cols])).sum()

    for seed in range(10):
        X, y = _three_of_twelve(seed)
        best = min(itertools.combinations(range(12), 3),
                   key=lambda cols: objective(X, y, list(cols)))
        fgm = FGM(k=3, B=1, C=1.0, refine="auto", feature_scaling=None).fit(X, y)
        assert set(fgm.selected_features_) == set(best), seed
        reference = fitted(X, y, list(best))
        np.testing.assert_allclose(fgm.coef_[list(best)], reference.coef_.ravel(), rtol=1e-4)
        assert fgm.intercept_ == pytest.approx(float(reference.intercept_[0]), abs=1e-4)


@pytest.mark.parametrize("seed, C", [(0, 0.01), (2, 0.001), (2, 0.1), (3, 0.1)])
def test_refine_fills_a_path_that_converged_short_of_k(seed, C):
    """k = 5 of 8 where the ℓ1² path converges at 2–4 features: the refinement adds the
    features outside of largest forward sacrifice ½g_j²/h_j (computed here over every
    column from the path's model) and refits the restricted SVM on exactly k."""
    X, y = _decoy_problem(seed)
    fgm = FGM(B=1, C=C, fit_intercept=False, refine="auto", k=5,
              loss="squared_hinge").fit(X, y)
    path, last = fgm.history_[-2], fgm.history_[-1]
    before = fgm.refined_from_
    assert before.size < 5 and fgm.n_selected_ == 5
    # the path's model (no intercept): the squared hinge ½ max(0, 1 − z)², l′ = −max(0, 1 − z)
    margins = X[:, path.selected] @ path.info["weights"]
    slack = np.maximum(0.0, 1.0 - y * margins)
    g = -C * X.T @ (slack * y)
    h = 1.0 + C * (X ** 2).T @ (slack > 0)
    gain = 0.5 * g ** 2 / h
    outside = np.setdiff1d(np.arange(8), before)
    expected = outside[np.argsort(-gain[outside])[:5 - before.size]]
    np.testing.assert_array_equal(last.info["added"], np.sort(expected))
    filled = np.union1d(before, expected)

    def restricted(cols):  # the restricted SVM (scikit-learn's LinearSVC, c = C/2), its loss
        svm = LinearSVC(C=C / 2, fit_intercept=False, dual=False, tol=1e-10, max_iter=100000)
        w = svm.fit(X[:, cols], y).coef_.ravel()
        return w, C * 0.5 * np.sum(np.maximum(0.0, 1.0 - y * (X[:, cols] @ w)) ** 2)

    cols = fgm.selected_features_
    w, loss = restricted(cols)
    np.testing.assert_allclose(fgm.coef_[cols], w, rtol=1e-4, atol=1e-6)
    if last.info["splice_rounds"] == 0:  # the filled set, or one of lower restricted loss
        np.testing.assert_array_equal(cols, filled)
    else:
        assert loss < restricted(filled)[1]
        assert last.info["loss_after"] == pytest.approx(loss, rel=1e-6)
    assert explain("fgm", last).startswith(f"Refinement (on the squared hinge loss): the "
                                           f"path converged at "
                                           f"{before.size} features")


def test_refine_fills_with_the_logistic_loss_and_an_intercept():
    """The same rule for the logistic loss l(z) = log(1 + e^−z) with an intercept: g_j =
    −C Σ_i σ(−z_i) y_i x_ij, h_j = 1 + C Σ_i σ(z_i)σ(−z_i) x_ij², at the path's model."""
    X, y = _decoy_problem(1)
    X = X + 0.5  # columns off zero, so the intercept matters
    fgm = FGM(B=1, C=0.01, loss="logistic", refine="auto", k=5).fit(X, y)
    path, last = fgm.history_[-2], fgm.history_[-1]
    before = fgm.refined_from_
    assert before.size < 5 and fgm.n_selected_ == 5
    # the path's model: its intercept is the one that fits its weights (refit it in 1-D)
    w = path.info["weights"]
    base = X[:, path.selected] @ w
    b = optimize.minimize_scalar(lambda b: np.logaddexp(0, -y * (base + b)).sum()).x
    z = y * (base + b)
    sig = 1.0 / (1.0 + np.exp(z))  # σ(−z)
    g = -0.01 * X.T @ (sig * y)
    h = 1.0 + 0.01 * (X ** 2).T @ (sig * (1 - sig))
    gain = 0.5 * g ** 2 / h
    outside = np.setdiff1d(np.arange(8), before)
    expected = outside[np.argsort(-gain[outside])[:5 - before.size]]
    np.testing.assert_array_equal(last.info["added"], np.sort(expected))


def test_refine_records_the_pruned_set_and_keeps_the_paper_path_unchanged(digits38):
    paper = FGM(B=3).fit(digits38.X, digits38.y)
    refined = FGM(B=3, refine="auto", loss="squared_hinge").fit(digits38.X, digits38.y)
    last = refined.history_[-1]
    assert last.refinement == "auto" and last.n_selected == refined.n_selected_
    outside = set(last.info["spliced_in"])
    assert (set(last.selected) - outside) | set(last.info["pruned"]) == set(last.info["before"])
    assert not outside & set(last.info["before"])
    # the exchange rounds' account: the loss C Σ ½ max(0, 1 − z)² of the final model
    y = np.where(digits38.y == refined.classes_[1], 1.0, -1.0)
    z = y * refined.decision_function(digits38.X)
    assert last.info["loss_after"] == pytest.approx(
        refined.C * 0.5 * np.sum(np.maximum(0.0, 1.0 - z) ** 2), rel=1e-9)
    assert last.info["loss_after"] <= last.info["loss_before"]
    assert 0 <= last.info["splice_rounds"] <= 8
    assert all("refine" not in r.info for r in paper.history_)
    assert refined.history_[-2].info["B"] == 5  # the path grown with blocks of ⌈1.5·B⌉
    assert refined.score(digits38.X_test, digits38.y_test) > 0.9
    assert explain("fgm", last).startswith(f"Refinement (on the squared hinge loss): the "
                                           f"path grew to "
                                           f"{len(last.info['before'])} features")


def test_refine_on_sparse_input_equals_dense(easy_sparse):
    X, y = easy_sparse
    dense = FGM(B=4, refine="auto").fit(X.toarray(), y)
    sparse = FGM(B=4, refine="auto").fit(X, y)
    np.testing.assert_array_equal(dense.selected_features_, sparse.selected_features_)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-5, atol=1e-7)


def test_refine_with_a_feature_map_is_a_clear_error(digits38):
    with pytest.raises(ValueError, match="refine='auto' works on single linear features"):
        FGM(B=2, refine="auto", feature_map="poly2").fit(digits38.X, digits38.y)


def test_refine_to_k_keeps_exactly_k(digits38):
    fgm = FGM(B=2, refine="auto", k=7).fit(digits38.X, digits38.y)
    assert fgm.n_selected_ == 7 and fgm.refined_from_.size >= 11
    assert fgm.history_[-1].inner_measure <= 3e-5 ** 2
    with pytest.raises(ValueError, match="k counts linear features"):
        FGM(k=5, feature_map="poly2").fit(digits38.X, digits38.y)


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
@pytest.mark.parametrize("k, B", [(1, 10), (5, 10), (17, 4), (40, 10)])
def test_the_papers_algorithm_keeps_exactly_k(digits38, layout, k, B):
    """FGM(k) without refine: the path is grown to ≥ k features, cut to the k of largest |w|
    and refit; the refit is the ℓ2 model on those columns (an independent convex solver)."""
    from tests.conftest import as_layout

    X = as_layout(digits38.X / 16.0, layout, np.float64)
    y = np.where(digits38.y == digits38.y.max(), 1.0, -1.0)
    fgm = FGM(B=B, k=k).fit(X, y)
    assert fgm.n_selected_ == k
    path, cut = fgm.history_[-2], fgm.history_[-1]  # the path's last record, then the cut
    assert cut.info["refine"] == "paper"
    lam = fgm.space_.lam  # "auto": unit-RMS columns (digits' pixels spread over 270×)
    assert fgm.space_.scaling == "rms"
    if path.n_selected >= k:
        w_path = np.abs(path.info["weights"]) / lam[path.selected]  # |w_j| of eq. 5
        order = np.argsort(-w_path, kind="stable")
        np.testing.assert_array_equal(fgm.selected_features_, np.sort(path.selected[order[:k]]))
    else:  # the ℓ1² path stalled below k in max_outer: filled by forward sacrifice
        assert set(path.selected) < set(fgm.selected_features_)
        assert cut.info["added"].size == k - path.n_selected
    kept = fgm.selected_features_
    dense = digits38.X / 16.0
    w, b = _l2_svm_reference(dense[:, kept] * lam[kept], y, 10.0)
    assert fgm.coef_[kept] == pytest.approx(w * lam[kept], abs=2e-3)
    assert fgm.intercept_ == pytest.approx(b, abs=2e-3)


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_the_papers_algorithm_keeps_exactly_k_groups(layout, k):
    """With groups, k counts groups (eq. 12's candidates): the path grown to ≥ k groups, cut
    to the k of largest ‖w_g‖ and refit on their features as one ℓ2 block (checked against an
    independent convex solver)."""
    from explorer.data import make
    from tests.conftest import as_layout

    data = make("fgm-groups", n_samples=240, n_groups=30, group_size=4,
                n_informative_groups=4, n_test=60)
    ids = np.asarray(data.groups)
    X = as_layout(data.X, layout, np.float64)
    fgm = FGM(k=k).fit(X, data.y, groups=ids)
    held = np.unique(ids[fgm.selected_features_])
    assert held.size == k
    assert set(fgm.selected_features_) == set(np.flatnonzero(np.isin(ids, held)))
    path, cut = fgm.history_[-2], fgm.history_[-1]
    assert cut.info["refine"] == "paper" and cut.info["groups_kept"].size == k
    lam = fgm.space_.lam
    w_path = np.zeros(ids.size)
    w_path[path.selected] = np.abs(path.info["weights"]) / lam[path.selected]
    norms = np.sqrt(np.bincount(ids, weights=w_path ** 2))
    on_path = np.flatnonzero(norms)
    assert on_path.size >= k
    top = np.sort(on_path[np.argsort(-norms[on_path], kind="stable")[:k]])
    np.testing.assert_array_equal(held, top)
    kept = fgm.selected_features_
    y = np.where(data.y == data.y.max(), 1.0, -1.0)
    w, b = _l2_svm_reference(data.X[:, kept] * lam[kept], y, 10.0)
    assert fgm.coef_[kept] == pytest.approx(w * lam[kept], abs=2e-3)
    assert fgm.intercept_ == pytest.approx(b, abs=2e-3)
    assert fgm.predict(data.X_test).shape == (data.X_test.shape[0],)


def test_k_groups_with_overlapping_sets_and_refine_is_an_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 9))
    y = np.where(X[:, 1] + X[:, 4] > 0, 1, -1)
    sets = [[0, 1, 2], [2, 3, 4], [5, 6], [7, 8]]
    fgm = FGM(k=2, groups=sets).fit(X, y)
    chosen = fgm.history_[-1].info["groups_kept"]
    assert chosen.size == 2
    assert set(fgm.selected_features_) == set(np.concatenate([sets[g] for g in chosen]))
    with pytest.raises(ValueError, match="refine='auto' works on single linear features"):
        FGM(k=2, refine="auto", groups=sets).fit(X, y)


def _l2_svm_reference(A, y, C):
    """min ½‖w‖² + C Σ ½max(0, 1 − y(Aw + b))² by L-BFGS (the objective is C¹)."""
    from scipy.optimize import minimize

    def f(v):
        w, b = v[:-1], v[-1]
        xi = np.maximum(0.0, 1.0 - y * (A @ w + b))
        g = -C * (y * xi)
        return 0.5 * w @ w + 0.5 * C * xi @ xi, np.append(w + A.T @ g, g.sum())

    v = minimize(f, np.zeros(A.shape[1] + 1), jac=True, method="L-BFGS-B",
                 options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20000}).x
    return v[:-1], v[-1]


def test_the_papers_algorithm_grows_past_its_tolerance_to_reach_k():
    """B = 1 and a path that the paper's ε_c stops at a few features: with k the loop goes on
    (tol ignored) and holds exactly k."""
    X, y = _decoy_problem(0)
    short = FGM(B=1, C=0.01, fit_intercept=False).fit(X, y)
    k = short.n_selected_ + 3
    fgm = FGM(B=1, C=0.01, fit_intercept=False, k=k).fit(X, y)
    assert fgm.n_selected_ == k
    assert set(short.selected_features_) <= set(fgm.history_[-2].selected)


def test_the_papers_algorithm_k_on_a_sparse_text_set():
    from explorer.data import make

    data = make("text-like", n_samples=800, n_features=3000, seed=2)
    for k in (5, 10, 20, 50):
        fgm = FGM(k=k).fit(data.X, data.y)
        assert fgm.n_selected_ == k


def test_the_refit_starts_from_the_pruned_path_model(digits38):
    """The refinement's refit curve starts where the path left off (its model without the
    pruned features), not at the empty model's C·Σ l(0) far above the path: the same weights
    as a refit from zero, in fewer Newton steps."""
    from explorer.engines.fgm.refine import Restricted, restricted_fit
    from explorer.optim.losses import make_loss
    from explorer.optim.stopping import Stopping

    X, y = digits38.X, np.where(digits38.y == digits38.y.max(), 1.0, -1.0)
    fgm = FGM(B=5, refine="auto", k=5, feature_scaling=None, loss="squared_hinge").fit(X, y)
    refit = fgm.history_[-1]
    kept = fgm.selected_features_
    trace = refit.info["inner_objective"]
    empty = 10.0 * make_loss("squared_hinge").value(np.zeros(y.size)).sum()
    assert trace[0] < 0.5 * empty
    problem = Restricted(y, make_loss("squared_hinge"), 10.0, True, Stopping(3e-5 ** 2, 2000))
    cold_w, cold_b, cold = restricted_fit(problem, X, kept)
    np.testing.assert_allclose(fgm.coef_[kept], cold_w, rtol=1e-6, atol=1e-9)
    assert refit.inner_steps < cold.n_iter


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_default_lower_bounds_stay_between_the_floor_and_the_optimum(digits38, loss):
    """At the defaults a user gets (coarse masters, the objective-change stop), every
    record's lower bound is certified (≤ the relaxation's optimum, computed independently by
    a conic solver) and never below the objective's floor 0; the final gap is not vacuous."""
    X, y = digits38.X[:, :20], digits38.y
    fgm = FGM(B=5, loss=loss).fit(X, y)
    lower = np.array([r.lower for r in fgm.history_])
    upper = np.array([r.upper for r in fgm.history_])
    assert np.all(lower >= 0.0)
    assert np.all(lower <= upper + 1e-9)
    if loss == "squared_hinge":
        yy = np.where(y == np.unique(y)[1], 1.0, -1.0)
        optimum = fgm_relaxation_reference(X, yy, fgm.C, 5, fit_intercept=True)
        assert lower.max() <= optimum * (1 + 1e-6) + 1e-8
    assert lower[-1] >= 0.5 * upper[-1]


def test_best_on_ray_finds_the_maximum_of_a_concave_function():
    from explorer.optim.cutting_plane import best_on_ray

    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b, peak = rng.uniform(0.1, 5), rng.uniform(-3, 3), rng.uniform(0, 50)
        def f(t, a=a, b=b, peak=peak):
            return b - a * (t - peak) ** 2
        grid = np.linspace(0, 100, 200001)
        for t_max in (np.inf, 100.0, 0.5 * peak + 1.0):
            want = max(f(t) for t in grid[grid <= t_max])
            got = best_on_ray(f, f(1.0), t_max=t_max)
            assert want - 1e-6 * max(1, abs(want)) <= got <= f(min(peak, t_max)) + 1e-12


def test_auto_scaling_puts_features_in_different_units_on_one_scale(digits38):
    """feature_scaling="auto" (the default): columns whose scales spread over > 100× get
    unit RMS, so the selection no longer depends on the units — the same features for X and
    for X with its columns in units 1e-3 … 1e3 apart, and the same for CSR/CSC/dense — while
    a standardised design is fitted unscaled, as in the paper."""
    from explorer.data import make
    from tests.conftest import as_layout

    X, y = digits38.X, digits38.y
    units = 10.0 ** np.random.default_rng(0).uniform(-3, 3, X.shape[1])
    base = FGM(k=10).fit(X, y)
    assert base.space_.scaling == "rms"
    rescaled = FGM(k=10).fit(X * units, y)
    np.testing.assert_array_equal(rescaled.selected_features_, base.selected_features_)
    np.testing.assert_allclose(rescaled.coef_ * units, base.coef_, rtol=1e-5, atol=1e-8)
    for layout in ("csr", "csc"):
        other = FGM(k=10).fit(as_layout(X * units, layout, np.float64), y)
        np.testing.assert_array_equal(other.selected_features_, base.selected_features_)
    paper = make("fgm-type1", n_samples=256, n_features=512, n_test=64)
    assert FGM(B=4).fit(paper.X, paper.y).space_.scaling is None


# ------------------------------------------------------------------ what the user knows
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # gap < floor
def test_a_pinned_feature_is_in_every_block_and_the_bounds_bracket_its_relaxation():
    """always_include: the pinned feature has d_j = 1 outside the budget of B. The bounds
    bracket the optimum of that relaxation, D = {d_pinned = 1, Σ_others d ≤ B}, from an
    independent conic solve of its dual — which differs from the optimum without the pin."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 8))
    y = np.sign(X[:, :2] @ [1.0, -1.0] + 0.5 * rng.normal(size=30))
    C, B, pinned = 0.5, 2, 6  # a feature without signal
    fgm = FGM(B=B, C=C, max_outer=40, tol=1e-12, inner_tol=1e-13, max_inner=100000,
              always_include=[pinned]).fit(X, y)
    assert all(pinned in r.info["block"] for r in fgm.history_)
    assert all(r.info["block"].size == B + 1 for r in fgm.history_)
    assert fgm.support_[pinned]
    optimum = fgm_relaxation_reference(X, y, C, B, pinned=(pinned,))
    lower, upper = fgm.history_[-1].lower, fgm.history_[-1].upper
    assert lower <= optimum + 1e-6 <= upper + 2e-6
    assert upper - lower <= 0.02 * upper
    free = fgm_relaxation_reference(X, y, C, B)
    assert abs(optimum - free) > 0.05 * abs(free)  # the pin changes the problem


def _best_with(X, y, pinned, C, k):
    """The exhaustive best k-subset holding ``pinned``, by the restricted logistic model
    (scikit-learn's ½‖w‖² + C Σ log(1 + e^−z), FGM refine's objective)."""
    def objective(cols):
        model = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X[:, cols], y)
        w = model.coef_.ravel()
        return 0.5 * w @ w + C * np.logaddexp(0, -y * model.decision_function(X[:, cols])).sum()

    others = [j for j in range(X.shape[1]) if j not in pinned]
    return min((sorted(pinned + list(rest))
                for rest in itertools.combinations(others, k - len(pinned))), key=objective)


@pytest.mark.parametrize("seed", range(4))
def test_refine_with_a_pinned_feature_finds_the_best_subset_that_holds_it(seed):
    """k = 3 of 12 with a feature without signal pinned: the refinement's elimination, block
    exchange and swaps never drop it, and the two others are the exhaustive search's best
    pair beside it."""
    X, y = _three_of_twelve(seed)
    pinned = [11]
    fgm = FGM(k=3, B=1, C=1.0, refine="auto", feature_scaling=None,
              always_include=pinned).fit(X, y)
    assert fgm.n_selected_ == 3 and fgm.support_[11]
    assert fgm.selected_features_.tolist() == _best_with(X, y, pinned, 1.0, 3)
    plain = FGM(k=3, B=1, C=1.0, refine="auto", feature_scaling=None).fit(X, y)
    assert not plain.support_[11]


@pytest.mark.parametrize("refine", [None, "auto"])
def test_a_pinned_column_without_variance_stays_in_the_model_cut_to_k(refine):
    X, y = _three_of_twelve(0)
    X[:, 4] = 0.0
    fgm = FGM(k=4, B=2, refine=refine, always_include=[4]).fit(X, y)
    assert fgm.n_selected_ == 4 and fgm.support_[4] and fgm.coef_[4] == 0
    assert all(4 in r.selected for r in fgm.history_)


def test_penalty_factors_equal_fgm_on_columns_divided_by_them():
    """penalty_factor f divides feature j's λ_j: FGM on X with factors is FGM on the columns
    X_j / f_j, its weights divided back (score c_j falls by f_j², the weight is penalised
    f_j² times as much)."""
    X, y = _three_of_twelve(1)
    f = np.linspace(0.5, 3.0, 12)
    weighted = FGM(B=2, C=1.0, feature_scaling=None, penalty_factor=f).fit(X, y)
    rescaled = FGM(B=2, C=1.0, feature_scaling=None).fit(X / f, y)
    np.testing.assert_array_equal(weighted.support_, rescaled.support_)
    np.testing.assert_allclose(weighted.coef_, rescaled.coef_ / f, rtol=1e-6, atol=1e-10)


def test_pinning_with_groups_or_a_feature_map_is_a_clear_error():
    X, y = _three_of_twelve(0)
    with pytest.raises(ValueError, match="groups"):
        FGM(groups=np.repeat(np.arange(4), 3), always_include=[0]).fit(X, y)
    with pytest.raises(ValueError, match="feature_map"):
        FGM(feature_map="poly2", always_include=[0]).fit(X, y)


def test_an_uncertified_master_names_the_option_that_fixes_it():
    # pd-speech's columns span 1e-20 … 4e10: unscaled, ten APG steps cannot certify the master
    import warnings

    from explorer import load

    data = load("pd-speech")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FGM(max_inner=10, feature_scaling=None, B=5).fit(data.X, data.y)
    said = [str(w.message) for w in caught if "not certified" in str(w.message)]
    assert said and "feature_scaling='rms'" in said[0] and "Standardising" not in said[0]
