"""The k-NN graph Laplacian and the manifold kernel H = X_l Z⁻¹ X_lᵀ, Z = Xᵀ𝓛X (FS-Manifold,
Xu, King, Lyu & Jin, eqs. 3 and 12–13), without ever forming a d × d matrix.

With 𝓛 = QΛQᵀ (n × n, n = labeled + unlabeled rows) and F = Λ^{½}Qᵀ, the factor U = F X has
UᵀU = Z, and every quantity goes through the n × n Gram matrix K = XXᵀ:

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

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components


def knn_graph(X, n_neighbors: int = 20, metric: str = "cosine",
              weights: str = "binary") -> sp.csr_matrix:
    """Symmetric k-NN adjacency (sparse): binary weights or heat weights exp(−d²/σ²) with σ the
    mean neighbour distance; an edge exists when either point is among the other's k nearest."""
    from sklearn.neighbors import NearestNeighbors

    n = X.shape[0]
    k = int(min(n_neighbors, n - 1))
    if k < 1:
        raise ValueError("the graph needs at least 2 rows")
    if metric not in ("cosine", "euclidean"):
        raise ValueError("metric must be 'cosine' or 'euclidean'")
    if weights not in ("binary", "heat"):
        raise ValueError("graph_weights must be 'binary' or 'heat'")
    nn = NearestNeighbors(n_neighbors=k + 1, metric=metric, algorithm="brute").fit(X)
    dist, idx = nn.kneighbors(X)
    rows = np.repeat(np.arange(n), k)
    cols = idx[:, 1:].ravel()
    d = dist[:, 1:].ravel()
    if weights == "binary":
        vals = np.ones(rows.size)
    else:
        sigma2 = max(float(np.mean(d**2)), 1e-12)
        vals = np.exp(-(d**2) / sigma2)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    return A.maximum(A.T).tocsr()


def laplacian(W: sp.spmatrix, kind: str = "unnormalized") -> sp.csr_matrix:
    """𝓛 = D − W, or the symmetric normalised I − D^{−½} W D^{−½}."""
    deg = np.asarray(W.sum(axis=1)).ravel()
    if kind == "unnormalized":
        return (sp.diags(deg) - W).tocsr()
    if kind == "normalized":
        inv = np.where(deg > 0, 1.0 / np.sqrt(np.maximum(deg, 1e-300)), 0.0)
        return (sp.eye(W.shape[0]) - sp.diags(inv) @ W @ sp.diags(inv)).tocsr()
    raise ValueError("laplacian must be 'unnormalized' or 'normalized'")


@dataclass
class ManifoldKernel:
    """H (l × l, double-centred) and what it is made of, for the records."""

    H: np.ndarray
    ridge: float
    trace_Z: float
    null_mass: float      # ‖N‖ relative to ‖K_ll‖: labeled-row mass outside range(Z)
    components: int       # connected components of the graph


def manifold_kernel(X_all, n_labeled: int, L: sp.spmatrix, ridge: float | None = None
                    ) -> ManifoldKernel:
    """H = X_l (Z + εI)⁻¹ X_lᵀ with Z = X_allᵀ 𝓛 X_all, the first ``n_labeled`` rows labeled."""
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
    H = (G / (s * (s + eps))) @ G.T
    K_ll = K[:n_labeled, :n_labeled]
    N = K_ll - (G / s) @ G.T
    N = 0.5 * (N + N.T)
    C = np.eye(n_labeled) - 1.0 / n_labeled
    H = C @ H @ C
    H = 0.5 * (H + H.T)
    scale = max(np.linalg.norm(K_ll), 1e-300)
    null_mass = float(np.linalg.norm(C @ N @ C) / scale)
    components = int(connected_components(sp.csr_matrix(L != 0), directed=False)[0])
    return ManifoldKernel(H=H, ridge=eps, trace_Z=trace_Z, null_mass=null_mass,
                          components=components)


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
