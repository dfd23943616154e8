"""The cache of generated columns that restricted masters solve over (FGM §5.3)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class BlockCache:
    """The columns of the selected blocks, stored once (dense float64 or sparse CSC).

    Dense columns go into one Fortran-ordered buffer grown by doubling, so the whole cache is a
    contiguous n×W array and ``Aᵀr`` is a single BLAS call.

    ``center=True`` makes every product use the centred columns A − 1μᵀ (μ: column means),
    stored centred when dense and centred implicitly when sparse (it stays sparse). With an
    unpenalised intercept b this is the exact change of variables b′ = b + μᵀω, which removes
    the coupling between b and uncentred columns that makes first-order masters crawl (raw
    pixels: 0.8 % from the optimum after 2,000 APG steps instead of 160 % after 30,000).
    """

    def __init__(self, n_samples: int, sparse: bool, center: bool = False):
        self.n = n_samples
        self.sparse = sparse
        self.center = bool(center)
        self.means = np.zeros(0)
        self.bounds: list[tuple[int, int]] = []
        self._buffer = np.empty((n_samples, 0), order="F")
        self._sparse_blocks: list[sp.csc_matrix] = []
        self._stacked: sp.csc_matrix | None = None
        # runs of side-by-side blocks of one width, [first block, blocks, first column, width]:
        # a run's block products are one batched product (FGM's blocks all have B columns)
        self._runs: list[list[int]] = []
        self.width = 0
        self.nnz = 0  # non-zeros of the columns as given (the same for either storage)

    def add(self, columns) -> int:
        """Append a block of columns; returns its index."""
        w = columns.shape[1]
        start = self.width
        mu = np.asarray(columns.mean(axis=0), dtype=np.float64).ravel() if self.center \
            else np.zeros(w)
        self.means = np.concatenate([self.means, mu])
        if self.sparse:
            block = sp.csc_matrix(columns, dtype=np.float64)
            self.nnz += int(np.count_nonzero(block.data))
            self._sparse_blocks.append(block)
            self._stacked = None
        else:
            if start + w > self._buffer.shape[1]:
                grown = np.empty((self.n, max(2 * self._buffer.shape[1], start + w, 16)),
                                 order="F")
                grown[:, :start] = self._buffer[:, :start]
                self._buffer = grown
            dense = columns.toarray() if sp.issparse(columns) else columns
            self.nnz += int(np.count_nonzero(dense))
            self._buffer[:, start:start + w] = dense
            if self.center:
                self._buffer[:, start:start + w] -= mu
        if self._runs and self._runs[-1][3] == w:
            self._runs[-1][1] += 1
        else:
            self._runs.append([len(self.bounds), 1, start, w])
        self.width = start + w
        self.bounds.append((start, start + w))
        return len(self.bounds) - 1

    @property
    def n_blocks(self) -> int:
        return len(self.bounds)

    def matrix(self):
        """All cached columns as one n×W matrix (dense: centred if ``center``; sparse: raw,
        use :meth:`rmatvec` / :meth:`block_products` for centred products)."""
        if self.sparse:
            if self._stacked is None:
                self._stacked = sp.hstack(self._sparse_blocks, format="csc") \
                    if self._sparse_blocks else sp.csc_matrix((self.n, 0))
            return self._stacked
        return self._buffer[:, :self.width]

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Aᵀr over all cached columns (one pass)."""
        out = np.asarray(self.matrix().T @ r).ravel()
        if self.sparse and self.center:
            out -= self.means * float(np.sum(r))
        return out

    def block_products(self, coef: np.ndarray) -> np.ndarray:
        """The n×T matrix whose column t is A_t coef_t (one pass), Fortran-ordered so that its
        columns are written and its row sums taken contiguously."""
        out = np.empty((self.n, self.n_blocks), order="F")
        if self.sparse:
            for t, block in enumerate(self._sparse_blocks):
                a, b = self.bounds[t]
                out[:, t] = block @ coef[a:b]
                if self.center:
                    out[:, t] -= float(self.means[a:b] @ coef[a:b])
        else:
            A = self._buffer
            for first, count, start, w in self._runs:
                stop = start + count * w
                # the run's columns as a stack of w×n blocks (a view of the buffer), times its
                # coefficients as a stack of 1×w rows: out's columns first..first+count
                np.matmul(coef[start:stop].reshape(count, 1, w),
                          A[:, start:stop].T.reshape(count, w, self.n),
                          out=out.T[first:first + count, None, :])
        return out

    def nbytes(self) -> int:
        if self.sparse:
            return sum(b.data.nbytes + b.indices.nbytes + b.indptr.nbytes
                       for b in self._sparse_blocks)
        return self._buffer.nbytes


def block_norms(coef: np.ndarray, bounds) -> np.ndarray:
    """‖coef_t‖₂ for every block [a, b) of ``bounds``."""
    return np.array([np.linalg.norm(coef[a:b]) for a, b in bounds])



class CachedMaster:
    """What every restricted master over a :class:`BlockCache` shares: the generated columns
    (``self.columns``), their weights (``self.coef``) and the per-block norms."""

    cache: BlockCache
    columns: list
    coef: np.ndarray

    def weights_by_column(self):
        """(Columns, coefficient slice) for every block."""
        return [(cols, self.coef[a:b]) for cols, (a, b) in zip(self.columns, self.cache.bounds)]

    def block_norms(self, coef: np.ndarray | None = None) -> np.ndarray:
        coef = self.coef if coef is None else coef
        return block_norms(coef, self.cache.bounds) if self.cache.n_blocks else np.zeros(0)
