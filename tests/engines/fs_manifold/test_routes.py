"""FS-Manifold on many rows: every kernel route gives the d × d formula's H, the approximate
graph finds the exact neighbours it claims to, and a route too large is refused in words."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import make
from explorer.engines.fs_manifold import (
    GraphStopped,
    adjacency,
    kernel_route,
    knn_graph,
    laplacian,
    manifold_kernel,
    manifold_kernel_direct,
    nearest_neighbours,
)
from explorer.engines.fs_manifold import manifold as manifold_module


def _clusters(n, d, seed, sparse=False):
    """Two clusters (a graph of two components when few neighbours are asked)."""
    rng = np.random.default_rng(seed)
    X = np.abs(rng.standard_normal((n, d)))
    X[: n // 2, : d // 2] += 3.0
    X[n // 2:, d // 2:] += 3.0
    return sp.csr_matrix(X * (rng.random((n, d)) < 0.6)) if sparse else X


CASES = [(60, 12, False), (40, 90, False), (80, 30, True)]  # tall, wide, sparse


@pytest.mark.parametrize("route", ["gram", "covariance"])
@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
@pytest.mark.parametrize("n,d,sparse", CASES)
def test_every_route_gives_the_direct_formula(route, kind, n, d, sparse):
    """The independent reference is the d × d formula (eigenvectors of Z = Xᵀ𝓛X formed
    densely); the two routes must give its H to 1e-9, on a graph of two components too."""
    X = _clusters(n, d, seed=n + d, sparse=sparse)
    for neighbours in (3, 8):
        L = laplacian(knn_graph(X, neighbours, "euclidean", "heat"), kind)
        mk = manifold_kernel(X, 15, L, route=route)
        direct = manifold_kernel_direct(X, 15, L, mk.ridge)
        assert mk.route == route
        err = np.linalg.norm(mk.H - direct) / np.linalg.norm(direct)
        assert err < 1e-9, (route, kind, neighbours, err)
    assert manifold_kernel(X, 15, laplacian(knn_graph(X, 3, "euclidean"))).components == 2


def test_auto_takes_the_smaller_matrix_and_refuses_what_cannot_fit(monkeypatch):
    assert kernel_route(100_000, 784) == "covariance"
    assert kernel_route(300, 5_000) == "gram"
    monkeypatch.setattr(manifold_module, "MAX_DENSE_SIDE", 500)
    with pytest.raises(ValueError, match=r"600 × 600 matrix .* fewer unlabeled rows"):
        kernel_route(700, 600)
    with pytest.raises(ValueError, match="kernel route must be one of"):
        kernel_route(10, 10, "lanczos")


def test_the_covariance_route_reports_progress_and_stops():
    X = np.abs(np.random.default_rng(0).standard_normal((9000, 20)))
    L = laplacian(knn_graph(X[:9000], 5, "euclidean"))
    seen = []
    manifold_kernel(X, 10, L, route="covariance", progress=lambda f: seen.append(f))
    assert seen[-1] == 1.0 and len(seen) >= 3 and seen == sorted(seen)
    with pytest.raises(GraphStopped):
        manifold_kernel(X, 10, L, route="covariance", progress=lambda f: False)


def test_the_exact_graph_reports_progress_and_stops():
    X = np.random.default_rng(1).standard_normal((3000, 8))
    seen = []
    found = nearest_neighbours(X, 5, "euclidean", "exact", progress=seen.append)
    assert found.route == "exact" and found.recall == 1.0 and seen[-1] == 1.0
    assert not np.any(found.index == np.arange(3000)[:, None])  # no row is its own neighbour
    with pytest.raises(GraphStopped):
        nearest_neighbours(X, 5, "euclidean", "exact", progress=lambda f: False)


@pytest.mark.slow
def test_the_approximate_graph_finds_the_neighbours_it_reports_on_real_digits():
    """Deformed digits (real strokes): descent's graph holds ≥ 95 % of the exact neighbours,
    the recall it reports on 200 rows is within 0.03 of the recall over all rows, and the
    same rows give the same graph (seeded)."""
    ds = make("digits-deformed-semi", n_rows=4000, n_labeled=20, n_test=100)
    X = np.vstack([ds.X, ds.X_unlabeled])
    exact = nearest_neighbours(X, 20, "cosine", "exact")
    found = nearest_neighbours(X, 20, "cosine", "approximate")
    assert found.route == "approximate"
    true_recall = np.mean([np.intersect1d(a, b).size / 20
                           for a, b in zip(exact.index, found.index)])
    assert true_recall >= 0.95
    assert abs(found.recall - true_recall) < 0.03
    again = nearest_neighbours(X, 20, "cosine", "approximate")
    np.testing.assert_array_equal(np.sort(again.index, axis=1), np.sort(found.index, axis=1))
    # the graph it makes is a symmetric adjacency like the exact one
    W = adjacency(found)
    assert (W != W.T).nnz == 0 and W.diagonal().sum() == 0


@pytest.mark.slow
def test_the_approximate_graph_takes_sparse_text_without_densifying():
    """tf-idf reviews (sparse, cosine): descent works on the CSR rows and holds ≥ 95 % of the
    exact neighbours at the default 20 (0.96 measured)."""
    ds = make("fine-foods")
    found = nearest_neighbours(ds.X, 20, "cosine", "approximate")  # the default 20
    assert sp.issparse(ds.X) and found.index.shape == (ds.X.shape[0], 20)
    assert found.recall >= 0.95
