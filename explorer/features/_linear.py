"""Linear feature space: the columns of X, one by one or by (non-overlapping, overlapping or
tree-structured) groups, optionally scaled by λ_j = 1/‖f_j‖ (FGM eq. 4)."""

from __future__ import annotations

import copy
import heapq

import numpy as np

from ..kernels import GroupIndex, TopK, column_sums, take_columns, top_k, xts
from ._base import Columns, FeatureSpace


def _column_norms(X) -> np.ndarray:
    """‖f_j‖ of every column, in float64, in one compiled pass (numpy's norm(axis=0) of a
    4,096 × 65,536 float32 X took 1.3 s, a quarter of FGM refine's fit)."""
    if getattr(X, "is_chunked", False):
        return np.sqrt(X.column_moments()[1])
    return np.sqrt(column_sums(X)[1])


def tree_parents(index: GroupIndex) -> np.ndarray | None:
    """Parent of each group if the groups are tree-structured (FGM Definition 1), else None.

    Groups are visited from the largest down while each feature remembers the smallest group
    seen so far that contains it: a group is a valid child only if all its features share the
    same owner (its parent) or have none (it is a root). O(Σ|G| log p).
    """
    p = index.n_groups
    order = np.argsort(-index.sizes(), kind="stable")
    owner = np.full(index.n_features, -1, dtype=np.int64)
    parent = np.full(p, -1, dtype=np.int64)
    for g in order:
        members = index.members_of(g)
        owners = np.unique(owner[members])
        if owners.size != 1:
            return None
        parent[g] = owners[0]
        owner[members] = g
    return parent


SCALE_SPREAD = 100.0  # largest / smallest column RMS above which "auto" rescales
NEGLIGIBLE_RMS = 10.0 * np.finfo(np.float64).eps  # a column this small is not scaled up


def negligible(rms) -> np.ndarray:
    """Which columns are too small to be scaled: a root mean square (or standard deviation)
    under 10·machine epsilon (≈ 2.2e-15, scikit-learn's bound for a scale too small to
    divide by) is the residue of a zero in double precision — pd-speech's wavelet means,
    values of 1e-21, whose standardised column was rounding noise at unit variance that FSA
    selected with a weight of 1.3e20. Such a column is left as it is, or treated as empty."""
    return np.asarray(rms, dtype=np.float64) < NEGLIGIBLE_RMS


def auto_scaling(X) -> tuple[str | None, np.ndarray | None]:
    """``feature_scaling="auto"``: ("rms", the column norms) when the non-empty columns' root
    mean squares spread over more than ``SCALE_SPREAD`` — features in different units
    (pd-speech: 3e30, grants: 2e4, digits: 270, tf-idf words: rare against common), on which
    the unscaled ℓ1² model is dominated by the large columns and its solver conditioned by
    them (100–600× slower on pd-speech) — else (None, None): the papers' standardised designs
    are fitted as in the papers. The rule reads the values only, so every storage of one
    matrix (dense, CSR, CSC, dask) gets the same scaling."""
    norms = _column_norms(X)
    return ("rms", norms) if scales_spread(norms, X.shape[0]) else (None, None)


def scales_spread(norms: np.ndarray, n_rows: int) -> bool:
    """:func:`auto_scaling`'s rule on column norms over ``n_rows`` rows: the non-empty
    columns' root mean squares spread over more than ``SCALE_SPREAD``."""
    used = norms[~negligible(norms / np.sqrt(max(n_rows, 1)))]
    return bool(used.size and used.max() > SCALE_SPREAD * used.min())


class LinearSpace(FeatureSpace):
    """Candidates are the features of X, or groups of them.

    Parameters
    ----------
    X : ndarray or sparse matrix
        Kept as given (dtype and CSR/CSC layout: no copy); Xᵀs uses the numba kernel of
        the layout, and chosen columns are sliced out once per outer iteration. A
        :class:`~explorer.kernels.chunked.ChunkedMatrix` (dask X) is scored per chunk, with
        a per-chunk top-B for single features, and only chosen columns are read into memory.
    groups : array of ids, or list of index arrays, optional
        One id per feature (non-overlapping) or explicit index sets (overlapping; tree-shaped
        sets are detected and searched with the pruning of Proposition 2).
    group_weights : array, optional
        λ_g per group (default 1).
    scaling : None, "norm", "rms" or "auto"
        Per-feature λ_j = 1/‖f_j‖ (0 for empty columns and those of :func:`negligible`
        size), FGM eq. 4; "rms": λ_j = √n/‖f_j‖,
        unit root-mean-square columns (the identity on standardised data, so C keeps its
        meaning there); "auto": "rms" for a dense X whose columns' root mean squares spread
        over more than ``SCALE_SPREAD`` (features in different units), else None.
    """

    def __init__(self, X, *, groups=None, group_weights=None, scaling: str | None = None):
        self.X = X
        self.n_samples, self.n_features = X.shape
        if scaling not in (None, "norm", "rms", "auto"):
            raise ValueError("feature_scaling must be None, 'norm', 'rms' or 'auto'")
        norms = None
        if scaling == "auto":
            scaling, norms = auto_scaling(X)
        self.scaling = scaling
        if scaling in ("norm", "rms"):
            norms = _column_norms(self.X) if norms is None else norms
            empty = negligible(norms / np.sqrt(max(self.n_samples, 1)))
            if scaling == "rms":
                norms = norms / np.sqrt(self.n_samples)
            with np.errstate(divide="ignore"):
                self.lam = np.where(empty, 0.0, 1.0 / norms)
        else:
            self.lam = np.ones(self.n_features)
        self.groups: GroupIndex | None = None
        self.tree = None
        if groups is not None:
            if isinstance(groups, GroupIndex):
                self.groups = groups
            elif isinstance(groups, (list, tuple)) and len(groups) and np.ndim(groups[0]) > 0:
                self.groups = GroupIndex.from_lists(groups, self.n_features)
            else:
                ids = np.asarray(groups)
                if ids.shape != (self.n_features,):
                    raise ValueError(f"groups must give one id per feature "
                                     f"({self.n_features}), got shape {ids.shape}")
                self.groups = GroupIndex.from_ids(ids)
            if self.groups.overlapping():
                parents = tree_parents(self.groups)
                if parents is not None:
                    self.tree = _Tree(self.groups, parents)
            p = self.groups.n_groups
            self.group_weights = np.ones(p) if group_weights is None else \
                np.asarray(group_weights, dtype=np.float64)
            if self.group_weights.shape != (p,):
                raise ValueError(f"group_weights must have one weight per group ({p})")
            self.n_candidates = p
        else:
            self.group_weights = None
            self.n_candidates = self.n_features
        self.passes = 0
        self.last_visited = self.n_candidates

    def on(self, X) -> LinearSpace:
        """This space (its scaling λ and groups) over ``X``, a matrix of the same values (the
        same rows in another object), with its pass counters at zero."""
        if X.shape != (self.n_samples, self.n_features):
            raise ValueError(f"the space is over a {self.n_samples} × {self.n_features} "
                             f"matrix, got {X.shape[0]} × {X.shape[1]}")
        space = copy.copy(self)
        space.X = X
        space.passes = 0
        space.last_visited = space.n_candidates
        return space

    # ------------------------------------------------------------------ scoring
    def feature_scores(self, s: np.ndarray) -> np.ndarray:
        """v = λ ⊙ Xᵀs (one pass over X)."""
        self.passes += 1
        v = xts(self.X, s)
        v *= self.lam  # in place: a text space's score vectors are 10 MB each
        return v

    def scores(self, s: np.ndarray) -> np.ndarray:
        v = self.feature_scores(s)
        if self.groups is None:
            return np.multiply(v, v, out=v)
        return self.groups.sumsq(v, self.group_weights)

    def fix(self, pinned: np.ndarray, factor: np.ndarray | None = None) -> None:
        """What the user knows: the ``pinned`` features are in every block :meth:`top`
        returns, and ``factor`` divides each feature's λ_j (its score falls by f_j², its
        weight is penalised f_j² times as much). Single in-memory features only."""
        pinned = np.asarray(pinned, dtype=np.int64)
        if pinned.size and (self.groups is not None or getattr(self.X, "is_chunked", False)):
            raise ValueError("always_include pins single features of an X in memory: it "
                             "cannot be combined with groups or a dask X (exclude can)")
        self.fixed = pinned
        if factor is not None:
            self.lam = self.lam / np.asarray(factor, dtype=np.float64)

    def top(self, s: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best candidates for ``s``, after the pinned ones (:meth:`fix`), which come
        first with their own scores."""
        if self.fixed.size:
            scores = self.scores(s)
            fixed = scores[self.fixed].copy()
            scores[self.fixed] = -np.inf
            ids, vals = top_k(scores, k)
            return np.concatenate([self.fixed, ids]), np.concatenate([fixed, vals])
        if self.tree is not None:
            v = self.feature_scores(s)
            ids, vals, visited = self.tree.top(v, self.group_weights, k)
            self.last_visited = visited
            return ids, vals
        if self.groups is None and getattr(self.X, "is_chunked", False):
            self.passes += 1
            return self.X.top(s, self.lam, k)
        return top_k(self.scores(s), k)

    # ------------------------------------------------------------------ columns
    def _members(self, ids: np.ndarray):
        ids = np.asarray(ids, dtype=np.int64)
        if self.groups is None:
            return ids, ids, np.ones(ids.size)
        if ids.size == 0:
            return ids, ids, np.zeros(0)
        feats, owner, weight = [], [], []
        for g in ids:
            members = self.groups.members_of(int(g))
            feats.append(members)
            owner.append(np.full(members.size, g))
            weight.append(np.full(members.size, self.group_weights[g]))
        return np.concatenate(feats), np.concatenate(owner), np.concatenate(weight)

    def columns(self, ids: np.ndarray) -> Columns:
        feats, owner, gw = self._members(ids)
        scale = self.lam[feats] * gw
        return Columns(matrix=self._take(self.X, feats, scale), candidate=owner,
                       feature_a=feats, feature_b=np.full(feats.size, -1),
                       scale=scale, kind=np.zeros(feats.size, dtype=np.int8))

    def input_features(self, ids: np.ndarray) -> np.ndarray:
        """The features of the given candidates, read off the groups: no column is taken
        (on a chunked X that would be one more read of their chunks)."""
        return np.unique(self._members(ids)[0])

    @staticmethod
    def _take(X, feats, scale):
        return take_columns(X, feats, scale)

    def transform(self, X, cols: Columns):
        return self._take(X, cols.feature_a, cols.scale)

    def describe(self, candidate: int) -> str:
        if self.groups is None:
            return f"x{candidate}"
        return f"group {self.groups.labels[candidate]}"


class _Tree:
    """Tree-structured groups with the best-first search of Proposition 2 (FGM §2.4).

    Visiting a group computes ‖ω_G‖²; its descendants are only visited if
    ``λ_max(descendants)² ‖ω_G‖²`` can still beat the B-th best score found so far.
    """

    def __init__(self, index: GroupIndex, parent: np.ndarray):
        self.index = index
        p = index.n_groups
        self.parent = parent
        self.children = [[] for _ in range(p)]
        for g in range(p):
            if self.parent[g] >= 0:
                self.children[self.parent[g]].append(g)
        self.roots = [g for g in range(p) if self.parent[g] < 0]

    def _subtree_max(self, weights: np.ndarray) -> np.ndarray:
        p = self.index.n_groups
        best = np.array(weights, dtype=np.float64)
        order = np.argsort(-self.index.sizes(), kind="stable")[::-1]  # leaves first
        out = np.full(p, 0.0)
        for g in order:
            below = max([max(best[c], out[c]) for c in self.children[g]], default=0.0)
            out[g] = below  # max weight among strict descendants
        return out

    def top(self, v: np.ndarray, weights: np.ndarray, k: int):
        desc_max = self._subtree_max(weights)
        heap = TopK(k)
        frontier = []  # (-bound, tiebreak, kind, node): kind 0 = visit node, 1 = its children
        counter = 0
        visited = 0
        v2 = v * v

        def visit(g):
            nonlocal counter, visited
            visited += 1
            norm2 = float(v2[self.index.members_of(g)].sum())
            heap.push(np.array([weights[g] ** 2 * norm2]), offset=g)
            if self.children[g]:
                counter += 1
                heapq.heappush(frontier, (-(desc_max[g] ** 2) * norm2, counter, g))

        for root in self.roots:
            visit(root)
        while frontier:
            neg_bound, _, g = heapq.heappop(frontier)
            if -neg_bound < heap.minimum:
                break  # Proposition 2: nothing below can enter the top k
            for child in self.children[g]:
                visit(child)
        ids, vals = heap.result()
        return ids, vals, visited
