"""What a selection looks like beside its stability: the method's coefficients over k, and how
alike the chosen features are (two methods choosing different but correlated features agree
more than their Jaccard index says)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..data import load
from ..kernels import column_moments
from ..methods import k_grid
from .error_control import _fit_warm
from .sweeps import _resolve, check_compatible, known


def coefficient_path(method, dataset, *, ks: Sequence[int] | None = None, n_points: int = 8,
                     test_size: float = 0.3, seed: int = 0, **params) -> pd.DataFrame:
    """The method's weights at each k of ``ks`` on the dataset's training part (each k from
    the last k's model where the method has a warm start): a tidy frame of k, feature index,
    name, weight (in the input's units; the largest |weight| over classes for more than two
    classes) and ``weight_per_sd`` (times the feature's standard deviation: comparable across
    features in different units), one row per selected feature."""
    cls = _resolve(method)
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    params = known(params, dataset)
    check_compatible(cls, dataset, params)
    ks = sorted({int(k) for k in (ks if ks is not None else
                                  k_grid(dataset.n_features, n_points))})
    names = dataset.names()
    sd = column_moments(dataset.X)[1]
    rows, previous = [], None
    for k in ks:
        est = _fit_warm(cls, dataset, k, params, previous)
        previous = est
        coef = np.atleast_2d(est.coef_)
        signed = coef[0] if coef.shape[0] == 1 else \
            coef[np.abs(coef).argmax(axis=0), np.arange(coef.shape[1])]
        for j in est.selected_features_:
            rows.append((k, int(j), names[j], float(signed[j]), float(signed[j] * sd[j])))
    return pd.DataFrame(rows, columns=["k", "index", "feature", "weight", "weight_per_sd"])


def redundancy(dataset, features: Sequence[int], *, test_size: float = 0.3,
               seed: int = 0) -> pd.DataFrame:
    """Pearson correlations between the given features on the dataset's training rows (only
    those columns are read; a sparse X stays sparse until they are taken), named by the
    dataset's names: a features × features frame. A constant column correlates 0 with the
    others."""
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    cols = np.asarray(features, dtype=np.int64)
    names = [dataset.names()[j] for j in cols]
    if cols.size == 0:
        return pd.DataFrame(index=names, columns=names, dtype=float)
    block = dataset.X[:, cols]
    block = block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)
    centred = block - block.mean(axis=0)
    norms = np.sqrt((centred**2).sum(axis=0))
    safe = np.where(norms > 0, norms, 1.0)
    corr = (centred / safe).T @ (centred / safe)
    corr[:, norms == 0] = 0.0
    corr[norms == 0, :] = 0.0
    np.fill_diagonal(corr, 1.0)
    return pd.DataFrame(corr, index=names, columns=names)
