"""The manifold kernel H on wide data: independent of the ridge for both Laplacians."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.engines.fs_manifold import (
    knn_graph,
    laplacian,
    manifold_kernel,
    manifold_kernel_direct,
)


@pytest.mark.parametrize("kind", ["normalized", "unnormalized"])
def test_wide_data_kernel_does_not_depend_on_the_ridge(kind):
    """More features than rows: Z = Xᵀ𝓛X is singular. The normalised Laplacian's null space
    (D^{½}1) is not constant, so centring did not remove the 1/ε part and H changed by 90 %
    when the ridge was multiplied by 10."""
    X = np.abs(np.random.default_rng(0).standard_normal((150, 600)))
    L = laplacian(knn_graph(X, 20, "cosine", "binary"), kind)
    a = manifold_kernel(X, 100, L)
    b = manifold_kernel(X, 100, L, ridge=10 * a.ridge)
    assert np.linalg.norm(a.H - b.H) / np.linalg.norm(a.H) < 1e-4


@pytest.mark.parametrize("kind", ["normalized", "unnormalized"])
@pytest.mark.parametrize("shape", [(40, 12), (30, 80)])
def test_kernel_equals_the_d_by_d_formula(kind, shape):
    rng = np.random.default_rng(1)
    X = np.abs(rng.standard_normal(shape))
    L = laplacian(knn_graph(X, 5, "euclidean", "heat"), kind)
    fast = manifold_kernel(X, 20, L, ridge=1e-3)
    direct = manifold_kernel_direct(X, 20, L, ridge=1e-3)
    np.testing.assert_allclose(fast.H, direct, rtol=1e-6, atol=1e-8 * np.abs(direct).max())
