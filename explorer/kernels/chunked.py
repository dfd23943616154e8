"""A dask array seen through the products the methods need, each one pass over its chunks.

FGM's worst-case analysis (Alg. 2) and FSA's gradient are map-reduce over the blocks of X:
every block ``X_ij`` computes its part of ``Xᵀs`` with the in-memory kernel (:func:`xts`)
(``da.blockwise``), the parts are summed over row chunks by dask's tree reduction, and FGM's
top-B is taken per column chunk before the global top-B on the driver: one graph, computed
once, per pass. Only selected columns (:meth:`ChunkedMatrix.take`) and vectors of
length n or m ever come back. The tasks run on the active ``dask.distributed`` client, or on
dask's threaded scheduler when there is none (``dask.compute`` picks it). Chunks may be dense
arrays or scipy sparse matrices.

``passes`` counts products over the whole (working) matrix and ``bytes_read`` the bytes of
the chunks they touched: the physical unit of the cost model in ``docs/scale.md``.

Inside :func:`interruptible` a pass polls the fit's stop probe between tasks (every
``POLL_SECONDS`` on a distributed client) and gives up with :class:`PassInterrupted`: *Stop*
on a matrix whose pass takes minutes answers within one chunk task, not one pass.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext

import numpy as np
import scipy.sparse as sp

from .._errors import DataError
from . import _numba, column_sums, top_k, xts

POLL_SECONDS = 0.1


class PassInterrupted(Exception):
    """A pass over a chunked X given up because the fit was asked to stop (its tasks are
    cancelled; the caller keeps the model of its last completed step)."""


def interruptible(X, probe):
    """Context in which passes over ``X`` (if chunked) stop when ``probe()`` is true; a
    no-op for an in-memory X."""
    if not getattr(X, "is_chunked", False) or probe is None:
        return nullcontext()
    return X._interruptible(probe)


def is_dask(X) -> bool:
    """True for a ``dask.array.Array`` (checked without importing dask)."""
    return type(X).__module__.startswith("dask.") and hasattr(X, "chunks") and \
        hasattr(X, "to_delayed")


def _block_xts(block, s):
    """One block's part of Xᵀs, as a row (1, columns of the block)."""
    return xts(block, s)[None, :]


def _chunk_top(v, lam, k, offset):
    """The k best (λ v)² of one column chunk: (ids, scores, all finite)."""
    scaled = v * lam
    ids, vals = top_k(scaled * scaled, min(k, v.size))
    return ids + offset, vals, bool(np.isfinite(v).all())


def _block_matvec(block, w):
    """One block's part of X w (float64), as (rows, 1, outputs). A dense float32 block is
    not copied to float64 for it (that copy costs more than the product)."""
    if not sp.issparse(block) and block.dtype == np.float32:
        block = np.asarray(block)
        if not (block.flags.c_contiguous or block.flags.f_contiguous):
            block = np.ascontiguousarray(block)
        out = np.empty((block.shape[0], w.shape[1]))
        _numba.dense_matmul_f64(block, bool(block.flags.c_contiguous),
                                np.ascontiguousarray(w, dtype=np.float64), out)
    else:
        out = np.asarray(block @ w, dtype=np.float64)
    return out.reshape(out.shape[0], 1, -1)


def _block_moments(block):
    """Column sums, sums of squares and stored values of one block, as (1, 3, columns)."""
    sums, sq = column_sums(block)
    if sp.issparse(block):
        stored = np.asarray(block.getnnz(axis=0), dtype=np.float64)
    else:
        stored = np.full(block.shape[1], float(block.shape[0]))
    return np.stack([sums, sq, stored])[None]


def _block_first_bad(block):
    values = block.toarray() if sp.issparse(block) else np.asarray(block)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size == 0:
        return None
    i, j = bad[0]
    return int(i), int(j), float(values[i, j])


class ChunkedMatrix:
    """Products over a 2-D dask array (dense or scipy-sparse chunks) for the methods.

    Parameters
    ----------
    array : dask.array.Array
        Float32/float64, shape (n, m), any chunking; kept lazy.
    """

    ndim = 2
    is_chunked = True

    def __init__(self, array):
        self.array = array
        self.shape = tuple(int(d) for d in array.shape)
        self.dtype = np.dtype(array.dtype)
        self.sparse = sp.issparse(getattr(array, "_meta", None))
        self.row_bounds = np.concatenate([[0], np.cumsum(array.chunks[0])]).astype(np.int64)
        self.col_bounds = np.concatenate([[0], np.cumsum(array.chunks[1])]).astype(np.int64)
        self._blocks = None
        self.counts = {"passes": 0, "bytes_read": 0}  # shared with subsets of this matrix
        self.control = {"probe": None}  # the stop probe, shared with them too
        self.nnz = None  # known after column_moments() on sparse chunks
        self.column_nnz = None
        self.persisted = False  # chunks held in (worker) memory by persist()
        self.root, self.root_cols = array, None  # what subset() slices from
        self.source_chunks = None  # a subset's: root column chunks holding it (None: all)
        self.source_cols = None  # … and its columns' positions in them, side by side

    @property
    def passes(self) -> int:
        return self.counts["passes"]

    @property
    def bytes_read(self) -> int:
        return self.counts["bytes_read"]

    def _derived(self, array) -> ChunkedMatrix:
        out = ChunkedMatrix(array)
        out.counts = self.counts
        out.control = self.control
        return out

    # ------------------------------------------------------------------ plumbing
    @property
    def blocks(self):
        if self._blocks is None:
            self._blocks = self.array.to_delayed()
        return self._blocks

    @property
    def bytes_per_pass(self) -> int:
        """Bytes one pass reads: n·m·itemsize dense; values and indices of sparse chunks. A
        lazy column subset reads every source chunk that still holds one of its columns
        whole (a Zarr or .npy chunk is read whole), and is counted so."""
        if self.sparse and self.nnz is not None:
            return int(self.nnz * (self.dtype.itemsize + 4))
        columns = self.shape[1]
        if self.root_cols is not None:
            bounds = np.concatenate([[0], np.cumsum(self.root.chunks[1])])
            touched = np.unique(np.searchsorted(bounds, self.root_cols, side="right") - 1)
            columns = int(np.diff(bounds)[touched].sum())
        return int(self.shape[0] * columns * self.dtype.itemsize)

    @property
    def memory_bytes(self) -> int:
        """Bytes this matrix takes in memory (dense values, or sparse values and indices)."""
        if self.sparse and self.nnz is not None:
            return int(self.nnz * (self.dtype.itemsize + 4))
        return int(self.shape[0] * self.shape[1] * self.dtype.itemsize)

    def _count_pass(self) -> None:
        self.counts["passes"] += 1
        self.counts["bytes_read"] += self.bytes_per_pass

    def _row_parts(self, s: np.ndarray) -> list:
        s = np.ascontiguousarray(s, dtype=np.float64)
        return [s[a:b] for a, b in zip(self.row_bounds[:-1], self.row_bounds[1:])]

    @contextmanager
    def _interruptible(self, probe):
        previous = self.control["probe"]
        self.control["probe"] = probe
        try:
            yield self
        finally:
            self.control["probe"] = previous

    def _compute(self, *tasks):
        """``dask.compute(*tasks)`` on the scheduler dask would pick, giving up with
        :class:`PassInterrupted` once the stop probe (if any) says so."""
        import dask

        probe = self.control["probe"]
        if probe is None:
            return dask.compute(*tasks)
        if probe():
            raise PassInterrupted
        client = _distributed_client()
        if client is None:
            from dask.callbacks import Callback

            def check(*_):
                if probe():
                    raise PassInterrupted

            # passed to this compute only: a ``with Callback()`` block would be global, and
            # one fit's Stop would end the passes of fits running beside it in other threads
            # (start, start_state, pretask, posttask, finish): the local schedulers' format
            mine = (None, None, None, check, None)
            return dask.compute(*tasks, callbacks=[*Callback.active, mine])
        from distributed import TimeoutError as Pending
        from distributed import wait

        futures = client.compute(list(tasks))
        while True:
            try:
                wait(futures, timeout=POLL_SECONDS)
                break
            except Pending:
                if probe():
                    client.cancel(futures)
                    raise PassInterrupted from None
        return tuple(client.gather(futures))

    # ------------------------------------------------------------------ products
    def _scores(self, s: np.ndarray, array=None):
        """The lazy ``Xᵀs``: one task per block, summed over row chunks by a tree."""
        import dask.array as da

        array = self.array if array is None else array
        s = da.from_array(np.ascontiguousarray(s, dtype=np.float64),
                          chunks=(array.chunks[0],))
        parts = da.blockwise(_block_xts, "ij", array, "ij", s, "i", dtype=np.float64,
                             adjust_chunks={"i": 1}, meta=np.empty((0, 0)))
        return parts.sum(axis=0)

    def xts(self, s: np.ndarray) -> np.ndarray:
        """``Xᵀs`` as float64 (one pass)."""
        self._count_pass()
        if self.root_cols is not None:
            scores = self._scores(s, self.root)
            if self.source_chunks is not None:
                scores = scores.blocks[self.source_chunks]
            v = self._compute(scores)[0][self.source_cols]
        else:
            v = self._compute(self._scores(s))[0]
        self._check(v)
        return v

    def top(self, s: np.ndarray, lam: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k largest ``(λ_j (Xᵀs)_j)²``: a top-k per column chunk, merged on the driver
        (one pass; only k ids and scores per chunk come back)."""
        from dask import delayed

        chunks = self._scores(s).to_delayed()
        tops = [delayed(_chunk_top)(chunk, lam[a:b], k, int(a))
                for chunk, a, b in zip(chunks, self.col_bounds[:-1], self.col_bounds[1:])]
        self._count_pass()
        results = self._compute(*tops)
        if not all(finite for _, _, finite in results):
            self._check(np.array([np.nan]))
        ids = np.concatenate([r[0] for r in results])
        vals = np.concatenate([r[1] for r in results])
        order = np.lexsort((ids, -vals))[:k]  # decreasing score, ties by index
        return ids[order], vals[order]

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``X w`` for w of shape (m,) or (m, c) (one pass)."""
        import dask.array as da

        w = np.asarray(w, dtype=np.float64)
        W = w.reshape(w.shape[0], -1)
        array = self.array
        if self.root_cols is not None:  # zero weights on the source chunks' other columns
            array, lazy_w = self.root, self._root_weights(W)
        else:
            lazy_w = da.from_array(W, chunks=(array.chunks[1], W.shape[1]))
        parts = da.blockwise(_block_matvec, "ijk", array, "ij", lazy_w, "jk",
                             dtype=np.float64, adjust_chunks={"j": 1}, concatenate=True,
                             meta=np.empty((0, 0, 0)))
        if self.root_cols is not None and self.source_chunks is not None:
            parts = parts.blocks[:, self.source_chunks]
        self._count_pass()
        out = self._compute(parts.sum(axis=1))[0]
        self._check(out)
        return out.reshape((self.shape[0],) + w.shape[1:])

    def _root_weights(self, W: np.ndarray):
        """A subset's weights on its root's columns, zero elsewhere, as a dask array: the
        chunks holding its columns get their weights, the others lazy zeros (never built,
        they drop out with their chunks). A root-wide array shipped with every pass was
        80 MB at 10⁷ columns."""
        import dask.array as da

        bounds = np.concatenate([[0], np.cumsum(self.root.chunks[1])])
        cuts = np.searchsorted(self.root_cols, bounds)  # root_cols is sorted
        pieces = []
        for c in range(len(bounds) - 1):
            a, b = int(bounds[c]), int(bounds[c + 1])
            shape = (b - a, W.shape[1])
            if cuts[c] == cuts[c + 1]:
                pieces.append(da.zeros(shape, chunks=shape))
                continue
            piece = np.zeros(shape)
            piece[self.root_cols[cuts[c]:cuts[c + 1]] - a] = W[cuts[c]:cuts[c + 1]]
            pieces.append(da.from_array(piece, chunks=shape))
        return da.concatenate(pieces, axis=0)

    def __matmul__(self, w):
        return self.matvec(w)

    def column_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Column sums and sums of squares (float64; one pass). Sparse chunks also give
        the number of stored values (``nnz``), which sizes later passes."""
        import dask.array as da

        parts = da.blockwise(_block_moments, "ikj", self.array, "ij", new_axes={"k": 3},
                             dtype=np.float64, adjust_chunks={"i": 1}, meta=np.empty((0, 0, 0)))
        self._count_pass()
        sums, sq, stored = self._compute(parts.sum(axis=0))[0]
        if self.sparse:
            self.column_nnz = stored.astype(np.int64)
            self.nnz = int(stored.sum())
        self._check(sq)
        return sums, sq

    # ------------------------------------------------------------------ columns
    def take(self, cols) -> np.ndarray | sp.csc_matrix:
        """Columns ``cols`` (in that order) in memory: a dense Fortran-ordered array or a CSC
        matrix. Reads only the column chunks that hold them."""
        cols = np.asarray(cols, dtype=np.int64)
        if cols.size == 0:
            return sp.csc_matrix((self.shape[0], 0), dtype=self.dtype) if self.sparse \
                else np.zeros((self.shape[0], 0), dtype=self.dtype, order="F")
        order = np.argsort(cols, kind="stable")
        sorted_cols = cols[order]
        chunk = np.searchsorted(self.col_bounds, sorted_cols, side="right") - 1
        touched = int(np.diff(self.col_bounds)[np.unique(chunk)].sum())
        stacked = self._compute(self.array[:, sorted_cols])[0]
        self.counts["bytes_read"] += int(self.bytes_per_pass * touched / max(1, self.shape[1]))
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        if self.sparse:
            return sp.csc_matrix(sp.csr_matrix(stacked)[:, inverse])
        out = np.asfortranarray(np.asarray(stacked)[:, inverse])
        self._check(out)
        return out

    def __getitem__(self, key):
        """``X[:, cols]`` (columns in memory, as :meth:`take`); rows are not indexed here."""
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice) and \
                key[0] == slice(None):
            return self.take(np.arange(self.shape[1])[key[1]])
        raise TypeError("a chunked X is indexed by columns only: X[:, cols]")

    def subset(self, cols) -> ChunkedMatrix:
        """The lazy matrix of columns ``cols`` (sorted), sliced from the original array (so
        that shrinking a working set many times never stacks slices on slices); chunks left
        without columns drop out of later passes. Counters carry over.

        Its products run on the original chunks that hold the columns, whole (``X w`` with
        zero weights on the others, ``Xᵀs`` then read at the columns), and the chunks without
        any drop out of the graph after the per-chunk products: slicing the columns out of
        every chunk on every pass took 2.5× the pass itself, selecting chunks before the
        products 1.35×."""
        cols = np.asarray(cols, dtype=np.int64)
        if np.any(np.diff(cols) <= 0):
            raise ValueError("a subset's columns must be sorted and distinct")
        root_cols = cols if self.root_cols is None else self.root_cols[cols]
        out = self._derived(self.root[:, root_cols])
        out.root, out.root_cols = self.root, root_cols
        bounds = np.concatenate([[0], np.cumsum(self.root.chunks[1])])
        chunk = np.searchsorted(bounds, root_cols, side="right") - 1
        touched = np.unique(chunk)
        widths = np.diff(bounds)[touched]
        starts = np.concatenate([[0], np.cumsum(widths)[:-1]])  # in the touched chunks
        out.source_chunks = None if touched.size == len(self.root.chunks[1]) else \
            touched.tolist()
        out.source_cols = starts[np.searchsorted(touched, chunk)] + root_cols - bounds[chunk]
        if self.column_nnz is not None:
            out.column_nnz = self.column_nnz[cols]
            out.nnz = int(out.column_nnz.sum())
        return out

    def rows(self, idx) -> np.ndarray | sp.csr_matrix:
        """Rows ``idx`` in memory (a sample; reads the row chunks that hold them)."""
        out = self.array[np.asarray(idx, dtype=np.int64)].compute()
        return sp.csr_matrix(out) if sp.issparse(out) else np.asarray(out)

    def persist(self, *, target_chunk_bytes: int = 64 * 2**20) -> ChunkedMatrix:
        """Keep the chunks in memory (on the workers with a distributed client), merged into
        column chunks of about ``target_chunk_bytes`` (narrowed chunks cost tasks)."""
        array = self.array
        if len(array.chunks[1]) > 1:
            per_col = max(1, max(array.chunks[0]) * self.dtype.itemsize)
            width = int(min(self.shape[1], max(1, target_chunk_bytes // per_col)))
            array = array.rechunk({1: width})
        out = self._derived(array.persist())
        out.nnz, out.column_nnz, out.persisted = self.nnz, self.column_nnz, True
        return out

    def to_memory(self):
        """The whole matrix in memory: a Fortran-ordered array or a CSC matrix."""
        return self.take(np.arange(self.shape[1]))

    # ------------------------------------------------------------------ checks
    def _check(self, values: np.ndarray) -> None:
        """Non-finite products mean non-finite data: name the first bad entry."""
        if np.isfinite(values).all():
            return
        where = self.first_bad()
        if where is None:  # finite data, overflowing products
            raise DataError("X's products overflow (values too large for its dtype)")
        i, j, value = where
        kind = "missing value (NaN)" if np.isnan(value) else "infinite value"
        raise DataError(f"X has a {kind} at row {i + 1}, column {j + 1}")

    def first_bad(self):
        """(row, column, value) of the first non-finite entry, or None (one more pass)."""
        from dask import delayed

        blocks = self.blocks
        tasks = [delayed(_block_first_bad)(blocks[i, j]) for i in range(blocks.shape[0])
                 for j in range(blocks.shape[1])]
        found = self._compute(*tasks)
        hits = []
        for t, hit in enumerate(found):
            if hit is not None:
                i, j = divmod(t, blocks.shape[1])
                hits.append((int(self.row_bounds[i]) + hit[0], int(self.col_bounds[j]) + hit[1],
                             hit[2]))
        return min(hits) if hits else None


def _distributed_client():
    """The distributed client ``dask.compute`` would use now, or None (a local scheduler)."""
    try:
        from distributed import Client
    except ImportError:
        return None
    from dask.base import get_scheduler

    owner = getattr(get_scheduler(), "__self__", None)  # a client's bound ``get``
    return owner if isinstance(owner, Client) else None


def as_chunked(X, *, what: str = "X") -> ChunkedMatrix:
    """Wrap a dask array as a :class:`ChunkedMatrix` after the checks that need no pass:
    two dimensions, numeric dtype (integers become float64 lazily)."""
    if isinstance(X, ChunkedMatrix):
        return X
    if X.ndim != 2:
        raise DataError(f"{what} must be 2-dimensional, got shape {X.shape}")
    if any(np.isnan(c) for dim in X.chunks for c in dim):
        raise DataError(f"{what} has unknown chunk sizes; call X.compute_chunk_sizes() first")
    dtype = np.dtype(X.dtype)
    if dtype not in (np.float32, np.float64):
        if dtype.kind not in "biuf":
            raise DataError(f"{what} has non-numeric dtype {dtype}")
        X = X.astype(np.float64)
    return ChunkedMatrix(X)
