"""GrFL's restricted master (eq. 17): FISTA and the ADMM of §4.1 against a conic solver and the
optimality conditions (5)–(10)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.engines.grfl.group_master import (
    GroupObjective,
    admm_master,
    fista_master,
    loss_gradient,
    objective,
)
from explorer.optim import Stopping
from tests.reference_solvers import group_lasso_reference


def _problem(seed, n=30, n_groups=5, gsize=2, T=1, loss="squared_hinge"):
    rng = np.random.default_rng(seed)
    Phi = rng.standard_normal((n, n_groups * gsize))
    Phi /= np.linalg.norm(Phi, axis=0)
    W_true = rng.standard_normal((n_groups * gsize, T)) * (rng.random((n_groups * gsize, 1)) < 0.5)
    F = Phi @ W_true * 3
    Y = F + 0.3 * rng.standard_normal((n, T)) if loss == "squared" else \
        np.where(F + 0.3 * rng.standard_normal((n, T)) > 0, 1.0, -1.0)
    groups = [np.arange(g * gsize, (g + 1) * gsize) for g in range(n_groups)]
    return Phi, Y, groups


def _kkt(Phi, Y, W, b, groups, loss, lam, q=2.0):
    """Largest relative violation of (5)–(6) and of the intercept's stationarity."""
    G = Phi.T @ loss_gradient(loss, Y, Phi @ W + b[None, :])
    worst = float(np.abs(loss_gradient(loss, Y, Phi @ W + b[None, :]).sum(axis=0)).max()) / lam
    qd = q / (q - 1.0)
    for g in groups:
        Wg, Gg = W[g].ravel(), G[g].ravel()
        nrm = np.sum(np.abs(Wg) ** q) ** (1 / q)
        if nrm > 1e-9:
            # −∇ = λ ∂‖W_g‖_q: the dual norm equals λ and ⟨−∇, W_g⟩ = λ‖W_g‖_q
            worst = max(worst, abs(np.sum(np.abs(Gg) ** qd) ** (1 / qd) / lam - 1.0),
                        abs(-Gg @ Wg / (lam * nrm) - 1.0))
        else:
            worst = max(worst, np.sum(np.abs(Gg) ** qd) ** (1 / qd) / lam - 1.0)
    return worst


@pytest.mark.parametrize("loss", ["squared_hinge", "squared"])
@pytest.mark.parametrize("T", [1, 3])
@pytest.mark.parametrize("seed", range(3))
def test_fista_and_admm_equal_the_conic_solution(loss, T, seed):
    Phi, Y, groups = _problem(seed, T=T, loss=loss)
    lam = 0.3 * np.linalg.norm(Phi.T @ loss_gradient(loss, Y, np.zeros_like(Y)), axis=1).max()
    W_ref, b_ref, obj_ref = group_lasso_reference(Phi, Y, groups, loss, lam)
    spec = GroupObjective(Y, loss, lam)
    fista = fista_master(Phi, groups, spec, stopping=Stopping(1e-7, 20000))
    admm = admm_master(Phi, groups, spec, stopping=Stopping(1e-6, 20000))
    assert fista.objective == pytest.approx(obj_ref, rel=1e-6, abs=1e-8)
    assert admm.objective == pytest.approx(obj_ref, rel=1e-4, abs=1e-6)
    np.testing.assert_allclose(fista.x[0], W_ref, atol=2e-4)
    np.testing.assert_allclose(fista.x[2], b_ref, atol=2e-4)
    # the same zero pattern at the group level
    active = [np.linalg.norm(W_ref[g]) > 1e-4 for g in groups]
    assert [np.linalg.norm(fista.x[0][g]) > 1e-6 for g in groups] == active
    assert [np.linalg.norm(admm.x[0][g]) > 1e-6 for g in groups] == active


@pytest.mark.parametrize("q", [2.0, 3.0, 1.5])
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_masters_meet_the_optimality_conditions(loss, q):
    """No conic reference for the logistic loss or q ≠ 2: check (5)–(6) directly."""
    Phi, Y, groups = _problem(4, T=2, loss=loss, gsize=3)
    lam = 0.5 * np.linalg.norm(Phi.T @ loss_gradient(loss, Y, np.zeros_like(Y)), axis=1).max()
    # the KKT residual is certified to 1e-5 (q ≠ 2 reaches a floor near 1e-5 with FISTA)
    spec = GroupObjective(Y, loss, lam, q=q)
    fista = fista_master(Phi, groups, spec, stopping=Stopping(1e-5, 50000))
    assert fista.converged and fista.measure <= 1e-5
    assert _kkt(Phi, Y, fista.x[0], fista.x[2], groups, loss, lam, q) < 1e-3
    admm = admm_master(Phi, groups, spec, stopping=Stopping(1e-6, 50000))
    assert admm.objective == pytest.approx(fista.objective, rel=1e-4)
    assert 0 < sum(np.linalg.norm(fista.x[0][g]) > 0 for g in groups) < len(groups)


def test_shared_weights_follow_their_subgradient_conditions():
    """λ_s‖w̃‖₁ on weights added to every task: Σ_t ∇_t is in −λ_s ∂‖w̃‖₁."""
    Phi, Y, groups = _problem(7, T=3, loss="squared")
    Y = Y + 2.0 * Phi[:, [0]]            # a column every task shares
    lam_p, lam_s = 1.0, 0.5
    spec = GroupObjective(Y, "squared", lam_p, lam_s)
    res = fista_master(Phi, groups, spec, stopping=Stopping(1e-7, 50000))
    G = Phi.T @ loss_gradient("squared", Y, Phi @ (res.x[0] + res.x[1][:, None]) + res.x[2])
    g = G.sum(axis=1)
    on = np.abs(res.x[1]) > 1e-9
    assert on.any()
    np.testing.assert_allclose(-g[on], lam_s * np.sign(res.x[1][on]), atol=1e-4)
    assert np.all(np.abs(g[~on]) <= lam_s * (1 + 1e-4))
    admm = admm_master(Phi, groups, spec, stopping=Stopping(1e-6, 50000))
    assert admm.objective == pytest.approx(res.objective, rel=1e-4)


def test_warm_start_from_the_solution_is_much_shorter():
    Phi, Y, groups = _problem(2)
    spec = GroupObjective(Y, "squared_hinge", 0.5)
    cold = fista_master(Phi, groups, spec, stopping=Stopping(1e-7, 5000))
    warm = fista_master(Phi, groups, spec, (cold.x[0], None, cold.x[2]),
                        stopping=Stopping(1e-7, 5000))
    assert warm.n_iter < cold.n_iter / 4
    assert cold.objective - 1e-6 <= warm.objective <= cold.objective
    assert objective(Phi, groups, spec, warm.x) == pytest.approx(warm.objective)


def test_fista_line_search_is_bounded_on_non_finite_data():
    """A NaN feature response made the backtracking loop run forever."""
    Phi = np.full((10, 4), np.nan)
    Y = np.where(np.arange(10) % 2, 1.0, -1.0)[:, None]
    groups = [np.arange(0, 2), np.arange(2, 4)]
    with pytest.raises(FloatingPointError, match="not finite"):
        fista_master(Phi, groups, GroupObjective(Y, "squared_hinge", 0.1),
                     stopping=Stopping(1e-4, 5))
