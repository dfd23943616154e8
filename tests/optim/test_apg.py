"""The one APG on problems with independent references: the Lasso (scikit-learn's coordinate
descent) through the group master with singleton groups, and the ℓ2 SVM (one block of the ℓ1²
master) with the default certificate."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from explorer.engines.grfl.group_master import GroupObjective, GroupProblem, fista_master
from explorer.optim import Stopping, apg


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("alpha", [0.01, 0.1])
def test_lasso_through_the_group_master_equals_coordinate_descent(dtype, alpha):
    """GrFL's squared loss Σ(y − f)² + λ‖w‖₁ with one column per group is the Lasso with
    λ = 2nα (scikit-learn minimises ‖y − Xw − b‖²/(2n) + α‖w‖₁). The data go in as given
    (float32 stays float32 up to the master); the reference sees the same values in float64."""
    rng = np.random.default_rng(0)
    n, d = 80, 15
    X = rng.standard_normal((n, d)).astype(dtype)
    y = (X[:, :3] @ np.array([2.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(n)).astype(dtype)
    groups = [np.array([j]) for j in range(d)]
    res = fista_master(X, groups, GroupObjective(y[:, None], "squared", 2 * n * alpha),
                       stopping=Stopping(1e-8, 20000))
    ref = Lasso(alpha=alpha, tol=1e-12, max_iter=100000).fit(X.astype(np.float64),
                                                            y.astype(np.float64))
    assert res.converged and res.measure <= 1e-8
    np.testing.assert_allclose(res.x[0][:, 0], ref.coef_, atol=1e-6)
    assert res.x[2][0] == pytest.approx(ref.intercept_, abs=1e-6)


def test_interrupt_returns_the_current_iterate():
    rng = np.random.default_rng(1)
    Phi = rng.standard_normal((40, 6))
    Y = np.where(rng.standard_normal((40, 1)) > 0, 1.0, -1.0)
    problem = GroupProblem(Phi, [np.arange(6)], GroupObjective(Y, "squared_hinge", 0.1), L=10.0)
    x0 = (np.zeros((6, 1)), np.zeros(6), np.zeros(1))
    calls = []

    def interrupt():
        calls.append(1)
        return len(calls) > 3

    res = apg(problem, x0, L0=10.0, stopping=Stopping(0.0, 10**6), interrupt=interrupt)
    assert 0 < res.n_iter <= 3 and not res.converged


@pytest.mark.parametrize("eta,L0", [(0.0, 1.0), (1.0, 1.0), (0.5, 0.0), (0.5, float("nan"))])
def test_bad_knobs_raise(eta, L0):
    spec = GroupObjective(np.ones((3, 1)), "squared", 0.1)
    problem = GroupProblem(np.eye(3), [np.arange(3)], spec)
    with pytest.raises(ValueError):
        apg(problem, (np.zeros((3, 1)), np.zeros(3), np.zeros(1)), L0=L0,
            stopping=Stopping(1e-6, 10), eta=eta)


def test_stall_ends_an_uncertified_solve_and_bad_stall_raises():
    """``stall`` (the paper's relative objective change, for solves that only steer an outer
    loop) stops before the certificate, says converged=False, and costs fewer steps."""
    from explorer.engines.fgm.l12 import L12Problem, solve_l12
    from explorer.optim import BlockCache
    from explorer.optim.losses import make_loss

    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 8)) * np.array([1, 1, 1, 1, 5, 5, 0.3, 0.3])
    y = np.where(X[:, 0] + X[:, 4] + rng.standard_normal(60) > 0, 1.0, -1.0)
    cache = BlockCache(60, sparse=False)
    cache.add(X[:, :4])
    cache.add(X[:, 4:])

    def solve(stopping):
        return solve_l12(L12Problem(cache, y, make_loss("squared_hinge"), 1.0, compiled=False),
                         stopping=stopping)

    certified = solve(Stopping(1e-8, 50000))
    stalled = solve(Stopping(1e-8, 50000, stall=1e-4))
    assert certified.converged and not stalled.converged
    assert stalled.n_iter < certified.n_iter and stalled.measure > 1e-8
    with pytest.raises(ValueError, match="stall"):
        Stopping(1e-6, 10, stall=float("nan"))
