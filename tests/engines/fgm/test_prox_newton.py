"""Proximal Newton on FGM's restricted master against an independent conic solver."""

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.engines.fgm import L12Problem
from explorer.engines.fgm.prox_newton import prox_newton_l12, usable
from explorer.optim import BlockCache, Stopping
from explorer.optim.losses import make_loss
from tests.reference_solvers import l12_master_reference


def _problem(seed, sparse, dtype, scale, n=150, widths=(4, 3, 5)):
    rng = np.random.default_rng(seed)
    blocks = []
    for w in widths:
        B = scale * np.abs(rng.standard_normal((n, w)))
        if sparse:
            B[rng.random(B.shape) < 0.6] = 0.0
        blocks.append(B.astype(dtype))
    signal = blocks[0][:, :2].sum(1) - blocks[1][:, 0]
    y = np.where(signal + 0.3 * scale * rng.standard_normal(n) > np.median(signal), 1.0, -1.0)
    return blocks, y


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equals_a_conic_solver_on_badly_scaled_blocks(loss, intercept, sparse, dtype):
    blocks, y = _problem(0, sparse, dtype, scale=16.0)
    C = 10.0
    cache = BlockCache(len(y), sparse, center=intercept)
    for B in blocks:
        cache.add(sp.csc_matrix(B) if sparse else B)
    problem = L12Problem(cache, y, make_loss(loss), C, fit_intercept=intercept, compiled=False)
    res = prox_newton_l12(problem, np.zeros(cache.width), 0.0, stopping=Stopping(1e-9, 50))
    assert res.converged and res.measure <= 1e-9 and res.n_iter <= 30
    _, _, ref = l12_master_reference([np.asarray(B, np.float64) for B in blocks], y, C, loss,
                                     fit_intercept=intercept)
    assert res.objective == pytest.approx(ref, rel=1e-7)


def test_a_block_the_optimum_does_not_use_ends_exactly_zero():
    rng = np.random.default_rng(3)
    n = 200
    useful = rng.standard_normal((n, 3))
    noise = 1e-3 * rng.standard_normal((n, 4))  # its scores are far below the others'
    y = np.where(useful @ [1.0, -1.0, 0.5] > 0, 1.0, -1.0)
    cache = BlockCache(n, False, center=True)
    cache.add(useful)
    cache.add(noise)
    problem = L12Problem(cache, y, make_loss("squared_hinge"), 1.0, compiled=False)
    res = prox_newton_l12(problem, np.ones(7), 0.0, stopping=Stopping(1e-10, 50))
    assert res.converged
    assert np.all(res.x[0][3:] == 0.0) and np.all(res.x[0][:3] != 0.0)


def test_only_narrow_caches_are_taken():
    cache = BlockCache(10, False)
    assert not usable(cache)  # empty
    cache.add(np.ones((10, 3)))
    assert usable(cache)
    cache.add(np.ones((10, 500)))
    assert not usable(cache)


def test_the_hessian_runs_on_one_blas_thread_and_restores_the_count():
    """The Gram is summed on one BLAS thread (the same model bit for bit on a one-thread dask
    worker as here), every time, and the caller's thread count comes back afterwards."""
    from threadpoolctl import threadpool_info

    from explorer.kernels import one_blas_thread

    def blas_threads():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    outside = blas_threads()
    for _ in range(2):
        with one_blas_thread():
            assert blas_threads() and set(blas_threads()) == {1}
        assert blas_threads() == outside
