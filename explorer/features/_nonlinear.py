"""Explicit nonlinear feature maps scored without materialising them (FGM §4.4, §6.4).

* :class:`Poly2Space` — the degree-2 polynomial map of the kernel (γ xᵀz + r)²:
  ``φ(x) = [√(2γr) x_a, γ x_a², √2 γ x_a x_b]`` (the constant r is the intercept's job).
  Its (m+2)(m+1)/2 − 1 columns are scored block by block from rows of ``Xᵀ diag(s) X`` into a
  streaming top-B heap; only chosen columns are ever formed.
* :class:`BinnedSpace` — an additive (histogram-intersection-like) expansion: feature j becomes
  the group of step responses ``√Δ_jb · 1[x_j ≥ t_jb]`` at quantile thresholds t_jb, whose inner
  products sum to ``Σ_b Δ_jb 1[min(x_j, z_j) ≥ t_jb] ≈ min(x_j, z_j) − t_j0`` (HIK on bins).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

from ..kernels import TopK, poly2_block_scores, xts
from ._base import Columns, FeatureSpace


class Poly2Space(FeatureSpace):
    """Degree-2 polynomial columns of X, scored implicitly.

    Candidate ids: ``0 … m−1`` are the linear columns ``√(2γr) x_a``; then for each a, the
    square ``(a, a)`` followed by the products ``(a, c)``, c > a, at
    ``m + a·m − a(a−1)/2 + (c − a)``.
    """

    def __init__(self, X, *, gamma: float = 1.0, r: float = 1.0, block_bytes: int = 64 << 20):
        self.X = X.tocsc() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        self.n_samples, self.m = X.shape
        m = self.m
        self.gamma, self.r = float(gamma), float(r)
        self.n_candidates = m + m * (m + 1) // 2
        self.block_rows = max(1, min(m, block_bytes // max(1, 8 * m)))
        self.passes = 0
        self.lin_w = np.sqrt(2.0 * self.gamma * self.r)
        self.sq_w = self.gamma
        self.pair_w = np.sqrt(2.0) * self.gamma

    # ----------------------------------------------------------------- ids
    def _offset(self, a):
        a = np.asarray(a, dtype=np.int64)
        return self.m + a * self.m - a * (a - 1) // 2

    def decode(self, ids: np.ndarray):
        """(kind, a, c) per id: kind 0 linear, 1 square, 2 product."""
        ids = np.asarray(ids, dtype=np.int64)
        m = self.m
        kind = np.zeros(ids.size, dtype=np.int8)
        a = ids.copy()
        c = np.full(ids.size, -1, dtype=np.int64)
        quad = ids >= m
        if quad.any():
            q = ids[quad]
            starts = self._offset(np.arange(m))
            aa = np.searchsorted(starts, q, side="right") - 1
            cc = aa + (q - starts[aa])
            a[quad], c[quad] = aa, cc
            kind[quad] = np.where(aa == cc, 1, 2)
        return kind, a, c

    def encode(self, a: int, c: int | None = None) -> int:
        if c is None:
            return int(a)
        a, c = min(a, c), max(a, c)
        return int(self._offset(a) + (c - a))

    # ----------------------------------------------------------------- scoring
    def top(self, s: np.ndarray, k: int):
        self.passes += 1
        heap = TopK(k)
        s = np.asarray(s, dtype=np.float64)
        lin = self.lin_w * xts(self.X, s)
        heap.push(lin * lin, 0)
        if sp.issparse(self.X):
            SX = sp.csc_matrix(self.X.multiply(s[:, None]))
        else:
            SX = self.X * s[:, None]
        m = self.m
        buf = np.empty(self.block_rows * m)
        for a0 in range(0, m, self.block_rows):
            a1 = min(m, a0 + self.block_rows)
            G = self.X[:, a0:a1].T @ SX
            G = np.ascontiguousarray(G.toarray() if sp.issparse(G) else G, dtype=np.float64)
            count = poly2_block_scores(G, a0, self.sq_w, self.pair_w, buf)
            heap.push(buf[:count], int(self._offset(a0)))
        return heap.result()

    def scores(self, s: np.ndarray) -> np.ndarray:
        """All scores (small m only: the point of this space is never to need it)."""
        ids, vals = self.top(s, self.n_candidates)
        out = np.empty(self.n_candidates)
        out[ids] = vals
        return out

    # ----------------------------------------------------------------- columns
    def _make(self, X, kind, a, c):
        dense = X if not sp.issparse(X) else None
        cols = np.empty((X.shape[0], kind.size))
        for t, (k, aa, cc) in enumerate(zip(kind, a, c)):
            xa = dense[:, aa] if dense is not None else X[:, [aa]].toarray().ravel()
            if k == 0:
                cols[:, t] = self.lin_w * xa
            elif k == 1:
                cols[:, t] = self.sq_w * xa * xa
            else:
                xc = dense[:, cc] if dense is not None else X[:, [cc]].toarray().ravel()
                cols[:, t] = self.pair_w * xa * xc
        return cols

    def columns(self, ids: np.ndarray) -> Columns:
        ids = np.asarray(ids, dtype=np.int64)
        kind, a, c = self.decode(ids)
        return Columns(matrix=self._make(self.X, kind, a, c), candidate=ids, feature_a=a,
                       feature_b=c, scale=np.ones(ids.size), kind=kind)

    def transform(self, X, cols: Columns):
        return self._make(X, cols.kind, cols.feature_a, cols.feature_b)

    def describe(self, candidate: int) -> str:
        kind, a, c = self.decode(np.array([candidate]))
        if kind[0] == 0:
            return f"x{a[0]}"
        if kind[0] == 1:
            return f"x{a[0]}²"
        return f"x{a[0]}·x{c[0]}"


@nb.njit(nogil=True, cache=True)
def _binned_scores_dense(codes, s, widths, out):
    """out[j] = Σ_b widths[j,b] (Σ_i s_i 1[codes[i,j] ≥ b])², b = 1…K (codes: n×m)."""
    n, m = codes.shape
    K = widths.shape[1]
    acc = np.zeros(K + 1)
    for j in range(m):
        acc[:] = 0.0
        for i in range(n):
            acc[codes[i, j]] += s[i]
        total = 0.0
        run = 0.0
        for b in range(K, 0, -1):
            run += acc[b]
            total += widths[j, b - 1] * run * run
        out[j] = total
    return out


class BinnedSpace(FeatureSpace):
    """Additive step-function expansion: each feature is a group of ``n_bins`` columns.

    Thresholds are the training quantiles of each feature; column ``(j, b)`` is
    ``√Δ_jb · 1[x_j ≥ t_jb]`` with Δ_jb = t_jb − t_j(b−1) (zero-width bins are dropped).
    Candidates are the input features (groups), so FGM selects whole features with a learned
    nonlinear response. Training responses come from an n×m uint8 code matrix (the number of
    thresholds each value reaches), one byte per entry: sparse input is refused above 1 GiB of
    codes rather than silently densified.
    """

    max_code_bytes = 1 << 30

    def __init__(self, X, *, n_bins: int = 8):
        n, m = X.shape
        if sp.issparse(X) and n * m > self.max_code_bytes:
            raise ValueError(f"feature_map='binned' needs an n×m code matrix ({n * m / 2**30:.1f} "
                             "GiB here); select features linearly first or use fewer columns")
        if not 2 <= int(n_bins) <= 255:
            raise ValueError("n_bins must be between 2 and 255")
        self.n_samples, self.m = n, m
        self.n_bins = int(n_bins)
        qs = np.linspace(0, 1, self.n_bins + 1)
        dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        edges = np.quantile(dense, qs, axis=0).T  # m × (K+1), non-decreasing along a row
        self.thresholds = np.ascontiguousarray(edges[:, 1:])  # t_j1 … t_jK
        self.widths = np.ascontiguousarray(np.maximum(np.diff(edges, axis=1), 0.0))
        codes = np.zeros((n, m), dtype=np.uint8, order="F")
        for b in range(self.n_bins):
            codes += dense >= self.thresholds[:, b][None, :]
        self.codes = codes  # x_ij ≥ t_jb  ⇔  codes[i, j] ≥ b + 1
        self.n_candidates = m
        self.passes = 0

    def scores(self, s: np.ndarray) -> np.ndarray:
        self.passes += 1
        out = np.empty(self.m)
        return _binned_scores_dense(self.codes, np.asarray(s, dtype=np.float64), self.widths,
                                    out)

    def _pairs(self, ids):
        ids = np.asarray(ids, dtype=np.int64)
        feats = np.repeat(ids, self.n_bins)
        bins = np.tile(np.arange(self.n_bins), ids.size)
        keep = self.widths[feats, bins] > 0
        return feats[keep], bins[keep]

    def columns(self, ids: np.ndarray) -> Columns:
        feats, bins = self._pairs(ids)
        cols = np.sqrt(self.widths[feats, bins]) * (self.codes[:, feats] >= bins + 1)
        return Columns(matrix=cols, candidate=feats, feature_a=feats, feature_b=bins,
                       scale=np.ones(feats.size), kind=np.full(feats.size, 3, dtype=np.int8))

    def transform(self, X, cols: Columns):
        feats, bins = cols.feature_a, cols.feature_b
        dense = X[:, feats].toarray() if sp.issparse(X) else np.asarray(X)[:, feats]
        return np.sqrt(self.widths[feats, bins]) * (dense >= self.thresholds[feats, bins])

    def input_features(self, ids: np.ndarray) -> np.ndarray:
        return np.unique(np.asarray(ids, dtype=np.int64))

    def response(self, j: int, bins: np.ndarray, coef: np.ndarray,
                 grid: np.ndarray) -> np.ndarray:
        """The learned response curve f_j(x) = Σ_b coef_b √Δ_jb 1[x ≥ t_jb] on a grid."""
        out = np.zeros_like(grid, dtype=np.float64)
        for c, b in zip(coef, bins):
            out += c * np.sqrt(self.widths[j, b]) * (grid >= self.thresholds[j, b])
        return out

    def describe(self, candidate: int) -> str:
        return f"x{candidate} (binned)"
