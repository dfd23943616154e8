"""A feature space over a continuously parametrised family: candidates are *sampled*.

GrFL's Algorithm 1 (Rakotomamonjy et al.) is FGM's column generation over a space that cannot
be enumerated: each worst-case analysis draws ``n_candidates`` parameters θ from the family,
computes their columns φ_θ(X) (normalised to unit norm on the training rows) and scores each
candidate group by its violation of the optimality conditions (eqs. 6–7),
``‖h_g‖_{q′}`` with ``h = φᵀL′`` over all tasks — the same Xᵀs product as every other space,
over generated columns — and ``|Σ_t h_t|`` for the shared weights. Scores are reported
relative to their penalty (λ_p or λ_s), so the optimality test is ``score ≤ 1 + ε`` whatever the
penalty. Sampled candidates get fresh ids; only the top ones are kept to be materialised.
"""

from __future__ import annotations

import numpy as np

from ..kernels import xts
from ._base import Columns, FeatureSpace

KIND_GENERATED = 4
SHOWN = 12  # a draw's best violations kept for the records (a lesson's bars)


def group_violations(cols: np.ndarray, R: np.ndarray, group_size: int, qd: float):
    """‖h_g‖_{q′} per candidate group (h = φᵀR over all tasks, R n × T) and
    max over the group's columns of |Σ_t h_t| (the shared part's violation)."""
    H = np.column_stack([xts(cols, R[:, t]) for t in range(R.shape[1])])  # c × T
    k = cols.shape[1] // group_size
    Hg = H.reshape(k, group_size * H.shape[1])
    if qd == np.inf:
        viol = np.abs(Hg).max(axis=1)
    else:
        viol = np.sum(np.abs(Hg) ** qd, axis=1) ** (1.0 / qd)
    shared = np.abs(H.sum(axis=1)).reshape(k, group_size).max(axis=1)
    return viol, shared


def unit_columns(cols: np.ndarray):
    """Columns scaled to unit norm, and the scales (zero columns are left as they are)."""
    norms = np.linalg.norm(cols, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    return cols / norms, 1.0 / norms


class SampledSpace(FeatureSpace):
    """Candidates drawn from ``family`` at every worst-case analysis (GrFL's Alg. 1, step 3).

    Parameters
    ----------
    X : array (n × d)
    family : a feature family (``sample``, ``columns``, ``group_size``; optionally
        ``active_mask`` for finite banks that can re-draw a candidate already in the model)
    n_candidates : int
        k_r, candidates drawn per analysis.
    rng : numpy Generator
        The one stream every draw comes from (fits are reproducible from the seed).
    q : float
        The ℓ1-ℓq penalty's q; violations are measured in the dual norm q′.
    lam, lam_shared : float
        λ_p and λ_s: scores are violations divided by them. Set ``lam`` before scoring.
    threshold : float
        1 + ε: a group violation above it is picked before any shared-weight violation (the
        paper's order); when no group violates, candidates are ranked by their shared
        violation (if λ_s > 0).
    """

    _training_data = ("X", "_kept")  # columns on the training rows stay out of pickles

    def __init__(self, X, family, n_candidates: int, rng: np.random.Generator, q: float = 2.0,
                 lam: float | None = None, lam_shared: float = 0.0, threshold: float = 1.0):
        self.X = X
        self.family = family
        self.n_samples = X.shape[0]
        self.k = int(n_candidates)
        self.rng = rng
        self.qd = np.inf if q == 1 else (1.0 if q == np.inf else q / (q - 1.0))
        self.lam = lam
        self.lam_shared = float(lam_shared)
        self.threshold = float(threshold)
        self.params: dict[int, object] = {}
        self.violation: dict[int, float] = {}
        self.draws: dict[int, np.ndarray] = {}  # candidate → its draw's best violations
        self._kept: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._active: list = []
        self._next_id = 0

    @property
    def n_candidates(self) -> int:  # unbounded: every analysis draws new ones
        return self._next_id

    # --------------------------------------------------------------- drawing
    def draw(self, R: np.ndarray):
        """Draw k_r candidates and score them against the signal ``R`` (n × T):
        ``(params, unit columns, scales, group violations, shared violations)``."""
        cand = self.family.sample(self.k, self.rng)
        cols, scales = unit_columns(self.family.columns(self.X, cand))
        viol, shared = group_violations(cols, _tasks(R), self.family.group_size, self.qd)
        self.passes += 1
        if hasattr(self.family, "active_mask") and self._active:
            taken = self.family.active_mask(cand, self._active)
            viol[taken], shared[taken] = -np.inf, -np.inf
        return cand, cols, scales, viol, shared

    def register(self, params, cols=None, scales=None) -> np.ndarray:
        """Give ids to given parameters (a warm start's features); columns computed if absent."""
        if cols is None:
            cols, scales = unit_columns(self.family.columns(self.X, list(params)))
        g = self.family.group_size
        ids = []
        for i, p in enumerate(params):
            ids.append(self._keep(p, cols[:, i * g:(i + 1) * g], scales[i * g:(i + 1) * g],
                                  np.nan))
        return np.asarray(ids, dtype=np.int64)

    def _keep(self, param, cols, scales, violation) -> int:
        cid = self._next_id
        self._next_id += 1
        self.params[cid] = param
        self.violation[cid] = float(violation)
        self._kept[cid] = (cols, scales)
        return cid

    # --------------------------------------------------------------- protocol
    def top(self, R: np.ndarray, k: int):
        """The k most violating of a fresh draw, scores relative to their penalty."""
        if self.lam is None:
            raise RuntimeError("SampledSpace.lam must be set before scoring")
        cand, cols, scales, viol, shared = self.draw(R)
        rel = viol / max(self.lam, 1e-300)
        raw = viol
        if self.lam_shared > 0 and not np.any(rel > self.threshold):
            rel, raw = shared / self.lam_shared, shared
        ranked = np.argsort(-rel, kind="stable")
        order = ranked[:k]
        order = order[np.isfinite(rel[order])]
        g = self.family.group_size
        ids = [self._keep(cand[i], cols[:, i * g:(i + 1) * g], scales[i * g:(i + 1) * g],
                          raw[i]) for i in order]
        if ids:  # the draw that brought this candidate, best first (records, lessons)
            shown = ranked[:SHOWN]
            self.draws[ids[0]] = rel[shown[np.isfinite(rel[shown])]]
        return np.asarray(ids, dtype=np.int64), rel[order]

    def columns(self, ids: np.ndarray) -> Columns:
        ids = np.asarray(ids, dtype=np.int64)
        g = self.family.group_size
        self._active.extend(self.params[int(i)] for i in ids)
        mats = [self._kept[int(i)][0] for i in ids]
        scales = [self._kept[int(i)][1] for i in ids]
        width = g * ids.size
        none = np.full(width, -1, dtype=np.int64)
        return Columns(matrix=np.hstack(mats) if mats else np.zeros((self.n_samples, 0)),
                       candidate=np.repeat(ids, g), feature_a=none, feature_b=none.copy(),
                       scale=np.concatenate(scales) if scales else np.zeros(0),
                       kind=np.full(width, KIND_GENERATED, dtype=np.int64))

    def transform(self, X, cols: Columns):
        ids = cols.candidate[:: self.family.group_size]
        raw = self.family.columns(X, [self.params[int(i)] for i in ids])
        return raw * cols.scale[None, :]

    def describe(self, candidate: int) -> str:
        p = self.params[int(candidate)]
        return p.describe() if hasattr(p, "describe") else f"column {p}"


def _tasks(R: np.ndarray) -> np.ndarray:
    R = np.asarray(R, dtype=np.float64)
    return R[:, None] if R.ndim == 1 else R
