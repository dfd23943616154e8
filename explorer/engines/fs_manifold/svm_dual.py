"""The SVM dual on a given kernel, exactly: max αᵀe − ½(α∘y)ᵀK(α∘y), 0 ≤ α ≤ C, αᵀy = 0.

FS-Manifold's level-method oracle (Xu et al., Alg. 2) needs this α at every cut. libsvm's SMO
cycles on the singular kernels that wide or sparse data give (10⁷ iterations, ≈1 s, on a
40-row problem, without reaching its tolerance), so problems of up to ``EXACT_ROWS`` rows are
solved as a QP by an interior-point method (Clarabel); larger ones by libsvm.
"""

from __future__ import annotations

import warnings

import clarabel
import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

EXACT_ROWS = 600  # rows up to which the dual is solved as a QP (dense l × l Hessian)


def svm_dual(K: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """α of the SVM dual on kernel ``K`` (l × l, symmetrised here) with labels ``y`` ∈ {±1}."""
    K = 0.5 * (np.asarray(K, dtype=np.float64) + np.asarray(K, dtype=np.float64).T)
    y = np.asarray(y, dtype=np.float64)
    if y.size <= EXACT_ROWS:
        alpha = _qp(K, y, float(C))
        if alpha is not None:
            return alpha
    svm = SVC(kernel="precomputed", C=C, tol=1e-8, max_iter=10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(K, y)
    alpha = np.zeros(y.size)
    alpha[svm.support_] = np.abs(svm.dual_coef_.ravel())
    return alpha


def _qp(K, y, C) -> np.ndarray | None:
    """min ½aᵀQa − eᵀa, Q = (yyᵀ)∘K, over yᵀa = 0, 0 ≤ a ≤ C, by Clarabel."""
    l = y.size
    scale = max(float(np.abs(K).max(initial=0.0)), 1e-300)  # a well-scaled Hessian
    P = sp.csc_matrix(np.triu((y[:, None] * y[None, :]) * (K / scale)))
    eye = sp.identity(l, format="csc")
    A = sp.vstack([sp.csc_matrix(y[None, :]), -eye, eye], format="csc")
    b = np.concatenate([[0.0], np.zeros(l), np.full(l, C * scale)])
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(2 * l)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-10
    settings.tol_feas = 1e-10
    solution = clarabel.DefaultSolver(P, -np.ones(l), A, b, cones, settings).solve()
    if str(solution.status) not in ("Solved", "AlmostSolved"):
        return None  # libsvm then
    # in units of the scaled problem a = scale·α
    alpha = np.clip(np.asarray(solution.x) / scale, 0.0, C)
    return _polish(K, y, C, alpha)


def _polish(K, y, C, alpha, rel: float = 1e-6) -> np.ndarray:
    """Solve the KKT equations on the interior point's active set exactly (α at 0 or C stays
    there; the free ones and b from Q_FF α_F + b y_F = e − Q_FU α_U, y_Fᵀα_F = −y_Uᵀα_U); kept
    only if it stays in the box and does not lower the dual value."""
    free = (alpha > rel * C) & (alpha < C * (1 - rel))
    upper = alpha >= C * (1 - rel)
    if not free.any():
        return alpha
    Q = (y[:, None] * y[None, :]) * K
    F = np.flatnonzero(free)
    a_up = np.where(upper, C, 0.0)
    m = F.size
    system = np.zeros((m + 1, m + 1))
    system[:m, :m] = Q[np.ix_(F, F)]
    system[:m, m] = system[m, :m] = y[F]
    rhs = np.concatenate([1.0 - Q[F] @ a_up, [-(y @ a_up)]])
    sol = np.linalg.lstsq(system, rhs, rcond=None)[0]
    polished = a_up.copy()
    polished[F] = sol[:m]
    if polished[F].min() < 0 or polished[F].max() > C or \
            _value(Q, polished) < _value(Q, alpha) - 1e-12 * abs(_value(Q, alpha)):
        return alpha
    return polished


def _value(Q, a) -> float:
    return float(a.sum() - 0.5 * a @ Q @ a)
