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


@pytest.mark.parametrize("params", [{}, {"k": 10}])
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
