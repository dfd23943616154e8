"""The penalty objects on their own, against independent references: the ℓ1² value and its
conjugate by Fenchel–Young (with the subgradient that attains it) and by a numerical supremum,
its block prox against a generic minimiser, and the group ℓq penalty's value and prox on both
of its layouts (consecutive blocks and arbitrary row groups)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from explorer.optim.penalties import GroupLq, L1Squared

BOUNDS = [(0, 3), (3, 5), (5, 9)]


def _blocks(v):
    return [v[a:b] for a, b in BOUNDS]


@pytest.mark.parametrize("seed", range(4))
def test_l1_squared_value_and_its_conjugate(seed):
    rng = np.random.default_rng(seed)
    pen = L1Squared(BOUNDS)
    w, u = rng.normal(size=9), rng.normal(size=9)
    total = sum(np.linalg.norm(b) for b in _blocks(w))
    assert pen.value(w) == pytest.approx(0.5 * total ** 2, rel=1e-12)
    assert pen.dual(u) == pytest.approx(0.5 * max(np.linalg.norm(b) ** 2 for b in _blocks(u)))
    assert pen.value(w) + pen.dual(u) >= w @ u - 1e-12  # Fenchel–Young
    # the subgradient u_t = (Σ‖w‖) w_t/‖w_t‖ attains it
    g = np.concatenate([total * b / np.linalg.norm(b) for b in _blocks(w)])
    assert pen.value(w) + pen.dual(g) == pytest.approx(w @ g, rel=1e-12)


def test_l1_squared_conjugate_is_the_supremum():
    """Ω*(u) = sup_w ⟨u, w⟩ − Ω(w), by a generic minimiser from several starts."""
    rng = np.random.default_rng(7)
    pen = L1Squared(BOUNDS)
    u = rng.normal(size=9)
    best = -np.inf
    for _ in range(5):
        res = minimize(lambda w: pen.value(w) - u @ w, rng.normal(size=9), method="Powell",
                       options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 200000})
        best = max(best, -res.fun)
    assert best == pytest.approx(pen.dual(u), rel=1e-5)


def _no_better_nearby(objective, x, rng, trials=400):
    """A convex objective's point that no small move improves is its minimiser (the generic
    minimiser above only bounds the value: it stalls at the blocks' kinks)."""
    here = objective(x)
    for scale in (1e-3, 1e-5):
        for _ in range(trials // 2):
            assert objective(x + scale * rng.normal(size=x.size)) >= here - 1e-13


@pytest.mark.parametrize("step", [0.05, 0.7, 3.0])
def test_l1_squared_prox_is_the_minimiser(step):
    rng = np.random.default_rng(1)
    pen = L1Squared(BOUNDS)
    g = rng.normal(size=9)
    prox = pen.expand(pen.scales(g, step)) * g

    def objective(w):
        return 0.5 * np.sum((w - g) ** 2) + step * pen.value(w)

    res = minimize(objective, g, method="Powell",
                   options={"xtol": 1e-12, "ftol": 1e-15, "maxiter": 200000})
    assert objective(prox) <= res.fun + 1e-9
    _no_better_nearby(objective, prox, rng)


@pytest.mark.parametrize("q", [2.0, 3.0])
@pytest.mark.parametrize("groups", [
    [np.arange(0, 2), np.arange(2, 4), np.arange(4, 6)],  # GrFL's consecutive blocks
    [np.array([0, 3]), np.array([1, 5]), np.array([2, 4])],  # any rows
], ids=["blocks", "rows"])
def test_group_lq_value_and_prox(q, groups):
    rng = np.random.default_rng(2)
    pen = GroupLq(groups, lam=0.4, q=q, lam_shared=0.2)
    W, ws = rng.normal(size=(6, 2)), rng.normal(size=2)
    expected = 0.4 * sum(np.sum(np.abs(W[g]) ** q) ** (1 / q) for g in groups) + \
        0.2 * np.abs(ws).sum()
    assert pen.value(W, ws) == pytest.approx(expected, rel=1e-12)
    step = 0.8
    nW, ns = pen.prox(W, ws, step)

    def objective(x):
        V, vs = x[:12].reshape(6, 2), x[12:]
        return 0.5 * np.sum((V - W) ** 2) + 0.5 * np.sum((vs - ws) ** 2) + \
            step * pen.value(V, vs)

    res = minimize(objective, np.concatenate([W.ravel(), ws]), method="Powell",
                   options={"xtol": 1e-12, "ftol": 1e-15, "maxiter": 400000})
    ours = np.concatenate([nW.ravel(), ns])
    assert objective(ours) <= res.fun + 1e-9
    _no_better_nearby(objective, ours, rng)
