"""The proximal maps of the core (explorer/optim/prox.py), against conic solvers and against
their own definition as minimisers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from explorer.optim import (
    l1_squared_block_scales,
    prox_group_l2,
    prox_group_lq,
    prox_l1_squared,
    soft_threshold,
)
from tests.reference_solvers import prox_l1_squared_reference


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tau", [0.05, 1.0, 20.0])
def test_moreau_projection_matches_conic_solver(seed, tau):
    rng = np.random.default_rng(seed)
    blocks = [rng.normal(size=rng.integers(1, 5)) * rng.uniform(0.1, 3) for _ in range(5)]
    ours = prox_l1_squared(blocks, 1.0 / tau)
    ref = prox_l1_squared_reference(blocks, tau)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_moreau_projection_edge_cases():
    assert l1_squared_block_scales(np.zeros(0), 1.0).size == 0
    np.testing.assert_array_equal(l1_squared_block_scales(np.zeros(3), 1.0), 0.0)
    # a single block: ½‖ω‖² prox is shrinkage by 1/(1+s)
    np.testing.assert_allclose(l1_squared_block_scales(np.array([2.0]), 0.5), [1 / 1.5])


def _prox_objective_check(prox, penalty, v, step, x0=None):
    def obj(x):
        return penalty(x) + np.sum((x - v) ** 2) / (2 * step)

    ours = prox(v, step)
    res = minimize(obj, ours + 0.01, method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
    assert obj(ours) <= res.fun + 1e-8


@pytest.mark.parametrize("seed", range(4))
def test_soft_threshold_and_group_prox_are_minimisers(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=4)
    _prox_objective_check(lambda v, s: soft_threshold(v, 0.7 * s),
                          lambda x: 0.7 * np.abs(x).sum(), v, 1.0)
    _prox_objective_check(lambda v, s: prox_group_l2(v[None, :], 0.7 * s)[0],
                          lambda x: 0.7 * np.linalg.norm(x), v, 1.0)
    _prox_objective_check(lambda v, s: prox_group_lq(v[None, :], 0.7 * s, 3.0)[0],
                          lambda x: 0.7 * np.sum(np.abs(x) ** 3) ** (1 / 3), v, 1.0)
