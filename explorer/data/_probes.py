"""Real data with known null features: permuted copies of real columns appended as *probes*
(the NIPS 2003 feature-selection challenge's construction, Guyon et al. 2004). A probe keeps
its column's distribution but is independent of the label and of every other column, so a
probe selected is a false discovery — on real data, where the true features are unknown."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ._dataset import Dataset


def with_probes(dataset: Dataset, n_probes: int | None = None, seed: int = 0) -> Dataset:
    """``dataset`` with ``n_probes`` probe columns appended (default: as many as it has
    features): each a real column, drawn at random (without replacement while they last), its
    values permuted over the rows — training, test and unlabelled rows permuted together, so a
    probe has the column's distribution in every part. ``probes`` holds their indices; they are
    named ``probe:<column>``. Sparse stays sparse.

    Parameters
    ----------
    dataset : Dataset
        A dataset in memory.
    n_probes : int, optional
        How many probes (≥ 1).
    seed : int
        Seed of the columns drawn and of their permutations.

    Returns
    -------
    Dataset
    """
    if dataset.is_lazy:
        raise ValueError("probes are appended to a dataset in memory; this one is opened "
                         "lazily (a dask array)")
    p = dataset.n_features
    n_probes = p if n_probes is None else int(n_probes)
    if n_probes < 1:
        raise ValueError(f"n_probes must be at least 1, got {n_probes}")
    rng = np.random.default_rng(seed)
    source = np.concatenate([rng.permutation(p) for _ in range(-(-n_probes // p))])[:n_probes]
    parts = [dataset.X] + [part for part in (dataset.X_test, dataset.X_unlabeled)
                           if part is not None]
    sizes = [part.shape[0] for part in parts]
    stacked = sp.vstack(parts, format="csc") if sp.issparse(dataset.X) else \
        np.vstack([np.asarray(part, dtype=np.float64) for part in parts])
    columns = []
    for j in source:
        order = rng.permutation(stacked.shape[0])
        column = stacked[:, [int(j)]]
        columns.append(column[order])
    probes = sp.hstack(columns, format="csc") if sp.issparse(stacked) else np.hstack(columns)
    whole = sp.hstack([stacked, probes], format="csr") if sp.issparse(stacked) else \
        np.hstack([stacked, probes])
    edges = np.cumsum([0, *sizes])
    pieces = [whole[edges[i]:edges[i + 1]] for i in range(len(sizes))]
    X, rest = pieces[0], pieces[1:]
    X_test = rest.pop(0) if dataset.X_test is not None else None
    X_unlabeled = rest.pop(0) if dataset.X_unlabeled is not None else None
    names = dataset.names()
    probe_names = [f"probe:{names[j]}" if i < p else f"probe:{names[j]}#{i // p + 1}"
                   for i, j in enumerate(source)]
    return replace(dataset, X=X, X_test=X_test, X_unlabeled=X_unlabeled,
                   feature_names=names + probe_names,
                   probes=np.arange(p, p + n_probes), image_shape=None, groups=None,
                   name=f"{dataset.name}-probes",
                   description=f"{dataset.description} with {n_probes} probes (permuted "
                               "copies of its columns: known null features)")
