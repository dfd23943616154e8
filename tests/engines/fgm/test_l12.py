"""Prox operators and the APG master against a generic conic solver (Clarabel)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.engines.fgm import L12Master, L12Problem, Restricted, solve_l12
from explorer.optim import (
    BlockCache,
    Logistic,
    SquaredHinge,
    Stopping,
)
from tests.reference_solvers import l12_master_reference


def _blocks(seed, n=25, sizes=(3, 2, 4)):
    rng = np.random.default_rng(seed)
    blocks = [rng.normal(size=(n, s)) for s in sizes]
    w = rng.normal(size=sum(sizes))
    y = np.sign(np.hstack(blocks) @ w + 0.5 * rng.normal(size=n))
    return blocks, y


def _cache(blocks, sparse=False, dtype=np.float64):

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








