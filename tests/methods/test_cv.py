"""C="cv": the C of best held-out score over a grid, the same as GridSearchCV's."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from explorer import FGM
from explorer.data import load, make
from explorer.methods.base import REGISTRY

CS = [0.01, 0.1, 1.0, 10.0, 100.0]


@pytest.fixture(scope="module")
def digits():
    return load("digits-3v8")


@pytest.mark.parametrize("params", [{}, {"k": 10}, {"k": 10, "B": 10, "refine": "auto"}])
def test_fgm_cv_equals_grid_search_on_the_same_grid_and_folds(digits, params):
    est = FGM(C="cv", Cs=CS, cv=3, **params).fit(digits.X, digits.y)
    grid = GridSearchCV(FGM(**params), {"C": CS}, cv=3).fit(digits.X, digits.y)
    np.testing.assert_allclose(est.cv_scores_.mean(axis=1),
                               grid.cv_results_["mean_test_score"], atol=1e-12)
    assert est.C_ == grid.best_params_["C"] and est.C == "cv"
    refit = FGM(C=est.C_, **params).fit(digits.X, digits.y)
    np.testing.assert_allclose(est.coef_, refit.coef_, atol=1e-12)
    assert est.get_params()["C"] == "cv"  # the parameter is kept: clone() refits the same way
    assert clone(est).get_params()["C"] == "cv"


@pytest.mark.parametrize("name", sorted(n for n, cls in REGISTRY.items()
                                        if any(s.name == "C" for s in cls.param_specs)))
def test_every_method_with_a_C_offers_cv(digits, name):
    cls = REGISTRY[name]
    spec = next(s for s in cls.param_specs if s.name == "C")
    assert "cv" in spec.extra.get("allow_strings", ()) and "cv" in spec.extra["words"]
    assert {"Cs", "cv"} <= set(cls().get_params())
    X, y = digits.X[:, :20] / 16.0, digits.y
    est = cls(C="cv", Cs=[spec.low * 10, 1.0], cv=2).fit(X, y)
    assert est.C_ in (spec.low * 10, 1.0) and est.cv_scores_.shape == (2, 2)
    assert est.C == "cv" and est.n_selected_ >= 1


@pytest.mark.parametrize("bad", [[0.0, 1.0], [np.nan], [], [-1.0]])
def test_a_bad_grid_is_a_clear_error(digits, bad):
    with pytest.raises(ValueError, match="Cs must"):
        FGM(C="cv", Cs=bad).fit(digits.X, digits.y)


def test_too_few_rows_of_a_class_for_the_folds_is_a_clear_error():
    data = make("text-like", n_samples=60, n_features=200, positive_rate=0.03, seed=0)
    with pytest.raises(ValueError, match="rows of every class"):
        FGM(C="cv", cv=5).fit(data.X, data.y)


def test_a_search_stopped_at_once_still_leaves_a_model(digits):
    """Stop pressed during the search: no score yet, the fit after it stops at once."""
    class StopNow:
        def __call__(self, record):
            return False

        def cancelled(self):
            return True

    est = FGM(C="cv", Cs=CS).fit(digits.X, digits.y, callback=StopNow())
    assert est.stopped_early_ and est.C == "cv" and est.C_ == CS[0]
    assert np.all(np.isnan(est.cv_scores_))


def test_a_numeric_C_after_cv_leaves_no_stale_search(digits):
    est = FGM(C="cv", Cs=CS).fit(digits.X, digits.y)
    est.set_params(C=1.0).fit(digits.X, digits.y)
    assert est.C_ == 1.0 and not hasattr(est, "cv_scores_")


def _noisy(n=90, d=30, seed=0):
    """A small set where C binds: 5 informative features, 15 % of the labels flipped."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X[:, :5] @ np.ones(5) + 0.3 * rng.standard_normal(n))
    flip = rng.random(n) < 0.15
    y[flip] = -y[flip]
    return X, y


def test_fs_manifold_cv_path_equals_grid_search_with_less_work():
    from explorer.methods import FSManifold

    X, y = _noisy()
    Cs = [0.01, 0.1, 1.0, 10.0]
    params = {"m": 5}  # the defaults: tol = 1e-3
    est = FSManifold(C="cv", Cs=Cs, cv=3, **params).fit(X, y)
    grid = GridSearchCV(FSManifold(**params), {"C": Cs}, cv=3).fit(X, y)
    np.testing.assert_allclose(est.cv_scores_.mean(axis=1),
                               grid.cv_results_["mean_test_score"], atol=1e-12)
    assert est.C_ == grid.best_params_["C"]
    # the work: level-method iterations along each fold's path against cold fits at each C
    from explorer.methods._cv import folds

    warm = cold = 0
    for train, _ in folds(y, 3, "classification"):
        member, state = FSManifold(**params), None
        for C in Cs:
            member.set_params(C=C)
            if state is not None:
                member._path_start = state
            member.fit(X[train], y[train])
            warm += member.n_iter_
            state = member._path_state()
            fresh = FSManifold(C=C, **params).fit(X[train], y[train])
            cold += fresh.n_iter_
            np.testing.assert_array_equal(member.selected_features_, fresh.selected_features_)
            # both certified to the level method's gap (tol = 1e-3): the same optimum
            assert member.upper_bound_ == pytest.approx(fresh.upper_bound_, rel=1e-3)
            assert member.lower_bound_ <= fresh.upper_bound_ and \
                fresh.lower_bound_ <= member.upper_bound_
            assert not hasattr(member, "_path_start")  # consumed by that one fit
    assert warm < 0.7 * cold, (warm, cold)


def test_level_method_rejects_a_start_outside_its_set():
    from explorer.optim import Stopping
    from explorer.optim.level import level_method

    def oracle(p):
        return 0.0, 0.0, np.zeros(4), None

    for bad in (np.full(4, 0.9), np.array([np.nan, 1, 1, 0]), np.ones(3)):
        with pytest.raises(ValueError, match="p0 must lie"):
            level_method(oracle, 4, 2, level=0.5, stopping=Stopping(1e-3, 10),
                         on_step=lambda s: True, p0=bad)


@pytest.mark.parametrize("name", ["fgm", "l1-svm", "fs-multi"])
def test_the_parameter_reads_cv_while_the_chosen_C_is_fitted(digits, name):
    """C="cv" fits a copy at the chosen C: whoever reads the estimator's parameters during
    the fit (a page exporting its session, a callback) sees "cv", never the chosen number,
    and the model is the one fitted at that C."""
    cls = REGISTRY[name]
    X, y = digits.X[:, :20] / 16.0, digits.y
    est = cls(C="cv", Cs=[0.1, 1.0], cv=2)
    seen = []
    est.fit(X, y, callback=lambda record: seen.append(est.get_params()["C"]))
    assert seen and set(seen) == {"cv"}
    at = cls(C=est.C_).fit(X, y)
    np.testing.assert_allclose(est.coef_, at.coef_, atol=1e-12)
    assert not any(name.startswith("_fit_recorder") for name in vars(est))


def test_a_warm_start_carries_across_cv_fits(digits):
    """The copy fitted at the chosen C starts from this estimator's previous fit."""
    est = FGM(C="cv", Cs=[0.1, 1.0], cv=2, warm_start=True, B=2)
    est.fit(digits.X / 16.0, digits.y)
    assert not any(r.info.get("warm_start") for r in est.history_)
    est.fit(digits.X / 16.0, digits.y)
    assert all(r.info.get("warm_start") for r in est.history_) and est.C == "cv"
