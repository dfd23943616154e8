"""The SVM dual solver FS-Manifold's oracle uses, against libsvm and its optimality conditions."""

import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from explorer.engines.fs_manifold import svm_dual

module = importlib.import_module("explorer.engines.fs_manifold.svm_dual")


def _dual_value(K, y, a):
    s = a * y
    return a.sum() - 0.5 * s @ K @ s


def _kkt_residual(K, y, C, a, rel=1e-6):
    """Largest violation of the dual's optimality conditions: with g = ∂/∂α of the value there
    is a b with g_i + b y_i ≤ 0 where α_i < C and ≥ 0 where α_i > 0."""
    g = 1.0 - y * (K @ (a * y))
    free = (a > rel * C) & (a < C * (1 - rel))
    b = -np.median((g * y)[free]) if free.any() else 0.0
    r = g + b * y
    return max(r[a < C * (1 - rel)].max(initial=0.0), -r[a > rel * C].min(initial=0.0))


def _libsvm(K, y, C):
    svm = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    a = np.zeros(len(y))
    a[svm.support_] = np.abs(svm.dual_coef_.ravel())
    return a


@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
def test_exact_dual_equals_libsvm_on_a_well_posed_problem(C):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 8))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    K = X @ X.T + np.eye(60)  # strictly convex: one optimum
    ours = svm_dual(K, y, C)
    # libsvm's own stop leaves KKT residuals near 1e-6 here
    np.testing.assert_allclose(ours, _libsvm(K, y, C), atol=1e-5 * max(C, 1.0))
    assert _kkt_residual(K, y, C, ours) <= 1e-9
    assert abs(ours @ y) <= 1e-8 * C * 60 and ours.min() >= 0 and ours.max() <= C


def test_singular_kernel_of_sparse_data_is_solved_to_optimality():
    # 40 sparse rows over 10 columns: K has rank ≤ 10 and repeated rows, where libsvm's SMO
    # runs to its iteration cap; the dual's KKT conditions must hold at the returned α
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 10))
    X[X < 0.8] = 0
    X = sp.csr_matrix(X)
    y = np.where((4 * rng.uniform(size=40)).astype(int) == 0, 1.0, -1.0)
    K = (X @ X.T).toarray()
    C = 1.0
    a = svm_dual(K, y, C)
    assert _kkt_residual(K, y, C, a) <= 1e-6
    assert _dual_value(K, y, a) >= _dual_value(K, y, _libsvm(K, y, C)) - 1e-7


def test_large_problems_go_to_libsvm(monkeypatch):
    monkeypatch.setattr(module, "EXACT_ROWS", 10)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 4))
    y = np.where(X[:, 1] > 0, 1.0, -1.0)
    K = X @ X.T + np.eye(30)
    np.testing.assert_allclose(svm_dual(K, y, 1.0), _libsvm(K, y, 1.0), atol=1e-5)
