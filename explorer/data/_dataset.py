"""The ``Dataset`` type: a design matrix with everything the explorer knows about it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._named import with_names

TASKS = ("classification", "regression", "ranking")


@dataclass
class Dataset:
    """A labeled design matrix plus optional test part, unlabeled rows and known structure.

    Attributes
    ----------
    X : ndarray or scipy sparse matrix, shape (n_samples, n_features)
        Training rows. Sparse input stays sparse. With ``feature_names``, ``X`` and
        ``X_test`` carry them (as ``columns``, :mod:`explorer.data._named`): an estimator
        fitted on ``X`` has them as ``feature_names_in_``.
    y : ndarray, shape (n_samples,)
        Labels (any two or more labels for classification, floats for regression, relevance
        grades for ranking).
    name : str
        Short name (catalogue name or file name).
    X_test, y_test : optional
        Held-out rows; filled by :meth:`split` when absent.
    X_unlabeled : optional
        Extra rows without labels (semi-supervised methods use them in their graph).
    feature_names : list of str, optional
    groups : ndarray of int (one group id per feature) or list of index arrays, optional
        Non-overlapping ids, or possibly overlapping index sets.
    image_shape : (height, width), optional
        Set when features are pixels; views draw weights on this grid.
    truth : ndarray of int, optional
        Indices of the informative features (synthetic data), for recovery metrics.
    probes : ndarray of int, optional
        Indices of features known to carry nothing (permuted copies of real columns appended
        by :func:`~explorer.data.with_probes`): a probe selected is a false discovery.
    task : {"classification", "regression", "ranking"}
    query, query_test : optional
        Query ids for ranking data.
    description, source, licence : str
        Provenance shown in the UI.
    """

    X: Any
    y: np.ndarray | None
    name: str = "dataset"
    X_test: Any = None
    y_test: np.ndarray | None = None
    X_unlabeled: Any = None
    feature_names: list[str] | None = None
    groups: Any = None
    image_shape: tuple[int, int] | None = None
    truth: np.ndarray | None = None
    probes: np.ndarray | None = None
    task: str = "classification"
    query: np.ndarray | None = None
    query_test: np.ndarray | None = None
    description: str = ""
    source: str = ""
    licence: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.feature_names is not None:
            self.X = with_names(self.X, self.feature_names)
            self.X_test = with_names(self.X_test, self.feature_names)

    # ---------------------------------------------------------------- shape
    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def is_lazy(self) -> bool:
        """X is a dask array (opened lazily; read chunk by chunk by the methods)."""
        return type(self.X).__module__.startswith("dask.")

    @property
    def is_sparse(self) -> bool:
        if self.is_lazy:
            return sp.issparse(getattr(self.X, "_meta", None))
        return sp.issparse(self.X)

    @property
    def classes(self) -> np.ndarray | None:
        if self.task != "classification" or self.y is None:
            return None
        return np.unique(self.y)

    @property
    def has_test(self) -> bool:
        return self.X_test is not None and self.y_test is not None

    def names(self) -> list[str]:
        """Feature names, generated as ``x0, x1, …`` (or ``r{i}c{j}`` for images) when absent."""
        if self.feature_names is not None:
            return list(self.feature_names)
        if self.image_shape is not None:
            h, w = self.image_shape
            return [f"r{i}c{j}" for i in range(h) for j in range(w)]
        return [f"x{j}" for j in range(self.n_features)]

    def mean_row(self) -> np.ndarray | None:
        """The mean training row (for image data: the mean image the weights are drawn over);
        None for a lazy X."""
        if self.is_lazy:
            return None
        if "_mean_row" not in self.__dict__:
            self.__dict__["_mean_row"] = np.asarray(self.X.mean(axis=0), dtype=float).ravel()
        return self.__dict__["_mean_row"]

    def column_sd(self, columns) -> np.ndarray | None:
        """The training rows' standard deviation of the given columns (a weight times it is
        the model's change for one standard deviation of the feature, comparable across
        features in different units); None for a lazy X."""
        if self.is_lazy:
            return None
        from ..kernels import column_moments, take_columns

        columns = np.asarray(columns, dtype=np.int64)
        if columns.size == 0:
            return np.zeros(0)
        return column_moments(take_columns(self.X, columns))[1]

    def nonzero_rows(self) -> np.ndarray | None:
        """How many training rows each feature is non-zero in; None for a lazy X."""
        if self.is_lazy:
            return None
        if "_nonzero_rows" not in self.__dict__:
            X = self.X
            counts = X.getnnz(axis=0) if hasattr(X, "getnnz") else np.count_nonzero(X, axis=0)
            self.__dict__["_nonzero_rows"] = np.asarray(counts).ravel()
        return self.__dict__["_nonzero_rows"]

    def summary(self) -> str:
        """One line: rows, columns, density, classes."""
        parts = [f"{self.n_samples:,} × {self.n_features:,}"]
        if self.is_lazy:
            size = self.n_samples * self.n_features * np.dtype(self.X.dtype).itemsize
            kind = "sparse chunks" if self.is_sparse else f"{format_bytes(size)} {self.X.dtype}"
            parts.append(f"lazy (dask, {kind}, {self.X.numblocks[0]}×{self.X.numblocks[1]} "
                         "chunks)")
        else:
            density = (self.X.nnz / max(1, self.n_samples * self.n_features)) \
                if self.is_sparse else 1.0
            parts.append(f"sparse, density {density:.3g}" if self.is_sparse else "dense")
        if self.task == "classification":
            classes, counts = np.unique(self.y, return_counts=True)
            if len(classes) <= 4:
                parts.append(", ".join(f"{c}: {n}" for c, n in zip(classes, counts)))
            else:
                parts.append(f"{len(classes)} classes")
        else:
            parts.append(self.task)
        if self.has_test:
            parts.append(f"test {self.X_test.shape[0]:,}")
        if self.meta.get("image_shape_guessed"):
            parts.append(f"drawn as images: {self.meta['image_shape_guessed']}")
        if self.X_unlabeled is not None:
            same = self.meta.get("setting") == "transductive"
            parts.append(f"unlabeled {self.X_unlabeled.shape[0]:,}" +
                         (" (the test rows, unlabeled: transductive)" if same else ""))
        return " · ".join(parts)

    # ---------------------------------------------------------------- split
    def split(self, test_size: float = 0.3, seed: int = 0) -> Dataset:
        """Hold out a test part (stratified for classification, by query for ranking).

        A dataset that already has a test part is returned unchanged, so calling ``split`` on
        the result of a generator that ships its own test set (as the papers' do) is harmless.
        """
        if self.has_test:
            return self
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1), got {test_size}")
        from sklearn.model_selection import GroupShuffleSplit, train_test_split

        n = self.n_samples
        idx = np.arange(n)
        if self.task == "ranking" and self.query is not None:
            splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
            train, test = next(splitter.split(idx, groups=self.query))
        else:
            stratify = None
            if self.task == "classification":
                _, counts = np.unique(self.y, return_counts=True)
                if counts.min() >= 2:
                    stratify = self.y
            train, test = train_test_split(idx, test_size=test_size, random_state=seed,
                                           stratify=stratify)
            train, test = np.sort(train), np.sort(test)
        return self.fold(train, test)

    def pooled(self) -> Dataset:
        """All the rows as training rows: a shipped test part stacked under the training
        part (for fresh splits of everything); the dataset itself when it has none."""
        if not self.has_test:
            return self
        if sp.issparse(self.X):
            X = sp.vstack([self.X, self.X_test], format=self.X.format)
        else:
            X = np.vstack([np.asarray(self.X), np.asarray(self.X_test)])
        query = None if self.query is None or self.query_test is None else \
            np.concatenate([self.query, self.query_test])
        return replace(self, X=X, y=np.concatenate([self.y, self.y_test]), X_test=None,
                       y_test=None, query=query, query_test=None)

    def fold(self, train, held_out) -> Dataset:
        """Rows ``train`` as the training rows and rows ``held_out`` as the test part: the
        parts of :meth:`split`, or one fold of a cross-validation of the training part
        (which never sees the test part)."""
        train, held_out = np.asarray(train), np.asarray(held_out)
        return replace(
            self,
            X=_rows(self.X, train), y=self.y[train],
            X_test=_rows(self.X, held_out), y_test=self.y[held_out],
            query=None if self.query is None else self.query[train],
            query_test=None if self.query is None else self.query[held_out],
        )


def format_bytes(size: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.3g} {unit}"
        size /= 1000
    return f"{size:.3g} TB"


def _rows(X, idx):
    return X[idx]
