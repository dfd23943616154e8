"""ChunkedMatrix: every product over dask chunks against the same product in numpy/scipy."""

from __future__ import annotations

import threading
import time

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import DataError
from explorer.kernels import top_k
from explorer.kernels.chunked import (
    ChunkedMatrix,
    PassInterrupted,
    as_chunked,
    interruptible,
    is_dask,
)


def _pair(layout, dtype, chunks=(23, 9), shape=(70, 40), seed=0):
    rng = np.random.default_rng(seed)
    if layout == "dense":
        X = rng.standard_normal(shape).astype(dtype)
        return X, da.from_array(X, chunks=chunks)
    X = sp.random(*shape, density=0.15, format="csr", random_state=seed, dtype=dtype)
    return X, da.from_array(X, chunks=chunks, asarray=False)


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_match_in_memory(layout, dtype):
    X, D = _pair(layout, dtype)
    C = as_chunked(D)
    rng = np.random.default_rng(1)
    s, w = rng.standard_normal(70), rng.standard_normal(40)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(C.xts(s), X.T @ s, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(C.matvec(w), X @ w, rtol=rtol, atol=rtol)
    W = rng.standard_normal((40, 3))
    np.testing.assert_allclose(C @ W, X @ W, rtol=rtol, atol=rtol)
    sums, sq = C.column_moments()
    dense = X.toarray() if sp.issparse(X) else X
    np.testing.assert_allclose(sums, dense.astype(float).sum(0), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(sq, (dense.astype(float) ** 2).sum(0), rtol=rtol, atol=rtol)
    cols = np.array([39, 0, 17, 8, 9, 18])  # unsorted, across chunk boundaries
    taken = C.take(cols)
    assert sp.issparse(taken) == (layout == "sparse")
    np.testing.assert_array_equal(taken.toarray() if sp.issparse(taken) else taken,
                                  dense[:, cols])
    assert C.passes == 4  # xts, two matvecs, moments (take reads only its chunks)


@pytest.mark.parametrize("order", ["C", "F"])
def test_float32_chunks_multiply_in_float64(order):
    """X w over float32 chunks is the float64 product of their values (no float64 copy of a
    chunk is made for it, and none of the precision is lost), whatever the chunks' order."""
    rng = np.random.default_rng(3)
    X = np.asarray(rng.standard_normal((70, 40)).astype(np.float32), order=order)
    D = da.from_array(X, chunks=(23, 9)).map_blocks(
        lambda b: np.asarray(b, order=order), dtype=np.float32)
    w = rng.standard_normal(40) * 1e3
    W = rng.standard_normal((40, 3))
    exact = X.astype(np.float64)
    C = as_chunked(D)
    np.testing.assert_allclose(C.matvec(w), exact @ w, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(C @ W, exact @ W, rtol=1e-12, atol=1e-12)
    w[::2] = 0.0  # the columns a working set has dropped
    np.testing.assert_allclose(C.matvec(w), exact @ w, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_per_chunk_top_equals_global_top(layout):
    X, D = _pair(layout, np.float64, chunks=(30, 7))
    C = ChunkedMatrix(D)
    s = np.random.default_rng(2).standard_normal(70)
    lam = np.linspace(0.5, 2.0, 40)
    for k in (1, 5, 7, 12, 40):
        ids, vals = C.top(s, lam, k)
        ref_ids, ref_vals = top_k((lam * (X.T @ s)) ** 2, k)
        np.testing.assert_array_equal(np.sort(ids), np.sort(ref_ids))
        np.testing.assert_allclose(vals, ref_vals, rtol=1e-12)


def test_counters_bytes_and_subset():
    X, D = _pair("dense", np.float32, chunks=(35, 10))
    C = ChunkedMatrix(D)
    C.xts(np.ones(70))
    assert C.bytes_read == 70 * 40 * 4
    sub = C.subset(np.array([1, 5, 30]))
    sub.xts(np.ones(70))
    # shared counters; the subset still reads the two source chunks that hold its columns
    assert C.passes == 2 and C.bytes_read == 70 * 40 * 4 + 70 * 20 * 4
    np.testing.assert_allclose(sub.to_memory(), X[:, [1, 5, 30]])
    # shrinking again slices the original array: the graph does not grow with each shrink
    again = sub.subset(np.array([0, 2]))
    assert len(again.array.dask.layers) == len(sub.array.dask.layers)
    np.testing.assert_allclose(again.to_memory(), X[:, [1, 30]])
    assert again.array.numblocks[1] <= 2  # chunks that lost all their columns are gone
    kept = again.persist()
    assert kept.persisted and kept.array.numblocks == (2, 1)
    np.testing.assert_allclose(kept.subset(np.array([1])).to_memory(), X[:, [30]])


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_subset_products_read_only_the_chunks_holding_its_columns(layout):
    """A working set's products equal those of its columns in memory, through two shrinks
    (columns scattered over chunks, one chunk left out), and read the chunks that hold
    them, whole, and no others."""
    X, D = _pair(layout, np.float64, chunks=(23, 9))
    dense = X.toarray() if sp.issparse(X) else X
    C = ChunkedMatrix(D)
    rng = np.random.default_rng(5)
    s = rng.standard_normal(70)
    cols = np.array([0, 3, 8, 9, 17, 30, 31, 39])  # chunks 0, 1, 3, 4 (none from 2)
    for sub, ids in ((C.subset(cols), cols),
                     (C.subset(cols).subset(np.array([1, 2, 5, 7])), cols[[1, 2, 5, 7]])):
        w = rng.standard_normal(ids.size)
        read = sub.bytes_read
        np.testing.assert_allclose(sub.xts(s), dense[:, ids].T @ s, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sub.matvec(w), dense[:, ids] @ w, rtol=1e-12, atol=1e-12)
        W = rng.standard_normal((ids.size, 2))
        np.testing.assert_allclose(sub @ W, dense[:, ids] @ W, rtol=1e-12, atol=1e-12)
        if layout == "dense":
            touched = np.unique(ids // 9)
            width = sum(min(9, 40 - 9 * j) for j in touched)
            assert sub.bytes_read - read == 3 * 70 * width * 8


def test_a_subset_ships_only_its_chunks_weights():
    """X w on a narrow working set of a wide root sends the weights of the chunks that hold
    its columns, not a root-wide vector with every pass (80 MB at 10⁷ columns)."""
    X = np.random.default_rng(0).standard_normal((70, 4000))
    C = ChunkedMatrix(da.from_array(X, chunks=(35, 100)))
    cols = np.array([5, 50, 2150, 2199])  # chunks 0 and 21 of 40
    sub = C.subset(cols)
    shipped = []

    def compute(*collections):
        graph = dict(collections[0].__dask_graph__())
        shipped.append(sum(v.nbytes for v in graph.values()  # the weights: one column
                           if isinstance(v, np.ndarray) and v.ndim == 2 and v.shape[1] == 1))
        return ChunkedMatrix._compute(sub, *collections)

    sub._compute = compute
    w = np.arange(1.0, 5.0)
    np.testing.assert_allclose(sub.matvec(w), X[:, cols] @ w, rtol=1e-12)
    assert 0 < shipped[0] <= 2 * 100 * 8  # two chunks' weights, not 4,000
    with pytest.raises(ValueError, match="sorted and distinct"):
        C.subset(np.array([3, 1]))


def test_non_finite_entry_is_located():
    X = np.ones((50, 20))
    X[37, 13] = np.nan
    C = as_chunked(da.from_array(X, chunks=(16, 6)))
    with pytest.raises(DataError, match="missing value \\(NaN\\) at row 38, column 14"):
        C.xts(np.ones(50))
    X[37, 13] = np.inf
    with pytest.raises(DataError, match="infinite value at row 38, column 14"):
        as_chunked(da.from_array(X, chunks=(16, 6))).top(np.ones(50), np.ones(20), 3)


def test_as_chunked_checks_without_a_pass():
    assert is_dask(da.zeros((3, 3))) and not is_dask(np.zeros((3, 3)))
    with pytest.raises(DataError, match="2-dimensional"):
        as_chunked(da.zeros(5))
    with pytest.raises(DataError, match="non-numeric"):
        as_chunked(da.from_array(np.array([["a", "b"]])))
    assert as_chunked(da.ones((4, 2), dtype=np.int32)).dtype == np.float64
    with pytest.raises(TypeError, match="by columns only"):
        as_chunked(da.ones((4, 2)))[0]


def _slow(block):
    time.sleep(0.05)
    return block


def test_one_fits_stop_leaves_a_pass_beside_it_alone():
    """Two passes at once in two threads (two app sessions): the one whose probe says stop
    gives up, the other finishes with the right product."""
    X = np.random.default_rng(0).standard_normal((60, 80))
    stopped = as_chunked(da.from_array(X, chunks=(20, 10)).map_blocks(_slow))
    running = as_chunked(da.from_array(X, chunks=(20, 10)).map_blocks(_slow))
    s = np.ones(60)
    start = time.perf_counter()
    outcome = {}

    def stop_me():
        with interruptible(stopped, lambda: time.perf_counter() - start > 0.1):
            try:
                stopped.xts(s)
                outcome["stopped"] = "finished"
            except PassInterrupted:
                outcome["stopped"] = "interrupted"

    def leave_me():
        with interruptible(running, lambda: False):
            outcome["running"] = running.xts(s)

    threads = [threading.Thread(target=stop_me), threading.Thread(target=leave_me)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert outcome["stopped"] == "interrupted"
    np.testing.assert_allclose(outcome["running"], X.T @ s, rtol=1e-12)
