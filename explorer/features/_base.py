"""The feature-space protocol every generator works with.

A feature space ranks *candidates* (features, groups, or generated columns such as degree-2
products) by the score ``c = λ²‖Φ_Gᵀ s‖²`` for a signal vector ``s`` over examples, returns the
top B (the worst-case analysis of Alg. 2 in FGM), and materialises the columns of chosen
candidates — and only those — for the restricted master.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Columns:
    """Materialised columns of some candidates plus what each column is.

    ``candidate[c]`` is the candidate id that owns column c; ``feature_a``/``feature_b`` are the
    input features it is made of (``-1`` when unused: a linear column uses only ``feature_a``;
    a degree-2 product uses both; a square uses a == b); ``scale`` multiplies the raw values.
    """

    matrix: object
    candidate: np.ndarray
    feature_a: np.ndarray
    feature_b: np.ndarray
    scale: np.ndarray
    kind: np.ndarray  # 0 linear, 1 square, 2 product, 3 bin response

    @property
    def width(self) -> int:
        return int(self.candidate.size)


class FeatureSpace:
    """Base class: subclasses define ``n_candidates``, ``scores``/``top`` and ``columns``."""

    n_candidates: int = 0
    n_samples: int = 0
    passes: int = 0  # scoring passes over the data so far (the "physical unit")
    fixed: np.ndarray = np.zeros(0, dtype=np.int64)  # candidates in every block (pinned)
    _training_data = ("X", "codes")  # per-example arrays: used by the fit, never pickled

    def __getstate__(self):
        """A fitted model keeps its space to name and transform features; the training
        matrix it was scored on stays out of the pickle (and out of messages to workers)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._training_data}

    def top(self, s: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids and scores of the k best candidates for signal ``s`` (decreasing)."""
        from ..kernels import top_k

        return top_k(self.scores(s), k)

    def scores(self, s: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError  # abstract

    def columns(self, ids: np.ndarray) -> Columns:  # pragma: no cover - abstract
        raise NotImplementedError  # abstract

    def transform(self, X, cols: Columns):  # pragma: no cover - abstract
        raise NotImplementedError  # abstract

    def describe(self, candidate: int) -> str:
        return f"x{candidate}"

    def input_features(self, ids: np.ndarray) -> np.ndarray:
        """Input features touched by the given candidates."""
        cols = self.columns(np.asarray(ids))
        feats = np.concatenate([cols.feature_a, cols.feature_b])
        return np.unique(feats[feats >= 0])
