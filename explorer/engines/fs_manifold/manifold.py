"""The manifold kernel H = X_l Z⁻¹ X_lᵀ, Z = Xᵀ𝓛X (FS-Manifold, Xu, King, Lyu & Jin, eqs. 3
and 12–13; the graph and 𝓛 are in :mod:`.graph`), by the route that forms the smaller dense
matrix: the n × n Gram route below when n ≤ d, else Z itself as a d × d matrix
(:func:`_covariance_route`). Both give the same H (tests: to 1e-9 of
:func:`manifold_kernel_direct`).

The Gram route. With 𝓛 = QΛQᵀ (n × n, n = labeled + unlabeled rows) and F = Λ^{½}Qᵀ, the
factor U = F X has UᵀU = Z, and every quantity goes through the n × n Gram matrix K = XXᵀ:

    UUᵀ = F K Fᵀ = V S Vᵀ,   X_l Uᵀ = K_{l·} Fᵀ,   G = X_l Uᵀ V.

By Woodbury, (Z + εI)⁻¹ = W diag(1/(s+ε)) Wᵀ + (I − WWᵀ)/ε with W = UᵀV S^{−½}, so

    H = G diag(1/(s(s+ε))) Gᵀ + N/ε,   N = K_ll − G diag(1/s) Gᵀ,

O(n²d + n³) time and O(n² + l·n) memory. N is the part of the labeled rows outside the range
of Z: directions v with Xv in the Laplacian's null space cost nothing in wᵀZw, so the ridge
would give them weight 1/ε. H leaves that part out, which is the pseudo-inverse Z⁺ on it
(ε → 0 on the rest). For the unnormalised Laplacian the null space is the constant vector, N is
constant over the labeled rows and double-centring (every SVM dual in the method satisfies
αᵀy = 0) would remove it anyway; for the normalised one it is D^{½}1, not constant, and keeping
N/ε made H depend on the ridge (90 % when ε × 10 on wide data) — dropping it makes H
independent of ε up to O(ε/s). ``null_mass`` still reports how much of the labeled rows lies
there. ε defaults to 1e-6·tr(Z)/d.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .graph import GraphStopped

ROUTES = ("auto", "gram", "covariance")
MAX_DENSE_SIDE = 16_000  # the largest n × n or d × d matrix a route forms (2 GB in float64)
Z_BLOCK = 4096  # rows of 𝓛X formed at a time by the covariance route


@dataclass
class ManifoldKernel:
    """H (l × l, double-centred) and what it is made of, for the records."""

    H: np.ndarray
    ridge: float
    trace_Z: float
    null_mass: float      # ‖N‖ relative to ‖K_ll‖: labeled-row mass outside range(Z)
    components: int       # connected components of the graph
    route: str = "gram"   # "gram" (n × n) or "covariance" (d × d)


def kernel_route(n: int, d: int, route: str = "auto") -> str:
    """The route that forms the smaller dense matrix: "gram" (n × n, O(n²d + n³)) when there
    are no more rows than features, else "covariance" (d × d, O(nnz(𝓛)d + nd² + d³)). A matrix
    side over ``MAX_DENSE_SIDE`` on both routes is refused with what the user can change."""
    if route not in ROUTES:
        raise ValueError(f"kernel route must be one of {ROUTES}, got {route!r}")
    if route == "auto":
        route = "gram" if n <= d else "covariance"
    side = n if route == "gram" else d
    if side > MAX_DENSE_SIDE:
        gib = side * side * 8 * 3 / 2**30
        raise ValueError(
            f"FS-Manifold's manifold kernel on {n:,} rows × {d:,} features needs a "
            f"{side:,} × {side:,} matrix and its factor (about {gib:.0f} GB): use fewer "
            f"unlabeled rows (at most {MAX_DENSE_SIDE:,} rows in all) or keep at most "
            f"{MAX_DENSE_SIDE:,} features (a filter such as variance or document frequency)")
    return route


def manifold_kernel(X_all, n_labeled: int, L: sp.spmatrix, ridge: float | None = None,
                    route: str = "auto", progress: Callable[[float], bool] | None = None
                    ) -> ManifoldKernel:
    """H = X_l (Z + εI)⁻¹ X_lᵀ with Z = X_allᵀ 𝓛 X_all, the first ``n_labeled`` rows labeled,
    by the route :func:`kernel_route` picks; ``progress(fraction)`` is told how far the
    covariance route's Z is (False: stop, :class:`GraphStopped`)."""
    n, d = X_all.shape
    route = kernel_route(n, d, route)
    if route == "gram":
        H, ridge, trace_Z, null_mass = _gram_route(X_all, n_labeled, L, ridge)
    else:
        H, ridge, trace_Z, null_mass = _covariance_route(X_all, n_labeled, L, ridge, progress)
    components = int(connected_components(sp.csr_matrix(L != 0), directed=False)[0])
    return ManifoldKernel(H=H, ridge=ridge, trace_Z=trace_Z, null_mass=null_mass,
                          components=components, route=route)


def _centred(A: np.ndarray) -> np.ndarray:
    C = np.eye(A.shape[0]) - 1.0 / A.shape[0]
    A = C @ A @ C
    return 0.5 * (A + A.T)


def _gram_route(X_all, n_labeled, L, ridge):
    """Woodbury through the n × n Gram matrix K = XXᵀ and the eigenvectors of 𝓛 (the module
    docstring); the route for n ≤ d."""
    n, d = X_all.shape
    K = X_all @ X_all.T
    K = K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64)
    lam, Q = np.linalg.eigh(L.toarray() if sp.issparse(L) else np.asarray(L))
    lam = np.maximum(lam, 0.0)
    F = np.sqrt(lam)[:, None] * Q.T                     # F = Λ^{½} Qᵀ, FᵀF = 𝓛
    UUt = F @ K @ F.T
    UUt = 0.5 * (UUt + UUt.T)
    s, V = np.linalg.eigh(UUt)
    trace_Z = float(np.sum(np.maximum(s, 0.0)))
    eps = float(ridge) if ridge is not None else max(1e-6 * trace_Z / d, 1e-300)
    keep = s > max(1e-12 * s.max(initial=0.0), 0.0)
    s, V = s[keep], V[:, keep]
    G = (K[:n_labeled] @ F.T) @ V                      # X_l Uᵀ V  (l × r)
    H = _centred((G / (s * (s + eps))) @ G.T)
    K_ll = K[:n_labeled, :n_labeled]
    N = K_ll - (G / s) @ G.T
    scale = max(np.linalg.norm(K_ll), 1e-300)
    return H, eps, trace_Z, float(np.linalg.norm(_centred(N)) / scale)


def _covariance_route(X_all, n_labeled, L, ridge, progress):
    """Z = Xᵀ𝓛X as a d × d matrix from sparse products, ``Z_BLOCK`` rows of 𝓛X at a time
    (O(nnz(𝓛)·d + n·d²) time, O(d² + Z_BLOCK·d) memory besides X), then Z's eigenvectors:
    H = X_l E diag(1/(z + ε)) Eᵀ X_lᵀ over z > 1e-12·max z, the same pseudo-inverse on Z's
    null space as the Gram route; the route for n > d."""
    n, d = X_all.shape
    L = sp.csr_matrix(L)
    sparse = sp.issparse(X_all)
    X = sp.csr_matrix(X_all, dtype=np.float64) if sparse else np.asarray(X_all, np.float64)
    Z = np.zeros((d, d))
    for start in range(0, n, Z_BLOCK):
        rows = slice(start, min(n, start + Z_BLOCK))
        LX = L[rows] @ X                              # (𝓛X) on these rows
        if sparse:
            _add_csr(Z, sp.csr_matrix(X[rows].T @ LX))
        else:
            Z += X[rows].T @ LX
        if progress is not None and progress(rows.stop / n) is False:
            raise GraphStopped
    Z = 0.5 * (Z + Z.T)
    z, E = np.linalg.eigh(Z)
    del Z
    trace_Z = float(np.sum(np.maximum(z, 0.0)))
    eps = float(ridge) if ridge is not None else max(1e-6 * trace_Z / d, 1e-300)
    keep = z > max(1e-12 * z.max(initial=0.0), 0.0)
    A = X[:n_labeled] @ E                              # X_l E  (l × d)
    A = np.asarray(A)
    H = _centred((A[:, keep] / (z[keep] + eps)) @ A[:, keep].T)
    K_ll = np.asarray((X[:n_labeled] @ X[:n_labeled].T).toarray() if sparse
                      else X[:n_labeled] @ X[:n_labeled].T)
    N = A[:, ~keep] @ A[:, ~keep].T
    scale = max(np.linalg.norm(K_ll), 1e-300)
    return H, eps, trace_Z, float(np.linalg.norm(_centred(N)) / scale)


@numba.njit(cache=True)
def _add_csr_kernel(Z, indptr, indices, data):
    for i in range(indptr.size - 1):
        for p in range(indptr[i], indptr[i + 1]):
            Z[i, indices[p]] += data[p]


def _add_csr(Z: np.ndarray, P: sp.csr_matrix) -> None:
    """Z += P in place for a sparse P (no dense copy of P)."""
    _add_csr_kernel(Z, P.indptr.astype(np.int64), P.indices.astype(np.int64),
                    P.data.astype(np.float64))


def manifold_kernel_direct(X_all, n_labeled: int, L, ridge: float) -> np.ndarray:
    """The same H from the d × d formula (tests, small d only), double-centred: X_l (Z + εI)⁻¹
    X_lᵀ on the range of Z, the pseudo-inverse on its null space."""
    X = X_all.toarray() if sp.issparse(X_all) else np.asarray(X_all, dtype=np.float64)
    Ld = L.toarray() if sp.issparse(L) else np.asarray(L)
    Z = X.T @ Ld @ X
    z, E = np.linalg.eigh(0.5 * (Z + Z.T))
    keep = z > 1e-12 * max(z.max(initial=0.0), 0.0)
    Xl = X[:n_labeled] @ E[:, keep]
    H = (Xl / (z[keep] + ridge)) @ Xl.T
    C = np.eye(n_labeled) - 1.0 / n_labeled
    return C @ H @ C
