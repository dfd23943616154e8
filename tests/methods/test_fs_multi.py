"""FS-multi as a method: the Hamming/hinge-SVM equivalence, bounds, measures, k and the shared
outer loop (its parts on their own: tests/optim/test_structured.py, test_cut_problem.py)."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.svm import LinearSVC

import explorer.engines.fs_multi.bundle as bundle_module
import explorer.methods.fgm as fgm_module
import explorer.methods.fs_multi as fs_multi_module
from explorer import FSMulti
from explorer.data import load, make
from explorer.engines.fs_multi.cut_problem import CutModel, solve_cut_problem
from explorer.engines.fs_multi.structured import delta
from explorer.metrics import f1, macro_f1, prbep, recall_at_k
from explorer.texts import explain
from tests.conftest import as_layout

MEASURES = ["f1", "prbep", "rec@k", "hamming"]


def test_hamming_loss_makes_it_a_hinge_svm():
    ds = make("breast-cancer")
    X = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    y = np.where(ds.y == 1, 1.0, -1.0)
    n, C = len(y), 20.0
    fs = FSMulti(B=X.shape[1], C=C, measure="hamming", fit_intercept=False).fit(X, y)
    svm = LinearSVC(loss="hinge", C=2 * C / n, fit_intercept=False, tol=1e-10,
                    max_iter=200000).fit(X, y)

    def objective(w):
        return 0.5 * w @ w + 2 * C / n * np.maximum(0, 1 - y * (X @ w)).sum()

    assert fs.history_[0].info["n_blocks"] == 1
    # default inner_tol (1e-3): the objective within 0.1 % of the SVM's
    best = objective(svm.coef_.ravel())
    assert best * (1 - 1e-6) <= objective(fs.coef_) <= best * (1 + FSMulti().inner_tol)


def test_outer_loop_is_fgms_loop(monkeypatch):
    assert fs_multi_module.cutting_plane is fgm_module.cutting_plane  # one loop, two masters
    calls = []
    real = fgm_module.cutting_plane

    def spy(*args, **kwargs):
        calls.append(type(args[1]).__name__)
        return real(*args, **kwargs)

    monkeypatch.setattr(fs_multi_module, "cutting_plane", spy)
    ds = make("digits-9vr").split()
    FSMulti(B=3, max_outer=2).fit(ds.X, ds.y)
    assert calls == ["BundleMaster"]


def test_first_block_scores_start_from_minus_y():
    ds = make("text-like", n_samples=400, n_features=800)
    est = FSMulti(B=5, max_outer=1, fit_intercept=False).fit(ds.X, ds.y)
    y = np.where(ds.y == est.classes_[1], 1.0, -1.0)
    scores = np.asarray(ds.X.T @ y).ravel() ** 2
    expected = np.argsort(-scores, kind="stable")[:5]
    assert sorted(est.history_[0].info["block"].tolist()) == sorted(expected.tolist())


@pytest.mark.parametrize("measure", MEASURES)
def test_records_bounds_and_certified_gaps(measure):
    ds = make("text-like", n_samples=600, n_features=1500, seed=3)
    est = FSMulti(B=8, C=5 * 420, measure=measure, max_outer=4, inner_tol=1e-3).fit(ds.X, ds.y)
    lowers = [r.lower for r in est.history_]
    uppers = [r.upper for r in est.history_]
    assert all(b >= a - 1e-6 for a, b in zip(lowers, lowers[1:]))
    assert all(b <= a + 1e-6 for a, b in zip(uppers, uppers[1:]))
    assert all(r.lower <= r.upper + 1e-6 for r in est.history_)
    for r in est.history_:
        gaps = r.info["inner_gaps"]
        assert len(gaps) == r.inner_steps and r.info["K"] >= 2
        assert np.all(gaps >= -1e-7 * abs(r.objective))  # the solver's precision
        assert r.info["T"] == r.iteration + 1
    assert "bundle method" in explain("fs-multi", est.history_[-1])


def test_f1_training_beats_hamming_on_f1_for_imbalanced_text():
    ds = make("text-like", n_samples=2000, n_features=5000, seed=0)
    f1s = {}
    for measure in ("f1", "hamming"):
        est = FSMulti(B=10, C=5 * 2000, measure=measure).fit(ds.X, ds.y)
        f1s[measure] = est.n_selected_, (est.predict(ds.X_test) == 1)
    from explorer.metrics import f1

    assert f1(ds.y_test, np.where(f1s["f1"][1], 1, -1)) > \
        f1(ds.y_test, np.where(f1s["hamming"][1], 1, -1))


def test_rec_at_k_defaults_and_ignores_the_intercept():
    ds = make("digits-9vr").split()
    est = FSMulti(B=5, measure="rec@k", max_outer=3).fit(ds.X, ds.y)
    assert est.rec_k_ == 2 * int(np.sum(ds.y == 1))
    assert est.intercept_ == 0.0
    assert FSMulti().C is None and est.C_ == pytest.approx(0.1 * ds.X.shape[0])


def test_multiclass_one_vs_rest_with_macro_measures():
    ds = make("wine").split(seed=0)
    X = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    Xt = (ds.X_test - ds.X.mean(0)) / ds.X.std(0)
    est = FSMulti(B=3, C=50.0, measure="f1").fit(X, ds.y)
    assert est.coef_.shape == (3, 13)
    assert macro_f1(ds.y_test, est.predict(Xt)) > 0.8


def test_warm_start_reuses_the_selection():
    ds = make("text-like", n_samples=600, n_features=1500, seed=3)
    est = FSMulti(B=8, C=2000, warm_start=True).fit(ds.X, ds.y)
    first = set(est.selected_features_)
    est.set_params(B=6).fit(ds.X, ds.y)
    assert est.history_[0].info["n_blocks"] > 1  # the previous selection came back as blocks
    assert len(first & set(est.selected_features_)) >= len(first) // 2


@pytest.mark.slow
def test_dropping_idle_cuts_keeps_the_solution_and_shrinks_the_cut_model(monkeypatch):
    ds = make("digits-9vr")
    X, y = ds.X[:600], ds.y[:600]

    def fit():
        return FSMulti(B=10, C=len(y), measure="f1", max_outer=3, inner_tol=1e-4,
                       feature_scaling=None).fit(X, y)  # the bundle on raw pixels

    pruned = fit()
    monkeypatch.setattr(bundle_module.BundleMaster, "prune_after", 10**9)
    kept = fit()
    assert pruned.history_[-1].info["K"] < kept.history_[-1].info["K"] / 2
    assert pruned.history_[-1].objective == pytest.approx(kept.history_[-1].objective, rel=1e-3)
    assert set(np.flatnonzero(pruned.support_)) == set(np.flatnonzero(kept.support_))


def test_an_empty_model_says_why_and_what_to_change():
    """On unscaled non-negative pixels, F1's structural risk keeps w = 0 optimal over the
    first blocks of two features (METHODS.md notes the same for text); the user must hear
    that, not just see 0 features. (With more outer iterations the loop now goes on and leaves
    w = 0; scaled, as by default, features enter at once.)"""
    ds = make("digits-9vr").split(test_size=0.3, seed=0)
    raw = {"B": 2, "C": 10 * ds.n_samples, "measure": "f1", "feature_scaling": None}
    est = FSMulti(**raw, max_outer=2).fit(ds.X, ds.y)
    assert est.n_selected_ == 0
    assert FSMulti(**{**raw, "feature_scaling": "auto"}, max_outer=2).fit(ds.X, ds.y).n_selected_
    longer = FSMulti(**raw).fit(ds.X, ds.y)
    assert longer.n_selected_ > 0
    assert "empty model is optimal" in est.stop_reason_
    text = explain("fs-multi", est.history_[-1])
    assert "raise B or C" in text and "Stopped" in text


@pytest.mark.slow
def test_recall_at_k_learns_a_ranking_not_a_shift():
    """Rec@k's labelings have k = 2·#positives predicted positives, so an uncentred cut
    rewards lowering every score alike; before centring this fit stopped at a training risk
    of 1e-4 with a test Rec@2p of 0.56."""
    ds = make("digits-9vr").split(test_size=0.3, seed=0)
    est = FSMulti(B=10, C=10 * ds.n_samples, measure="rec@k").fit(ds.X, ds.y)
    pos = est.classes_[1]
    s = est.decision_function(ds.X_test)
    assert recall_at_k(ds.y_test, s, pos_label=pos) >= 0.9
    assert prbep(ds.y_test, s, pos_label=pos) >= 0.8


def test_lower_bound_is_informative_once_the_fit_converges():
    """The dual bound is taken at the best multiple of the bundle's α (any 0 ≤ t ≤ C/Σα is
    dual feasible): at α itself it was about −3e8 on raw digit pixels (objective 1e4)."""
    ds = make("digits-9vr").split(test_size=0.3, seed=0)
    est = FSMulti(B=3, C=10 * ds.n_samples, measure="f1", max_outer=3).fit(ds.X, ds.y)
    assert all(0 <= r.lower <= r.upper for r in est.history_)
    ds = make("text-like", n_samples=600, n_features=1500, seed=3)
    est = FSMulti(B=8, C=5 * 420, measure="f1", max_outer=6).fit(ds.X, ds.y)
    last = est.history_[-1]
    assert last.upper - last.lower <= 0.02 * last.upper


def test_rec_at_k_certifies_the_exact_optimum_when_k_exceeds_the_negatives():
    """The first cut was ȳ⁰ = −y, which has #negatives predicted positives — not a Rec@k
    labeling when k ≠ #negatives — so the "certified" optimum was wrong (4.933 against 3.724).
    Reference: every labeling with k positives enumerated, the QP solved by SLSQP."""

    from scipy.optimize import minimize


    X = np.random.default_rng(0).standard_normal((10, 3))
    y = np.r_[np.ones(4), np.zeros(6)]
    est = FSMulti(B=3, C=10, measure="rec@k", fit_intercept=False, max_outer=1).fit(X, y)
    k, n, C = est.rec_k_, 10, 10.0
    assert k == 8 > 6
    ys = np.where(y > 0, 1.0, -1.0)
    deltas, psis = [], []
    for pos in itertools.combinations(range(n), k):
        yb = -np.ones(n)
        yb[list(pos)] = 1.0
        d = ys - yb
        deltas.append(delta(ys, yb, "rec@k", k))
        psis.append(X.T @ (d - d.mean()) / n)
    D, Psi = np.array(deltas), np.array(psis)
    # analytic gradients, and ftol 1e-12: at 1e-14 scipy 1.17's SLSQP ends its line search
    # at the optimum with "positive directional derivative" instead of reporting success
    ref = minimize(lambda z: 0.5 * z[:3] @ z[:3] + C * z[3], np.r_[0.0, 0.0, 0.0, 1.0],
                   jac=lambda z: np.r_[z[:3], C], method="SLSQP",
                   options={"ftol": 1e-12, "maxiter": 1000},
                   constraints=[{"type": "ineq", "fun": lambda z: z[3] - D + Psi @ z[:3],
                                 "jac": lambda z: np.c_[Psi, np.ones(len(D))]},
                                {"type": "ineq", "fun": lambda z: z[3:],
                                 "jac": lambda z: np.eye(4)[3:]}])
    assert ref.success
    assert est.history_[-1].objective == pytest.approx(ref.fun, rel=1e-3)
    assert est.history_[-1].objective >= ref.fun * (1 - 1e-6)  # an upper bound


def test_the_outer_loop_does_not_stall_at_the_zero_model():
    """The stall rule divided by the progress since the empty model, 0 while w = 0, so F1 on
    sparse text (5 % positives) stopped at 0 features although the next blocks leave it."""
    ds = make("text-like").split(test_size=0.3, seed=0)
    est = FSMulti(B=2, measure="f1").fit(ds.X, ds.y)
    assert est.n_selected_ > 0
    # the zero model predicts no positive (test F1 0); the escaped one finds some
    pos = est.classes_[1]
    assert f1(ds.y_test == pos, est.predict(ds.X_test) == pos, pos_label=True) > 0.3


def test_numerically_zero_blocks_are_not_selected():
    """Block multipliers at the interior-point solver's tolerance (relative norms 1e-7…1e-10)
    made 8 of 16 "selected" features come from a zero block."""
    ds = make("text-like").split(test_size=0.3, seed=0)
    est = FSMulti(B=8, measure="hamming").fit(ds.X, ds.y)
    m = est._master
    norms = np.array([np.linalg.norm(m.coef[a:b]) for a, b in m.cache.bounds])
    assert np.all((norms == 0) | (norms > 1e-4 * norms.max()))
    assert est.n_selected_ == np.count_nonzero(m.coef)


def test_hamming_default_tolerance_reaches_the_svm_optimum():
    """Hamming FS-multi with one block is a hinge-loss SVM (C_svm = 2C/n); with the default
    inner_tol it landed 10–20 % above its optimum (the bundle's gap was measured against the
    progress over J(0) = 2C, which dwarfs the optimum)."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 400))
    y = np.where(X[:, :5].sum(1) + 0.5 * rng.standard_normal(120) > 0, 1, -1)
    n = len(y)
    est = FSMulti(B=400, measure="hamming", max_outer=1).fit(X, y)
    svm = SVC(kernel="linear", C=2 * est.C_ / n, tol=1e-10).fit(X, y)
    b = svm.intercept_[0]

    def objective(w, b):
        return 0.5 * w @ w + 2 * est.C_ / n * np.maximum(0, 1 - y * (X @ w + b)).sum()

    best = objective(svm.coef_.ravel(), b)
    assert best <= objective(est.coef_, est.intercept_) <= best * (1 + 2 * FSMulti().inner_tol)


def test_a_cut_model_overshooting_by_the_solver_tolerance_is_a_zero_gap_not_negative():
    """w = 0 optimal over the first block: the interior-point cut problem ends a hair above
    the best objective; the record's certified measure is 0, not a large negative number."""
    ds = make("digits-9vr").split(test_size=0.3, seed=0)
    n = ds.X.shape[0]
    est = FSMulti(B=5, C=10 * n, measure="f1", max_outer=1).fit(ds.X, ds.y)
    assert all(0.0 <= r.inner_measure for r in est.history_)
    assert all(np.all(r.info["inner_gaps"] >= 0) for r in est.history_)


def _cut_model(P, q, beta, bounds, C, coef, intercept):
    norms = np.array([np.linalg.norm(coef[a:b]) for a, b in bounds])
    return 0.5 * norms.sum() ** 2 + C * max(0.0, float(np.max(P.T @ coef + intercept * beta + q)))


def test_cut_solution_is_the_models_minimiser_not_just_its_value():
    """The point handed back must attain the model's minimum: read off the interior-point
    multipliers it sat 25 % above it on raw pixels with C = 10·n, and the bundle stalled."""
    data = np.load(Path(__file__).parents[1] / "engines" / "fs_multi" / "data"
                   / "cut_problem_unscaled_digits.npz")
    P, q, beta, C, R = data["P"], data["q"], data["beta"], float(data["C"]), float(data["R"])
    bounds = [tuple(b) for b in data["bounds"]]
    ours = solve_cut_problem(CutModel(P, q, beta, bounds, C, R))
    model = _cut_model(P, q, beta, bounds, C, ours.coef, ours.intercept)
    assert abs(ours.intercept) <= R
    assert model == pytest.approx(ours.value, rel=1e-4)  # well inside the bundle's 1e-3


@pytest.mark.parametrize("measure", ["hamming", "f1"])
def test_default_masters_are_certified_on_raw_pixels_with_large_C(measure):
    """Raw digit pixels (0…16) with C = 10·n: the bundle method (BMRM) used all 200 steps of
    every master and stopped at a gap of 1–6 % (Hamming stalled at 6 %). The last master now
    meets the default inner_tol and the coarse ones the coarse gap."""
    from explorer.optim import COARSE_GAP

    ds = make("digits-9vr").split(test_size=0.3, seed=0)
    est = FSMulti(B=40, C=10 * ds.n_samples, measure=measure, max_outer=2).fit(ds.X, ds.y)
    *coarse, last = est.history_
    assert last.inner_measure <= est.inner_tol
    assert all(r.inner_measure <= COARSE_GAP for r in coarse)
    assert all(r.inner_steps < est.max_inner for r in est.history_)


@pytest.mark.parametrize("measure", ["f1", "rec@k"])
@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_model_for_every_layout_and_dtype(measure, layout, dtype):
    """Dense and sparse input, float32 and float64, reach the same selection and the same
    objective to the bundle's tolerance (the masters compute in float64 on cached columns)."""
    ds = make("text-like", n_samples=400, n_features=600, seed=2)
    kw = dict(B=5, C=0.5 * 400, measure=measure, max_outer=3)
    ref = FSMulti(**kw).fit(ds.X.toarray().astype(np.float64), ds.y)
    est = FSMulti(**kw).fit(as_layout(ds.X, layout, dtype), ds.y)
    assert set(np.flatnonzero(est.support_)) == set(np.flatnonzero(ref.support_))
    tol = 3 * est.inner_tol
    assert est.history_[-1].objective == pytest.approx(ref.history_[-1].objective, rel=tol)
    assert est.coef_.dtype == np.float64


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
@pytest.mark.parametrize("measure", ["f1", "prbep"])
@pytest.mark.parametrize("k", [1, 7, 25])
def test_k_keeps_exactly_k_features(layout, measure, k):
    """FSMulti(k): the path grown to ≥ k, cut to the k of largest |w| (or completed by the
    best worst-case scores), the master solved again on them."""
    from explorer.data import load
    from tests.conftest import as_layout

    data = load("digits-3v8")
    X = as_layout(data.X / 16.0, layout, np.float64)
    est = FSMulti(B=5, measure=measure, k=k).fit(X, data.y)
    assert est.n_selected_ == k and np.count_nonzero(est.coef_) == k
    path, cut = est.history_[-2], est.history_[-1]
    assert cut.info["refine"] == "paper"
    assert est.space_.scaling == "rms"  # pixels: features whose scales spread over 100×
    if path.n_selected >= k:  # the master's weights: |coef_j| / λ_j (λ: the feature scaling)
        scaled = np.abs(path.info["weights"]) / est.space_.lam[path.selected]
        order = np.argsort(-scaled, kind="stable")
        np.testing.assert_array_equal(est.selected_features_, np.sort(path.selected[order[:k]]))


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("k", [1, 3, 6])
def test_k_counts_groups_with_groups(layout, k):
    """FSMulti(k) with groups: exactly k groups, the path's of largest ‖w_g‖."""
    from explorer.data import make
    from tests.conftest import as_layout

    data = make("fgm-groups", n_samples=200, n_groups=25, group_size=4,
                n_informative_groups=3, n_test=50)
    ids = np.asarray(data.groups)
    est = FSMulti(B=2, k=k).fit(as_layout(data.X, layout, np.float64), data.y, groups=ids)
    held = np.unique(ids[est.selected_features_])
    assert held.size == k
    assert set(est.selected_features_) == set(np.flatnonzero(np.isin(ids, held)))
    path = est.history_[-2]
    w = np.zeros(ids.size)
    w[path.selected] = np.abs(path.info["weights"]) / est.space_.lam[path.selected]
    norms = np.sqrt(np.bincount(ids, weights=w ** 2))
    on_path = np.flatnonzero(norms)
    if on_path.size >= k:
        top = on_path[np.argsort(-norms[on_path], kind="stable")[:k]]
        np.testing.assert_array_equal(held, np.sort(top))


def _fit_recording(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return model, [str(w.message) for w in caught]


def test_a_feature_the_master_gives_no_weight_is_not_selected():
    data = load("digits-9vr").split()
    model, said = _fit_recording(FSMulti(k=1, measure="prbep"), data.X, data.y)
    # the optimum on the one feature chosen is the empty model: nothing selected, said so
    assert model.n_selected_ == 0 and not np.any(model.coef_ != 0)
    assert model.history_[-1].info["unused"].size == 1
    assert any("puts no weight on 1" in m for m in said)
    for k in (1, 2, 5):
        fitted, _ = _fit_recording(FSMulti(k=k), data.X, data.y)
        assert np.all(fitted.coef_[fitted.selected_features_] != 0)


def test_rec_at_k_with_k_over_the_rows_warns_instead_of_dividing_by_zero():
    data = load("breast-cancer").split()  # 63 % positives: Rec@2p covers every row
    model, said = _fit_recording(FSMulti(k=2, measure="rec@k"), data.X, data.y)
    assert model.n_selected_ == 0
    assert any("recalls every positive whatever the scores" in m for m in said)
