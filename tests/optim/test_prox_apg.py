"""Prox operators and the APG master against a generic conic solver (Clarabel)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from explorer.engines.fgm import L12Master, L12Problem, Restricted, solve_l12
from explorer.optim import (
    BlockCache,
    Logistic,
    SquaredHinge,
    Stopping,
    l1_squared_block_scales,
    prox_group_l2,
    prox_group_lq,
    prox_l1_squared,
    soft_threshold,
)
from tests.reference_solvers import l12_master_reference, prox_l1_squared_reference


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


def _blocks(seed, n=25, sizes=(3, 2, 4)):
    rng = np.random.default_rng(seed)
    blocks = [rng.normal(size=(n, s)) for s in sizes]
    w = rng.normal(size=sum(sizes))
    y = np.sign(np.hstack(blocks) @ w + 0.5 * rng.normal(size=n))
    return blocks, y


def _cache(blocks, sparse=False, dtype=np.float64):
    import scipy.sparse as sp

    cache = BlockCache(blocks[0].shape[0], sparse=sparse)
    for blk in blocks:
        blk = blk.astype(dtype)
        cache.add(sp.csc_matrix(blk) if sparse else blk)
    return cache


@pytest.mark.parametrize("loss_name", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("compiled", [False, True])
def test_apg_master_matches_conic_solver(loss_name, fit_intercept, seed, compiled):
    blocks, y = _blocks(seed)
    C = 0.7
    loss = SquaredHinge() if loss_name == "squared_hinge" else Logistic()
    res = solve_l12(L12Problem(_cache(blocks), y, loss, C, fit_intercept=fit_intercept,
                               compiled=compiled), stopping=Stopping(0.0, 20000))
    omegas, b, obj = l12_master_reference(blocks, y, C, loss_name, fit_intercept)
    assert res.objective == pytest.approx(obj, rel=1e-6)
    np.testing.assert_allclose(res.x[0], np.concatenate(omegas), atol=2e-4)
    assert res.x[1][0] == pytest.approx(b, abs=2e-4)
    # the objective trace ends at the reported objective and (with restarts) barely rises
    assert res.trace[-1] == pytest.approx(res.objective)
    rises = np.diff(res.trace)
    assert np.sum(np.clip(rises, 0, None)) <= 1e-3 * abs(res.trace[0])


@pytest.mark.parametrize("loss_name", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_apg_stops_on_a_certified_gap(loss_name, fit_intercept, tol):
    """The reported gap bounds the true distance to the optimum (found by a conic solver):
    a stop at ``tol`` means the objective is within ``tol`` of the optimum, relative."""
    blocks, y = _blocks(5)
    loss = SquaredHinge() if loss_name == "squared_hinge" else Logistic()
    res = solve_l12(L12Problem(_cache(blocks), y, loss, 0.7, fit_intercept=fit_intercept),
                    stopping=Stopping(tol, 20000))
    _, _, obj = l12_master_reference(blocks, y, 0.7, loss_name, fit_intercept)
    assert res.converged and res.measure <= tol
    # (the conic reference itself is accurate to ~1e-8)
    assert -1e-7 <= (res.objective - obj) / res.objective <= res.measure + 1e-7


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_cache_equals_dense_cache(dtype):
    blocks, y = _blocks(7)
    results = [solve_l12(L12Problem(_cache(blocks, sparse, dtype), y, SquaredHinge(), 1.0,
                                    compiled=False), stopping=Stopping(0.0, 3000))
               for sparse in (False, True)]
    np.testing.assert_allclose(results[0].x[0], results[1].x[0], atol=1e-8)


def test_master_warm_start_reuses_the_solution():
    from explorer.features import Columns

    blocks, y = _blocks(3)
    problem = Restricted(y, SquaredHinge(), 1.0, True, Stopping(1e-10, 20000))
    master = L12Master(problem, n_samples=len(y), sparse_cache=False)
    master.initial()

    def cols(A):
        k = A.shape[1]
        return Columns(A, np.arange(k), np.arange(k), -np.ones(k, int), np.ones(k),
                       np.zeros(k, np.int8))

    master.add_block(cols(blocks[0]))
    first = master.solve()
    again = master.solve()  # nothing changed: a warm solve converges at once
    assert again.inner_steps <= 3 < first.inner_steps
    assert again.objective == pytest.approx(first.objective, rel=1e-8)


@pytest.mark.parametrize("loss", [SquaredHinge(), Logistic()])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_compiled_steps_equal_the_python_steps(loss, fit_intercept):
    blocks, y = _blocks(11, n=60, sizes=(4, 3, 5, 2))
    kw = dict(stopping=Stopping(1e-4, 3000), L0=5.0)
    fast = solve_l12(L12Problem(_cache(blocks), y, loss, 2.0, fit_intercept=fit_intercept,
                                compiled=True), **kw)
    slow = solve_l12(L12Problem(_cache(blocks), y, loss, 2.0, fit_intercept=fit_intercept,
                                compiled=False), **kw)
    assert fast.n_iter == slow.n_iter and fast.converged
    np.testing.assert_allclose(fast.trace, slow.trace, rtol=1e-9)
    np.testing.assert_allclose(fast.x[0], slow.x[0], atol=1e-9)
    assert fast.x[1][0] == pytest.approx(slow.x[1][0], abs=1e-9)


def test_numba_master_ends_when_its_stop_flag_is_raised():
    """The compiled APG cannot poll Python: another thread raising ``stop_flag[0]`` ends the
    solve after the current step (the app's Stop), instead of after max_iter steps."""
    import threading

    from explorer.engines.fgm.l12 import NUMBA_MAX_CELLS

    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 40))
    y = np.sign(X[:, 0] + 0.1 * rng.standard_normal(200))
    cache = BlockCache(200, sparse=False)
    cache.add(X)
    assert cache.n * cache.width <= NUMBA_MAX_CELLS  # the numba path
    solve_l12(L12Problem(cache, y, SquaredHinge(), 1.0),
              stopping=Stopping(0.0, 5))  # compile first
    flag = np.zeros(1, dtype=np.int8)
    threading.Timer(0.2, lambda: flag.__setitem__(0, 1)).start()
    result = solve_l12(L12Problem(cache, y, SquaredHinge(), 1.0, stop_flag=flag, compiled=True),
                       stopping=Stopping(0.0, 2_000_000))
    assert 0 < result.n_iter < 2_000_000
    assert np.isfinite(result.objective) and len(result.trace) == result.n_iter + 1


@pytest.mark.parametrize("sparse", [False, True])
def test_centred_cache_products_are_those_of_the_centred_columns(sparse):
    """Dense caches store A − 1μᵀ, sparse ones centre implicitly (and stay sparse)."""
    rng = np.random.default_rng(2)
    blocks = [sp.random(40, w, density=0.3, random_state=s, format="csc") * 5 + 0.0
              for s, w in ((0, 3), (1, 5))]
    cache = BlockCache(40, sparse=sparse, center=True)
    for block in blocks:
        cache.add(block if sparse else block.toarray())
    A = np.hstack([b.toarray() for b in blocks])
    Ac = A - A.mean(axis=0)
    r, coef = rng.standard_normal(40), rng.standard_normal(8)
    np.testing.assert_allclose(cache.rmatvec(r), Ac.T @ r, atol=1e-12)
    expected = np.column_stack([Ac[:, :3] @ coef[:3], Ac[:, 3:] @ coef[3:]])
    np.testing.assert_allclose(cache.block_products(coef), expected, atol=1e-12)
    assert sp.issparse(cache.matrix()) == sparse


@pytest.mark.parametrize("sparse", [False, True])
def test_block_products_over_blocks_of_mixed_widths(sparse):
    """Blocks of one width side by side are multiplied as one batched product: widths that
    change, come back, are 0 or 1, and a buffer that grows under them give each block's own
    A_t ω_t (the columns in order, the products column by column)."""
    rng = np.random.default_rng(5)
    widths = [4, 4, 4, 1, 0, 3, 3, 4, 4, 17, 17, 2]
    blocks = [rng.standard_normal((30, w)) for w in widths]
    cache = BlockCache(30, sparse=sparse)
    for block in blocks:
        cache.add(sp.csc_matrix(block) if sparse else block)
    A = np.hstack(blocks)
    coef = rng.standard_normal(A.shape[1])
    edges = np.cumsum([0] + widths)
    expected = np.column_stack([A[:, a:b] @ coef[a:b] for a, b in zip(edges[:-1], edges[1:])])
    got = cache.block_products(coef)
    assert got.shape == (30, len(widths)) and got.flags.f_contiguous
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(got[:, 4], 0.0)  # the empty block
    np.testing.assert_allclose(cache.matrix() if not sparse else cache.matrix().toarray(), A)


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
    from tests.reference_solvers import l12_master_reference

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
    from tests.reference_solvers import l12_master_reference

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
