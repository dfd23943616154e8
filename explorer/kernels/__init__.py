"""The shared scorer kernel: ``Xᵀs`` over dense, CSR or CSC matrices, group reduction and a
streaming top-k. Numba kernels live in ``_numba``; their numpy twins in ``_reference``.

Three of the five methods select by ``‖X_Gᵀs‖²`` (FGM, FS-multi, FS-Manifold) and the other two
need the same product as a gradient (FSA) or a violation (GrFL): this module is the one place
that computes it.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from . import _numba
from ._numba import (
    dense_take_rows,
    l1sq_scales,
    loss_derivative_into,
    loss_scalar,
    loss_value,
    lp_ball_projection,
    pl_forward,
    pl_gradient,
    poly2_block_scores,
    scaled_trial,
)

DENSE_PART_CELLS = 500_000  # a dense column gather gets a thread per this many cells
PART_NNZ = 2_000_000  # a sparse Xᵀs gets one thread per this many non-zeros (up to the cores)
_NONE = np.zeros(0)  # an absent optional array of the compiled kernels


def xts(X, s: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Return ``Xᵀs`` as float64 (length n_features), never densifying sparse X.

    Dense input uses BLAS in the matrix's own precision (float32 stays float32, no copy of X);
    CSR/CSC input uses the numba kernels (GIL released); a chunked (dask) X runs this per
    block (:class:`explorer.kernels.chunked.ChunkedMatrix`).
    """
    if getattr(X, "is_chunked", False):
        return X.xts(s)
    if sp.issparse(X):
        m = X.shape[1]
        if out is None:
            out = np.empty(m, dtype=np.float64)
        s = np.ascontiguousarray(s, dtype=np.float64)
        if s.shape != (X.shape[0],):  # the compiled kernels do not check their bounds
            raise ValueError(f"s has shape {s.shape}; Xᵀs needs one value per row of X "
                             f"({X.shape[0]})")
        if X.format not in ("csr", "csc"):
            X = X.tocsc()
        return _sparse_xts(X, s, out)
    X = np.asarray(X)
    result = X.T @ np.asarray(s, dtype=X.dtype)
    if out is not None:
        out[:] = result
        return out
    return np.asarray(result, dtype=np.float64)


def _sparse_xts(X, s, out):
    """Xᵀs of a CSR or CSC matrix, split by non-zeros over up to ``os.sched_getaffinity``
    threads once it has ``PART_NNZ`` of them per thread (the kernels release the GIL; a CSR
    product is bound by its scattered writes, so one thread cannot use the memory system).
    A CSR split sums per-thread outputs (an extra float64 vector per thread beyond the first),
    a CSC split writes disjoint ranges of ``out``."""
    csr = X.format == "csr"
    kernel = _numba.csr_xts if csr else _numba.csc_xts
    args = (X.data, X.indices, X.indptr, s)
    bounds = _row_parts(X)
    if len(bounds) == 1:
        return kernel(*args, out, *bounds[0])
    outs = [out] + ([np.empty_like(out) for _ in bounds[1:]] if csr else [out] * (len(bounds) - 1))
    _in_threads(lambda a, b, o: kernel(*args, o, a, b), bounds, outs)
    if csr:
        for part in outs[1:]:
            out += part
    return out


def _row_parts(X) -> list[tuple[int, int]]:
    """(start, stop) ranges of a CSR matrix's rows (a CSC matrix's columns) with equal
    non-zeros, one per ``PART_NNZ`` of them up to the cores."""
    parts = min(_cores(), max(1, X.nnz // PART_NNZ))
    length = len(X.indptr) - 1
    if parts == 1:
        return [(0, length)]
    cuts = np.searchsorted(X.indptr, np.arange(1, parts) * (X.nnz / parts))
    bounds = np.concatenate([[0], cuts, [length]]).tolist()
    return list(zip(bounds[:-1], bounds[1:]))


_BLAS_CONTROLLER = []


def one_blas_thread():
    """A context in which BLAS runs on one thread: for the small dense products of Newton
    steps (k × k Grams). A threaded Gram sums in a thread-count-dependent order (the same fit
    must give the same model on a one-thread dask worker, bit for bit), and OpenBLAS's threads
    wait for a busy core: with the other core taken, a 2,300 × 20 Gram took 55 ms on two
    threads and 0.03 ms on one. The controller is found once (finding it inspects every
    loaded library: 3–4 ms)."""
    if not _BLAS_CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


def _in_threads(task, bounds, *extra):
    """``task(start, stop, *extra_t)`` for every part, the first in this thread and the rest
    in the kernel threads; the results in order."""
    futures = [_pool().submit(task, *bounds[t], *(e[t] for e in extra))
               for t in range(1, len(bounds))]
    first = task(*bounds[0], *(e[0] for e in extra))
    return [first] + [future.result() for future in futures]


def _cores() -> int:
    """Threads a kernel may use: the cores this process may run on, at most
    ``OMP_NUM_THREADS`` when it is set (dask.distributed's worker processes set it to 1: they
    share the machine's cores), divided among the threads of the dask.distributed worker this
    runs in (its tasks run side by side)."""
    cores = _affinity()
    limit = os.environ.get("OMP_NUM_THREADS", "")
    if limit.strip().isdigit() and int(limit) >= 1:
        cores = min(cores, int(limit))
    return max(1, cores // _worker_threads())


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _worker_threads() -> int:
    """The thread count of the dask.distributed worker running this task (1 outside one)."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return 1
    try:
        worker = distributed.get_worker()
    except ValueError:  # not in a worker's task
        return 1
    state = getattr(worker, "state", worker)  # the thread count moved to Worker.state
    return max(1, int(getattr(state, "nthreads", None) or getattr(worker, "nthreads", 1) or 1))


_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The kernels' worker threads, made once per process (a forked child gets its own: it
    inherits the parent's executor without its threads)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(), ThreadPoolExecutor(max(1, _affinity() - 1),
                                                     thread_name_prefix="explorer-kernel"))
        return _POOL[1]


def total(values: np.ndarray) -> float:
    """The float64 sum of a contiguous float array's entries (NaN or ±inf if any is), split
    over the cores once it has ``PART_NNZ`` entries per thread. It runs in this module's
    threads, not BLAS's: OpenBLAS's threads spin for a while after each call, a second core
    kept busy through the rest of a fit that may not use BLAS at all (FSA's compiled steps)."""
    flat = values.reshape(-1, order="A")
    parts = min(_cores(), max(1, flat.size // PART_NNZ))
    cuts = np.linspace(0, flat.size, parts + 1).astype(np.int64).tolist()
    bounds = list(zip(cuts[:-1], cuts[1:]))
    if parts == 1:
        return float(_numba.flat_sum(flat, 0, flat.size))
    return float(sum(_in_threads(lambda a, b: _numba.flat_sum(flat, a, b), bounds)))


GRAM_SPLIT_CELLS = 40_000_000  # rows × columns² above which a Gram is summed in two halves


def dense_gram(S: np.ndarray) -> np.ndarray:
    """SᵀS of a dense float64 S (rows × k), the rows in two fixed halves above
    ``GRAM_SPLIT_CELLS`` (rows·k²), each half's product on one BLAS thread in its own kernel
    thread and the halves added in order: the same sum, to the last bit, on one core or two
    (a threaded BLAS sums in a thread-count-dependent order; see :func:`one_blas_thread`),
    in half the time on two (FGM refine's Newton Grams: 4,096 × 150–360)."""
    rows, k = S.shape
    if rows * k * k <= GRAM_SPLIT_CELLS or rows < 2:
        return S.T @ S
    half = rows // 2
    parts = ((0, half), (half, rows))

    def part(start, stop):
        block = S[start:stop]
        return block.T @ block

    with one_blas_thread():
        if _cores() > 1:
            first, second = _in_threads(part, parts)
        else:
            first, second = part(*parts[0]), part(*parts[1])
    return first + second


def weighted_gram(A, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(AᵀDA, Aᵀd) as dense float64 for a sparse A and D = diag(d), in one compiled pass over
    A's rows (work Σ_i nnz_i²): equal to the last bit to scipy's ``A.T @ A.multiply(d)``."""
    A = A.tocsr()
    if not A.has_sorted_indices:
        A = A.sorted_indices()
    d = np.ascontiguousarray(d, dtype=np.float64)
    if d.shape != (A.shape[0],):
        raise ValueError(f"d has shape {d.shape}; AᵀDA needs one weight per row of A "
                         f"({A.shape[0]})")
    m = A.shape[1]
    G, v = np.empty((m, m)), np.empty(m)
    _numba.csr_weighted_gram(A.data.astype(np.float64, copy=False), A.indices, A.indptr, d, G, v)
    return G, v


def column_sums(X) -> tuple[np.ndarray, np.ndarray]:
    """Column sums and sums of squares of a dense, CSR or CSC X, as float64, in one pass
    (sparse stays sparse; a dense X is read once in its own memory order)."""
    if sp.issparse(X):
        # float64 values and accumulators for float32 data too: the std is taken as
        # sq/n − mean², which float32 squares leave at 1e-3·|x| for a constant column
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
        m = X.shape[1]
        cols = X.indices if X.format == "csr" else np.repeat(np.arange(m), np.diff(X.indptr))
        data = X.data.astype(np.float64, copy=False)
        return (np.bincount(cols, weights=data, minlength=m),
                np.bincount(cols, weights=data * data, minlength=m))
    X = np.asarray(X)
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    sums, sq = np.empty(X.shape[1]), np.empty(X.shape[1])
    _numba.dense_column_sums(X, bool(X.flags.c_contiguous), sums, sq, _NONE, _NONE)
    return sums, sq


def column_moments_and_xts(X: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`column_moments` and Xᵀr (float64) of a dense in-memory X in one pass over it: a
    fit that needs its columns' moments and a first gradient reads X once."""
    X = np.asarray(X)
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    r = np.ascontiguousarray(r, dtype=np.float64)
    if r.shape != (X.shape[0],):  # the compiled kernel does not check its bounds
        raise ValueError(f"r has shape {r.shape}; Xᵀr needs one value per row of X "
                         f"({X.shape[0]})")
    sums, sq, dot = (np.empty(X.shape[1]) for _ in range(3))
    _numba.dense_column_sums(X, bool(X.flags.c_contiguous), sums, sq, r, dot)
    return (*_moments(sums, sq, X.shape[0]), dot)


def column_moments(X) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations (1/n) of a dense, CSR or CSC X, as float64."""
    return _moments(*column_sums(X), X.shape[0])


def _moments(sums, sq, n: int) -> tuple[np.ndarray, np.ndarray]:
    n = max(n, 1)
    mean = sums / n
    return mean, np.sqrt(np.maximum(sq / n - mean * mean, 0.0))


class GroupIndex:
    """Groups as CSR-style index arrays (members[ptr[g]:ptr[g+1]]), possibly overlapping."""

    def __init__(self, ptr: np.ndarray, members: np.ndarray, n_features: int):
        self.ptr = np.ascontiguousarray(ptr, dtype=np.int64)
        self.members = np.ascontiguousarray(members, dtype=np.int64)
        self.n_features = int(n_features)
        self.labels = np.arange(self.ptr.size - 1)

    @classmethod
    def from_ids(cls, ids: np.ndarray) -> GroupIndex:
        """Non-overlapping groups from one id per feature (ids need not be contiguous)."""
        ids = np.asarray(ids)
        labels, inverse = np.unique(ids, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        counts = np.bincount(inverse, minlength=labels.size)
        ptr = np.concatenate([[0], np.cumsum(counts)])
        index = cls(ptr, order, ids.size)
        index.labels = labels
        return index

    @classmethod
    def from_lists(cls, groups, n_features: int) -> GroupIndex:
        """Groups from a list of index arrays (overlaps allowed)."""
        arrays = [np.unique(np.asarray(g, dtype=np.int64)) for g in groups]
        for g, arr in enumerate(arrays):
            if arr.size == 0:
                raise ValueError(f"group {g} is empty")
            if arr[0] < 0 or arr[-1] >= n_features:
                raise ValueError(f"group {g} refers to a feature outside 0…{n_features - 1}")
        ptr = np.concatenate([[0], np.cumsum([a.size for a in arrays])])
        index = cls(ptr, np.concatenate(arrays), n_features)
        index.labels = np.arange(len(arrays))
        return index

    @property
    def n_groups(self) -> int:
        return self.ptr.size - 1

    def members_of(self, g: int) -> np.ndarray:
        return self.members[self.ptr[g]:self.ptr[g + 1]]

    def sizes(self) -> np.ndarray:
        return np.diff(self.ptr)

    def sumsq(self, values: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """weights[g]² Σ_{j∈G_g} values[j]² for every group (numba)."""
        out = np.empty(self.n_groups)
        return _numba.group_sumsq(np.ascontiguousarray(values, dtype=np.float64), self.ptr,
                                  self.members, np.ascontiguousarray(weights, np.float64), out)

    def overlapping(self) -> bool:
        return np.unique(self.members).size != self.members.size


class TopK:
    """The k largest scores seen so far over a stream of blocks (a numba min-heap).

    ``push(scores, offset)`` adds the candidates ``offset … offset+len−1``; ``result()`` returns
    (ids, scores) in decreasing score order. Memory is O(k) whatever the stream length.
    """

    def __init__(self, k: int, excluded: np.ndarray | None = None):
        self.k = int(k)
        self.vals = np.empty(self.k)
        self.ids = np.empty(self.k, dtype=np.int64)
        self.size = 0
        self.excluded = np.zeros(0, dtype=np.bool_) if excluded is None else \
            np.ascontiguousarray(excluded, dtype=np.bool_)

    def push(self, scores: np.ndarray, offset: int = 0) -> None:
        if self.k == 0:
            return
        self.size = _numba.heap_push_block(self.vals, self.ids, self.size,
                                           np.ascontiguousarray(scores, dtype=np.float64),
                                           int(offset), self.excluded)

    @property
    def minimum(self) -> float:
        """The k-th largest score so far (−inf until the heap is full)."""
        return float(self.vals[0]) if self.size == self.k else -np.inf

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        vals, ids = self.vals[: self.size], self.ids[: self.size]
        order = np.lexsort((ids, -vals))
        return ids[order].copy(), vals[order].copy()


def top_k(scores: np.ndarray, k: int, excluded: np.ndarray | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """Ids and values of the k largest scores (decreasing; ties by smaller id; NaN and −inf
    never chosen).

    The k-th largest value is found in one compiled pass (a k-element heap; ``argpartition``
    on a million scores took 6 ms a call), then every id at or above it is sorted (for
    streams use :class:`TopK`).
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if excluded is not None and np.any(excluded):
        scores = np.where(excluded, -np.inf, scores)
    k = int(k)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    count, kth = _numba.kth_largest(scores, k, np.empty(k), np.zeros(k, dtype=np.int64))
    k = min(k, int(count))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    # every id tied with the k-th value, then ties broken by id
    part = np.flatnonzero(scores >= kth)
    order = np.lexsort((part, -scores[part]))
    ids = part[order][:k]
    return ids.astype(np.int64), scores[ids]


def take_columns(X, columns: np.ndarray, scale: np.ndarray | None = None):
    """``X[:, columns]`` (times ``scale`` per column) as a CSC matrix for sparse X, a float64
    array for dense X. From CSR, scipy's column indexing takes two passes over the non-zeros
    and arrays over all of X's columns (28–40 ms for 10 of 1.35 M text columns); here one
    compiled pass, split by non-zeros over the cores as :func:`xts` is, finds the non-zeros
    of the wanted columns through a bitmap of them. From a C-ordered dense X, a compiled
    row-by-row gather split by rows over the cores (numpy's indexing: 13 ms for 180 of 4,096²
    columns, this 6–7 ms)."""
    given = np.asarray(columns)
    if given.size and not np.issubdtype(given.dtype, np.integer):
        # float ids like 1.5 would become another column, a boolean mask ids 0 and 1
        raise TypeError(f"column ids must be integers, got an array of {given.dtype}")
    columns = np.asarray(given, dtype=np.int64).ravel()
    scale = np.ones(columns.size) if scale is None else np.asarray(scale, dtype=np.float64)
    if scale.shape != columns.shape:
        raise ValueError(f"scale has shape {scale.shape}; it needs one value per column "
                         f"({columns.size})")
    m = X.shape[1]
    if columns.size and not (-m <= columns.min() and columns.max() < m):
        bad = columns[(columns < -m) | (columns >= m)][0]
        raise IndexError(f"column {bad} is out of range for X's {m} columns")
    columns = np.where(columns < 0, columns + m, columns)  # negative ids count from the end
    if _row_major_dense(X) and columns.size:
        n = X.shape[0]
        out = np.empty((n, columns.size))
        parts = min(_cores(), max(1, n * columns.size // DENSE_PART_CELLS))
        bounds = np.linspace(0, n, parts + 1).astype(np.int64).tolist()

        def gather(a, b):
            _numba.dense_take_columns(X, columns, scale, out, a, b)

        _in_threads(gather, list(zip(bounds[:-1], bounds[1:])))
        return out
    if not (sp.issparse(X) and X.format == "csr" and columns.size
            and np.unique(columns).size == columns.size):
        block = X[:, columns]  # CSC, dense, a chunked X, repeated columns: by indexing
        if sp.issparse(block):
            return sp.csc_matrix(block @ sp.diags(scale)) if block.shape[1] else block
        return np.asarray(block, dtype=np.float64) * scale
    n, m = X.shape
    wanted = np.zeros((m + 63) // 64, dtype=np.uint64)
    np.bitwise_or.at(wanted, columns >> 6, np.left_shift(np.uint64(1),
                                                         (columns & 63).astype(np.uint64)))
    bounds = _row_parts(X)
    parts = [_column_hits(X, wanted, a, b, columns.size) for a, b in bounds] \
        if len(bounds) == 1 else _in_threads(
            lambda a, b: _column_hits(X, wanted, a, b, columns.size), bounds)
    hit_nz = np.concatenate([p[0] for p in parts])
    hit_row = np.concatenate([p[1] for p in parts])
    position = np.searchsorted(np.sort(columns), X.indices[hit_nz])
    owner = np.argsort(columns)[position]  # each hit's place in ``columns``
    order = np.argsort(owner, kind="stable")  # by column, rows still increasing
    index = np.int32 if max(n, hit_nz.size) < 2**31 else np.int64
    indptr = np.zeros(columns.size + 1, dtype=index)
    np.cumsum(np.bincount(owner, minlength=columns.size), out=indptr[1:])
    data = X.data[hit_nz[order]].astype(np.float64) * scale[owner[order]]
    return sp.csc_matrix((data, hit_row[order].astype(index), indptr),
                         shape=(n, columns.size))


def _row_major_dense(X) -> bool:
    """A C-ordered float array (what the compiled dense gather reads)."""
    return isinstance(X, np.ndarray) and X.ndim == 2 and X.flags.c_contiguous \
        and X.dtype in (np.float32, np.float64)


def _column_hits(X, wanted, start, stop, width):
    """(non-zero positions, rows) of the wanted columns in rows start ≤ i < stop."""
    nnz = int(X.indptr[stop] - X.indptr[start])
    guess = int(nnz * width / max(X.shape[1], 1) * 2) + 1024
    hit_nz, hit_row = np.empty(guess, dtype=np.int64), np.empty(guess, dtype=np.int64)
    found = _numba.csr_column_hits(X.indices, X.indptr, wanted, hit_nz, hit_row, start, stop)
    if found > guess:
        hit_nz, hit_row = np.empty(found, dtype=np.int64), np.empty(found, dtype=np.int64)
        _numba.csr_column_hits(X.indices, X.indptr, wanted, hit_nz, hit_row, start, stop)
    return hit_nz[:found], hit_row[:found]


__all__ = ["GroupIndex", "TopK", "dense_gram", "dense_take_rows", "l1sq_scales",
           "loss_derivative_into", "loss_scalar", "loss_value", "lp_ball_projection",
           "one_blas_thread",
           "pl_forward", "pl_gradient", "poly2_block_scores", "scaled_trial", "take_columns",
           "top_k", "xts"]
