"""The level method over the capped simplex (FS-Manifold Alg. 2) as a shared loop."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from explorer.optim.level import level_method
from explorer.optim.stopping import Stopping


def _piecewise_linear(d: int, J: int, seed: int = 0):
    """g(p) = max_j (c_j − G_j·p) with J random cuts over d coordinates, and its oracle."""
    rng = np.random.default_rng(seed)
    c, G = rng.standard_normal(J), rng.standard_normal((J, d))

    def oracle(p):
        j = int(np.argmax(c - G @ p))
        return float(c[j] - G[j] @ p), float(c[j]), G[j].copy(), j

    return c, G, oracle


def test_level_method_reaches_the_lp_optimum_of_a_piecewise_linear_function():
    """g(p) = max_j (c_j − G_j·p) over {0 ≤ p ≤ 1, Σp = m}; its exact minimum is an LP."""
    d, J, m = 12, 8, 3.0
    c, G, oracle = _piecewise_linear(d, J)
    steps = []
    result = level_method(oracle, d, m, level=0.5, stopping=Stopping(1e-5, 500),
                          on_step=lambda s: steps.append(s) or True)
    lp = linprog(np.r_[np.zeros(d), 1.0], A_ub=np.hstack([-G, -np.ones((J, 1))]), b_ub=-c,
                 A_eq=np.r_[np.ones(d), 0.0][None, :], b_eq=[m],
                 bounds=[(0, 1)] * d + [(None, None)], method="highs")
    assert result.converged
    assert result.upper == pytest.approx(lp.fun, abs=1e-5)
    assert result.lower <= lp.fun + 1e-9 <= result.upper + 2e-9
    uppers = [s.upper for s in steps]
    lowers = [s.lower for s in steps]
    assert all(b <= a for a, b in zip(uppers, uppers[1:]))
    assert all(b >= a for a, b in zip(lowers, lowers[1:]))
    assert steps[-1].measure <= 1e-5 and len(steps) == result.n_iter


def test_on_step_false_stops_the_loop():
    rng = np.random.default_rng(1)
    d, m = 6, 2.0
    c, G = rng.standard_normal(5), rng.standard_normal((5, d))

    def oracle(p):
        j = int(np.argmax(c - G @ p))
        return float(c[j] - G[j] @ p), float(c[j]), G[j].copy(), j

    result = level_method(oracle, d, m, level=0.5, stopping=Stopping(0.0, 100),
                          on_step=lambda s: s.iteration < 3)
    assert result.n_iter == 3 and not result.converged


def _smooth_problem(scale):
    """g(p) = scale · (½‖A p − b‖² + 1): smooth, so the level method needs many cuts."""
    rng = np.random.default_rng(7)
    d, m = 15, 4.0
    A, b = rng.standard_normal((20, d)), rng.standard_normal(20)

    def oracle(p):
        r = A @ p - b
        value = scale * (0.5 * r @ r + 1.0)
        grad = scale * (A.T @ r)
        # the cut value − grad·(q − p) written as c − G·q
        return float(value), float(value + grad @ p), grad, None

    return oracle, d, m


@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_the_level_method_does_not_depend_on_the_objectives_units(scale):
    """An objective in small units (FS-Manifold's SVM value on raw features is ~1e-5) must
    not stall the projection or the LP: the same iterates and the same certificate."""
    oracle, d, m = _smooth_problem(1.0)
    reference = level_method(oracle, d, m, level=0.9, stopping=Stopping(1e-4, 300),
                             on_step=lambda s: True)
    oracle, d, m = _smooth_problem(scale)
    result = level_method(oracle, d, m, level=0.9, stopping=Stopping(1e-4, 300),
                          on_step=lambda s: True)
    assert reference.converged and result.converged
    assert result.n_iter == pytest.approx(reference.n_iter, abs=2)
    assert result.upper == pytest.approx(scale * reference.upper, rel=1e-6)
    np.testing.assert_allclose(result.best_p, reference.best_p, atol=1e-6)


def test_fixed_coordinates_held_at_one_reach_the_restricted_lp_optimum():
    """Pinned features (``fixed``) are held at p_j = 1: the level method reaches the LP
    optimum over {p_fixed = 1, 0 ≤ p ≤ 1, Σp = m} — written here as bounds (1, 1) for
    HiGHS —, every point it visits keeps them at 1, and that optimum is above the free one."""
    d, J, m, fixed = 12, 8, 3.0, [4, 9]
    c, G, oracle = _piecewise_linear(d, J)
    steps = []
    result = level_method(oracle, d, m, level=0.5, stopping=Stopping(1e-5, 500),
                          on_step=lambda s: steps.append(s) or True, fixed=fixed)

    def lp(bounds):
        return linprog(np.r_[np.zeros(d), 1.0], A_ub=np.hstack([-G, -np.ones((J, 1))]),
                       b_ub=-c, A_eq=np.r_[np.ones(d), 0.0][None, :], b_eq=[m],
                       bounds=bounds + [(None, None)], method="highs").fun

    restricted = lp([(1, 1) if j in fixed else (0, 1) for j in range(d)])
    assert result.converged
    assert result.lower <= restricted + 1e-9 <= result.upper + 2e-9
    assert result.upper - restricted <= 1e-5 * abs(result.upper)  # the certified gap
    assert all(np.allclose(s.p[fixed], 1.0) and abs(s.p.sum() - m) < 1e-8 for s in steps)
    assert restricted > lp([(0, 1)] * d) + 1e-3  # the pins change the problem


def test_the_capped_simplex_projection_with_a_floor_is_the_qp():
    from scipy.optimize import minimize

    from explorer.optim.level import project_capped_simplex

    rng = np.random.default_rng(2)
    v, m = rng.normal(size=9), 4.0
    floor = np.zeros(9)
    floor[[1, 6]] = 1.0
    p = project_capped_simplex(v, m, lower=floor)
    qp = minimize(lambda q: np.sum((q - v) ** 2), np.full(9, m / 9), jac=lambda q: 2 * (q - v),
                  bounds=list(zip(floor, np.ones(9))), method="SLSQP",
                  constraints=[{"type": "eq", "fun": lambda q: q.sum() - m}],
                  options={"ftol": 1e-14, "maxiter": 500})
    np.testing.assert_allclose(p, qp.x, atol=1e-6)
    assert p[[1, 6]].tolist() == [1.0, 1.0] and p.sum() == pytest.approx(m)
