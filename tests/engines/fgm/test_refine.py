"""FGM's restricted refits (explorer/engines/fgm/refine.py) against conic references."""

from __future__ import annotations

import numpy as np
import pytest

from tests.reference_solvers import l12_master_reference


@pytest.mark.parametrize("loss_name", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_newton_refit_equals_the_conic_reference_on_badly_scaled_columns(loss_name,
                                                                         fit_intercept):
    """The restricted ℓ2 model by Newton's method on raw-pixel-like scales (0…16, uncentred),
    where first-order steps need thousands of iterations: the conic solver's objective and
    weights, and a certified gap."""
    from explorer.engines.fgm.refine import Restricted, restricted_fit
    from explorer.optim.losses import make_loss
    from explorer.optim.stopping import Stopping

    rng = np.random.default_rng(5)
    X = np.floor(16 * rng.random((80, 6)) ** 2)
    y = np.where(X[:, 0] - X[:, 1] + 4 * rng.standard_normal(80) > 0, 1.0, -1.0)
    problem = Restricted(y, make_loss(loss_name), 10.0, fit_intercept, Stopping(1e-10, 100))
    coef, b, res = restricted_fit(problem, X, np.arange(6))
    omegas, b_ref, obj_ref = l12_master_reference([X], y, 10.0, loss=loss_name,
                                                  fit_intercept=fit_intercept)
    assert res.objective == pytest.approx(obj_ref, rel=1e-6)
    np.testing.assert_allclose(coef, omegas[0], rtol=1e-3, atol=1e-5)
    assert b == pytest.approx(b_ref, abs=1e-3)
    assert res.measure <= 1e-8


@pytest.mark.parametrize("solver", ["newton", "apg"])
@pytest.mark.parametrize("start", ["near", "far"])
def test_a_started_refit_reaches_the_conic_reference(solver, start, monkeypatch):
    """The refit started from a model (the path's, pruned): the same minimiser as the
    conic reference either way, its trace starting at that model's objective when it is below
    the empty model's and at the empty model's otherwise (a start far off is not taken)."""
    from explorer.engines.fgm import refine
    from explorer.optim.losses import make_loss
    from explorer.optim.stopping import Stopping

    if solver == "apg":
        monkeypatch.setattr(refine, "NEWTON_MAX_CELLS", 0)
    rng = np.random.default_rng(7)
    X = rng.standard_normal((120, 5))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.3] - 0.5 + rng.standard_normal(120) > 0, 1.0, -1.0)
    omegas, b_ref, obj_ref = l12_master_reference([X], y, 1.0)
    coef0 = omegas[0] * 0.8 if start == "near" else np.full(5, 50.0)
    intercept0 = 0.8 * b_ref if start == "near" else 0.0
    problem = refine.Restricted(y, make_loss("squared_hinge"), 1.0, True, Stopping(1e-10, 5000))
    coef, b, res = refine.restricted_fit(problem, X, np.arange(5), coef0=coef0,
                                         intercept0=intercept0)
    assert res.objective == pytest.approx(obj_ref, rel=1e-6)
    np.testing.assert_allclose(coef, omegas[0], rtol=1e-3, atol=1e-5)
    assert b == pytest.approx(b_ref, abs=1e-3)

    def F(w, c):
        return 0.5 * w @ w + 0.5 * np.square(np.maximum(0.0, 1.0 - y * (X @ w + c))).sum()

    first = res.trace[0]
    assert first == pytest.approx(F(coef0, intercept0) if start == "near" else F(np.zeros(5), 0),
                                  rel=1e-9)
