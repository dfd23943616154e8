"""A dask array seen through the products the methods need, each one pass over its chunks.

FGM's worst-case analysis (Alg. 2) and FSA's gradient are map-reduce over the blocks of X:
every block ``X_ij`` computes its part of ``Xᵀs`` with the in-memory kernel (:func:`xts`),
partial sums are added per column chunk, and FGM's top-B is taken per column chunk before the
global top-B on the driver. Only selected columns (:meth:`ChunkedMatrix.take`) and vectors of
length n or m ever come back. The tasks run on the active ``dask.distributed`` client, or on
dask's threaded scheduler when there is none (``dask.compute`` picks it). Chunks may be dense
arrays or scipy sparse matrices.

``passes`` counts products over the whole (working) matrix and ``bytes_read`` the bytes of
the chunks they touched: the physical unit of the cost model in ``docs/scale.md``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import top_k, xts


def is_dask(X) -> bool:
    """True for a ``dask.array.Array`` (checked without importing dask)."""
    return type(X).__module__.startswith("dask.") and hasattr(X, "chunks") and \
        hasattr(X, "to_delayed")


def _block_xts(block, s):
    return xts(block, s)


def _block_top(parts, lam, k, offset):
    v = np.sum(parts, axis=0) * lam
    ids, vals = top_k(v * v, k)
    return ids + offset, vals, bool(np.isfinite(v).all())


def _block_sum(parts):
    return np.sum(parts, axis=0)


def _block_matvec(block, w):
    return np.asarray(block @ w, dtype=np.float64)


def _block_moments(block):
    if sp.issparse(block):
        sq = block.multiply(block)
        return (np.asarray(block.sum(axis=0), dtype=np.float64).ravel(),
                np.asarray(sq.sum(axis=0), dtype=np.float64).ravel(), int(block.nnz))
    return (block.sum(axis=0, dtype=np.float64),
            np.einsum("ij,ij->j", block, block, dtype=np.float64), int(block.size))


def _block_take(block, local):
    return block[:, local]


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
        self.nnz = None  # known after column_moments() on sparse chunks

    @property
    def passes(self) -> int:
        return self.counts["passes"]

    @property
    def bytes_read(self) -> int:
        return self.counts["bytes_read"]

    def _derived(self, array) -> ChunkedMatrix:
        out = ChunkedMatrix(array)
        out.counts = self.counts
        return out

    # ------------------------------------------------------------------ plumbing
    @property
    def blocks(self):
        if self._blocks is None:
            self._blocks = self.array.to_delayed()
        return self._blocks

    @property
    def bytes_per_pass(self) -> int:
        """Bytes one pass reads: n·m·itemsize dense; values and indices of sparse chunks."""
        if self.sparse and self.nnz is not None:
            return int(self.nnz * (self.dtype.itemsize + 4))
        return int(self.shape[0] * self.shape[1] * self.dtype.itemsize)

    def _count_pass(self) -> None:
        self.counts["passes"] += 1
        self.counts["bytes_read"] += self.bytes_per_pass

    def _row_parts(self, s: np.ndarray) -> list:
        s = np.ascontiguousarray(s, dtype=np.float64)
        return [s[a:b] for a, b in zip(self.row_bounds[:-1], self.row_bounds[1:])]

    @staticmethod
    def _compute(*tasks):
        import dask

        return dask.compute(*tasks)

    # ------------------------------------------------------------------ products
    def xts(self, s: np.ndarray) -> np.ndarray:
        """``Xᵀs`` as float64 (one pass)."""
        from dask import delayed

        parts = self._row_parts(s)
        blocks = self.blocks
        columns = [delayed(_block_sum)([delayed(_block_xts)(blocks[i, j], parts[i])
                                        for i in range(blocks.shape[0])])
                   for j in range(blocks.shape[1])]
        self._count_pass()
        v = np.concatenate(self._compute(*columns)) if columns else np.zeros(0)
        self._check(v)
        return v

    def top(self, s: np.ndarray, lam: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k largest ``(λ_j (Xᵀs)_j)²``: a top-k per column chunk, merged on the driver
        (one pass; only k ids and scores per chunk come back)."""
        from dask import delayed

        parts = self._row_parts(s)
        blocks = self.blocks
        tops = []
        for j in range(blocks.shape[1]):
            a, b = self.col_bounds[j], self.col_bounds[j + 1]
            partial = [delayed(_block_xts)(blocks[i, j], parts[i])
                       for i in range(blocks.shape[0])]
            tops.append(delayed(_block_top)(partial, lam[a:b], min(k, b - a), int(a)))
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
        from dask import delayed

        w = np.asarray(w, dtype=np.float64)
        blocks = self.blocks
        rows = []
        for i in range(blocks.shape[0]):
            rows.append(delayed(_block_sum)([
                delayed(_block_matvec)(blocks[i, j],
                                       w[self.col_bounds[j]:self.col_bounds[j + 1]])
                for j in range(blocks.shape[1])]))
        self._count_pass()
        out = np.concatenate(self._compute(*rows)) if rows else np.zeros((0,) + w.shape[1:])
        self._check(out)
        return out

    def __matmul__(self, w):
        return self.matvec(w)

    def column_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Column sums and sums of squares (float64; one pass). Sparse chunks also give
        the number of stored values (``nnz``), which sizes later passes."""
        from dask import delayed

        blocks = self.blocks
        per_block = [[delayed(_block_moments)(blocks[i, j]) for i in range(blocks.shape[0])]
                     for j in range(blocks.shape[1])]
        results = self._compute(*per_block)
        self._count_pass()
        sums = np.concatenate([np.sum([r[0] for r in col], axis=0) for col in results])
        sq = np.concatenate([np.sum([r[1] for r in col], axis=0) for col in results])
        if self.sparse:
            self.nnz = int(sum(r[2] for col in results for r in col))
        self._check(sq)
        return sums, sq

    # ------------------------------------------------------------------ columns
    def take(self, cols) -> np.ndarray | sp.csc_matrix:
        """Columns ``cols`` (in that order) in memory: a dense float array or CSC matrix.
        Reads only the column chunks that hold them."""
        from dask import delayed

        cols = np.asarray(cols, dtype=np.int64)
        if cols.size == 0:
            return sp.csc_matrix((self.shape[0], 0), dtype=self.dtype) if self.sparse \
                else np.zeros((self.shape[0], 0), dtype=self.dtype)
        order = np.argsort(cols, kind="stable")
        sorted_cols = cols[order]
        chunk = np.searchsorted(self.col_bounds, sorted_cols, side="right") - 1
        blocks = self.blocks
        tasks, touched = [], 0
        for j in np.unique(chunk):
            local = sorted_cols[chunk == j] - self.col_bounds[j]
            touched += int(self.col_bounds[j + 1] - self.col_bounds[j])
            tasks.append([delayed(_block_take)(blocks[i, j], local)
                          for i in range(blocks.shape[0])])
        pieces = self._compute(*tasks)
        self.counts["bytes_read"] += int(self.bytes_per_pass * touched / max(1, self.shape[1]))
        if self.sparse:
            stacked = sp.hstack([sp.vstack(col, format="csc") for col in pieces], format="csc")
        else:
            stacked = np.hstack([np.vstack(col) for col in pieces])
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        out = stacked[:, inverse]
        if self.sparse:
            return sp.csc_matrix(out)
        self._check(out)
        return np.asfortranarray(out)

    def __getitem__(self, key):
        """``X[:, cols]`` (columns in memory, as :meth:`take`); rows are not indexed here."""
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice) and \
                key[0] == slice(None):
            return self.take(np.arange(self.shape[1])[key[1]])
        raise TypeError("a chunked X is indexed by columns only: X[:, cols]")

    def subset(self, cols, *, target_chunk_bytes: int = 64 * 2**20) -> ChunkedMatrix:
        """The lazy matrix of columns ``cols`` (sorted), re-chunked so that narrowed column
        chunks are merged back to about ``target_chunk_bytes``; counters carry over."""
        cols = np.asarray(cols, dtype=np.int64)
        sub = self.array[:, cols]
        rows = max(sub.chunks[0])
        per_col = max(1, rows * self.dtype.itemsize)
        width = int(min(max(1, cols.size), max(1, target_chunk_bytes // per_col)))
        if self.sparse:
            sub = sub.rechunk({1: width}) if len(sub.chunks[1]) > 1 else sub
        else:
            sub = sub.rechunk({1: width})
        out = self._derived(sub)
        if self.nnz is not None:
            out.nnz = int(self.nnz * cols.size / max(1, self.shape[1]))
        return out

    def rows(self, idx) -> np.ndarray | sp.csr_matrix:
        """Rows ``idx`` in memory (a sample; reads the row chunks that hold them)."""
        out = self.array[np.asarray(idx, dtype=np.int64)].compute()
        return sp.csr_matrix(out) if sp.issparse(out) else np.asarray(out)

    def persist(self) -> ChunkedMatrix:
        """Keep the chunks in memory (on the workers with a distributed client)."""
        out = self._derived(self.array.persist())
        out.nnz = self.nnz
        return out

    def to_memory(self):
        """The whole matrix in memory: a Fortran-ordered array or a CSC matrix."""
        return self.take(np.arange(self.shape[1]))

    # ------------------------------------------------------------------ checks
    def _check(self, values: np.ndarray) -> None:
        """Non-finite products mean non-finite data: name the first bad entry."""
        if np.isfinite(values).all():
            return
        from ..data import DataError

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


def as_chunked(X, *, what: str = "X") -> ChunkedMatrix:
    """Wrap a dask array as a :class:`ChunkedMatrix` after the checks that need no pass:
    two dimensions, numeric dtype (integers become float64 lazily)."""
    from ..data import DataError

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
