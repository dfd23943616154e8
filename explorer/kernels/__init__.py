"""The shared scorer kernel: ``Xᵀs`` over dense, CSR or CSC matrices, group reduction and a
streaming top-k. Numba kernels live in ``_numba``; their numpy twins in ``_reference``.

Three of the five methods select by ``‖X_Gᵀs‖²`` (FGM, FS-multi, FS-Manifold) and the other two
need the same product as a gradient (FSA) or a violation (GrFL): this module is the one place
that computes it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from . import _numba

PART_NNZ = 2_000_000  # a sparse Xᵀs gets one thread per this many non-zeros (up to the cores)


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
    parts = min(_cores(), max(1, X.nnz // PART_NNZ))
    csr = X.format == "csr"
    kernel = _numba.csr_xts if csr else _numba.csc_xts
    args = (X.data, X.indices, X.indptr, s)
    length = X.shape[0] if csr else X.shape[1]
    if parts == 1:
        return kernel(*args, out, 0, length)
    # the part boundaries balance the non-zeros
    cuts = np.searchsorted(X.indptr, np.arange(1, parts) * (X.nnz / parts))
    bounds = np.concatenate([[0], cuts, [length]]).tolist()
    outs = [out] + ([np.empty_like(out) for _ in range(parts - 1)] if csr else [out] * (parts - 1))
    futures = [_pool().submit(kernel, *args, outs[t], bounds[t], bounds[t + 1])
               for t in range(1, parts)]
    kernel(*args, out, bounds[0], bounds[1])
    for future in futures:
        future.result()
    if csr:
        for part in outs[1:]:
            out += part
    return out


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The kernels' worker threads, made once per process (a forked child gets its own: it
    inherits the parent's executor without its threads)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(), ThreadPoolExecutor(max(1, _cores() - 1),
                                                     thread_name_prefix="explorer-kernel"))
        return _POOL[1]


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
    _numba.dense_column_sums(X, bool(X.flags.c_contiguous), sums, sq)
    return sums, sq


def column_moments(X) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations (1/n) of a dense, CSR or CSC X, as float64."""
    sums, sq = column_sums(X)
    n = max(X.shape[0], 1)
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
    """Ids and values of the k largest scores (decreasing; ties by smaller id).

    Uses ``argpartition`` on a materialised score vector (for streams use :class:`TopK`).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if excluded is not None and np.any(excluded):
        scores = np.where(excluded, -np.inf, scores)
    finite = np.isfinite(scores) | (scores == np.inf)
    k = int(min(k, np.count_nonzero(finite & (scores > -np.inf))))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if k < scores.size:
        part = np.argpartition(-scores, k - 1)[:k]
        kth = scores[part].min()
        # include every id tied with the k-th value, then break ties by id
        tied = np.flatnonzero(scores >= kth)
        part = tied
    else:
        part = np.arange(scores.size)
    order = np.lexsort((part, -scores[part]))
    ids = part[order][:k]
    return ids.astype(np.int64), scores[ids]


__all__ = ["GroupIndex", "TopK", "top_k", "xts"]
