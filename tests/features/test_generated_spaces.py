"""The nonlinear and generated feature spaces on their own, against explicit constructions:
the degree-2 map against its kernel and brute-force scores, the binned map against its
intersection kernel, the piecewise-linear basis against its design matrix and finite
differences, and the Fourier and Gabor families against direct formulas."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.signal import correlate2d

from explorer.features import (
    BinnedSpace,
    FourierFamily,
    GaborFamily,
    PiecewiseLinearBasis,
    Poly2Space,
    second_difference,
)

RNG = np.random.default_rng(7)
X = RNG.standard_normal((40, 6))
S = RNG.standard_normal(40)


def _poly2_explicit(X, gamma, r):
    """Every column of the degree-2 map, in the space's candidate order."""
    m = X.shape[1]
    cols = [np.sqrt(2 * gamma * r) * X[:, a] for a in range(m)]
    for a in range(m):
        cols.append(gamma * X[:, a] ** 2)
        cols += [np.sqrt(2) * gamma * X[:, a] * X[:, c] for c in range(a + 1, m)]
    return np.column_stack(cols)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(("gamma", "r"), [(1.0, 1.0), (0.3, 2.0)])
def test_poly2_scores_and_top_equal_brute_force_on_the_explicit_map(sparse, gamma, r):
    space = Poly2Space(sp.csr_matrix(X) if sparse else X, gamma=gamma, r=r, block_bytes=100)
    Phi = _poly2_explicit(X, gamma, r)
    brute = (Phi.T @ S) ** 2
    np.testing.assert_allclose(space.scores(S), brute, rtol=1e-12)
    ids, vals = space.top(S, 5)
    assert set(ids) == set(np.argsort(-brute)[:5])
    np.testing.assert_allclose(np.sort(vals), np.sort(brute)[-5:], rtol=1e-12)


def test_poly2_is_the_feature_map_of_its_kernel():
    """φ(x)ᵀφ(z) + r² = (γ xᵀz + r)² (the constant is the intercept's job)."""
    gamma, r = 0.5, 1.5
    Phi = Poly2Space(X, gamma=gamma, r=r).columns(np.arange(6 + 21)).matrix
    np.testing.assert_allclose(Phi @ Phi.T + r * r, (gamma * X @ X.T + r) ** 2, rtol=1e-12,
                               atol=1e-13)


def test_poly2_ids_round_trip_and_new_rows_get_the_same_map():
    space = Poly2Space(X)
    for a in range(6):
        assert space.describe(space.encode(a)) == f"x{a}"
        assert space.describe(space.encode(a, a)) == f"x{a}²"
        for c in range(a + 1, 6):
            assert space.describe(space.encode(c, a)) == f"x{a}·x{c}"
    ids = np.array([1, space.encode(2, 2), space.encode(0, 5)])
    cols = space.columns(ids)
    new = RNG.standard_normal((7, 6))
    np.testing.assert_allclose(space.transform(new, cols), _poly2_explicit(new, 1.0, 1.0)[:, ids])


def test_binned_columns_give_the_intersection_kernel_on_their_bins():
    """φ_j(x)ᵀφ_j(z) = Σ_b Δ_jb 1[min(x_j, z_j) ≥ t_jb]: the histogram intersection on bins."""
    space = BinnedSpace(X, n_bins=5)
    cols = space.columns(np.array([2]))
    K = cols.matrix @ cols.matrix.T
    lo = np.minimum.outer(X[:, 2], X[:, 2])
    ref = sum(space.widths[2, b] * (lo >= space.thresholds[2, b]) for b in range(5))
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
def test_binned_scores_are_the_groups_squared_responses(sparse):
    space = BinnedSpace(sp.csc_matrix(X) if sparse else X, n_bins=4)
    cols = space.columns(np.arange(6))
    brute = np.zeros(6)
    np.add.at(brute, cols.feature_a, (cols.matrix.T @ S) ** 2)
    np.testing.assert_allclose(space.scores(S), brute, rtol=1e-12)
    np.testing.assert_allclose(space.transform(X, cols), cols.matrix)


def test_binned_response_is_the_sum_of_its_weighted_steps():
    space = BinnedSpace(X, n_bins=4)
    cols = space.columns(np.array([3]))
    coef = RNG.standard_normal(cols.width)
    grid = np.sort(X[:, 3])
    curve = space.response(3, cols.feature_b, coef, grid)
    direct = space.transform(grid[:, None] * np.eye(6)[3], cols) @ coef
    np.testing.assert_allclose(curve, direct, rtol=1e-12)


@pytest.mark.parametrize("n_bins", [1, 256, 0])
def test_binned_bad_bin_counts_raise(n_bins):
    with pytest.raises(ValueError, match="n_bins"):
        BinnedSpace(X, n_bins=n_bins)


def _hat_design(basis, X):
    """The n × m(B+1) design matrix of hat functions, built directly."""
    n, m = X.shape
    out = np.zeros((n, m * basis.n_basis))
    for j in range(m):
        knots = basis.knots(j)
        x = np.clip(X[:, j], basis.low[j], basis.high[j])
        for k, t in enumerate(knots):
            out[:, j * basis.n_basis + k] = np.maximum(0.0, 1.0 - np.abs(x - t) / basis.step[j])
    return out


@pytest.mark.parametrize("sparse", [False, True])
def test_piecewise_forward_and_gradient_are_the_hat_design_and_its_transpose(sparse):
    basis = PiecewiseLinearBasis(n_bins=4).fit(sp.csr_matrix(X) if sparse else X)
    bins, frac = basis.encode(sp.csr_matrix(X) if sparse else X)
    A = _hat_design(basis, X)
    beta = RNG.standard_normal((6, basis.n_basis))
    np.testing.assert_allclose(basis.forward(bins, frac, beta), A @ beta.ravel(), atol=1e-6)
    grad = basis.gradient(bins, frac, S)
    np.testing.assert_allclose(grad.ravel(), A.T @ S, atol=1e-5)  # fractions are float32
    x = np.linspace(X[:, 1].min() - 1, X[:, 1].max() + 1, 50)   # clipped outside the range
    design = _hat_design(basis, np.column_stack([x] * 6))[:, basis.n_basis:2 * basis.n_basis]
    np.testing.assert_allclose(basis.response(1, beta[1], x), design @ beta[1], atol=1e-12)


def test_second_difference_annihilates_lines_only():
    D = second_difference(6)
    t = np.arange(6.0)
    np.testing.assert_allclose(D @ (3 * t - 2), 0.0)
    assert np.linalg.matrix_rank(D) == 4
    np.testing.assert_allclose(D @ t**2, 2.0)


def test_fourier_pairs_approximate_the_gaussian_kernel():
    """Rahimi & Recht: (1/k) Σ [cos vᵀx cos vᵀz + sin vᵀx sin vᵀz] → exp(−‖x−z‖²/(2σ²))."""
    sigma = 2.0
    family = FourierFamily(6, [sigma])
    params = family.sample(20000, np.random.default_rng(0))
    Z = family.columns(X[:8], params)
    approx = Z @ Z.T / len(params)
    d2 = ((X[:8, None, :] - X[None, :8, :]) ** 2).sum(-1)
    np.testing.assert_allclose(approx, np.exp(-d2 / (2 * sigma**2)), atol=0.02)


def test_gabor_columns_are_pooled_absolute_correlations():
    family = GaborFamily((8, 8), filter_size=5, stride=3)
    images = RNG.standard_normal((3, 64))
    params = family.sample(2, np.random.default_rng(1))
    got = family.columns(images, params)
    for g, p in enumerate(params):
        F = family.kernel(p)
        for i in range(3):
            full = correlate2d(images[i].reshape(8, 8), F, mode="valid")  # every position
            pooled = sum(abs(full[r, c]) for r, c in family.positions)
            assert got[i, g] == pytest.approx(pooled, rel=1e-12)


def test_gabor_kernel_is_the_papers_filter():
    family = GaborFamily((9, 9), filter_size=5)
    p = family.sample(1, np.random.default_rng(3))[0]
    F = family.kernel(p)
    y, z = -2.0, 1.0                                   # row 0, column 3 of the 5 × 5 grid
    z0 = z * np.cos(p.theta) + y * np.sin(p.theta)
    y0 = -z * np.sin(p.theta) + y * np.cos(p.theta)
    expected = np.exp(-z0**2 / (2 * p.sigma_z**2) - y0**2 / (2 * p.sigma_y**2)) * \
        np.cos(2 * np.pi * p.f0 * z0)
    assert F[0, 3] == pytest.approx(expected, rel=1e-12)
