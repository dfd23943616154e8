"""Continuously parametrised feature families for GrFL (Rakotomamonjy, Flamary & Yger, §5).

A family samples parameters θ and computes the corresponding columns φ_θ(X). A candidate is a
*group* of columns (a random Fourier pair [cos vᵀx, sin vᵀx] is one group; a Gabor filter one
column). Columns are normalised to unit norm on the training rows by the caller, which keeps the
scale factors so that new data get the same map.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


def median_bandwidth(X, max_rows: int = 1000, seed: int = 0) -> float:
    """The median heuristic: median pairwise Euclidean distance on up to ``max_rows`` rows."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    rows = np.sort(rng.choice(n, min(n, max_rows), replace=False))
    S = X[rows]
    S = S.toarray() if sp.issparse(S) else np.asarray(S, dtype=np.float64)
    sq = np.sum(S * S, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * S @ S.T, 0.0)
    iu = np.triu_indices(S.shape[0], 1)
    med = float(np.sqrt(np.median(D2[iu]))) if iu[0].size else 1.0
    return med if med > 0 else 1.0


@dataclass
class FourierParams:
    """One random Fourier group: direction v (d) and its bandwidth σ (v ~ N(0, σ⁻²I))."""

    v: np.ndarray
    sigma: float

    def describe(self) -> str:
        top = np.argsort(-np.abs(self.v))[:3]
        return f"cos/sin(vᵀx), σ={self.sigma:.3g}, |v| largest on x{', x'.join(map(str, top))}"


class FourierFamily:
    """Random Fourier pairs [cos(vᵀx), sin(vᵀx)], v ~ N(0, σ⁻²I) (Rahimi & Recht features of
    the Gaussian kernel exp(−‖x−z‖²/(2σ²))). With several ``bandwidths`` σ is sampled too (GrFL-M,
    the multiple-kernel approximation)."""

    group_size = 2

    def __init__(self, n_features: int, bandwidths):
        self.d = int(n_features)
        self.bandwidths = np.atleast_1d(np.asarray(bandwidths, dtype=np.float64))

    def sample(self, k: int, rng: np.random.Generator) -> list[FourierParams]:
        sig = rng.choice(self.bandwidths, size=k)
        V = rng.standard_normal((k, self.d)) / sig[:, None]
        return [FourierParams(V[i], float(sig[i])) for i in range(k)]

    def columns(self, X, params: list[FourierParams]) -> np.ndarray:
        """n × 2k responses: for each candidate its cos and sin columns."""
        V = np.stack([p.v for p in params], axis=1)   # d × k
        Z = np.asarray(X @ V)
        out = np.empty((Z.shape[0], 2 * len(params)))
        out[:, 0::2] = np.cos(Z)
        out[:, 1::2] = np.sin(Z)
        return out

    def importance(self, params: list[FourierParams], weights: np.ndarray) -> np.ndarray:
        """Input importance: Σ_g ‖W_g‖ · |v_g| / ‖v_g‖ (weight of each input in the directions)."""
        out = np.zeros(self.d)
        for p, w in zip(params, weights):
            out += w * np.abs(p.v) / max(np.linalg.norm(p.v), 1e-300)
        return out


@dataclass
class GaborParams:
    """One Gabor filter: orientation θ, frequency f₀ (cycles/pixel), scales σ_z, σ_y."""

    theta: float
    f0: float
    sigma_z: float
    sigma_y: float

    def describe(self) -> str:
        return (f"Gabor θ={np.degrees(self.theta):.0f}°, f₀={self.f0:.2f}, "
                f"σ=({self.sigma_z:.1f}, {self.sigma_y:.1f})")


class GaborFamily:
    """Gabor features on image patches (§5.1, §6.2): the filter
    F(z, y) = exp(−z₀²/(2σ_z²) − y₀²/(2σ_y²)) cos(2π f₀ z₀), z₀ = z cosθ + y sinθ,
    y₀ = −z sinθ + y cosθ, is correlated with the patch at positions on a stride grid and the
    absolute responses are summed (the paper's pooling)."""

    group_size = 1
    pooled = True  # every filter reads every pixel: its inputs are the whole image

    def __init__(self, image_shape: tuple[int, int], filter_size: int = 7, stride: int = 2,
                 f0_range=(0.05, 0.45), sigma_range=(1.0, 3.5)):
        self.shape = (int(image_shape[0]), int(image_shape[1]))
        self.size = int(min(filter_size, *self.shape))
        self.stride = max(1, int(stride))
        self.f0_range = f0_range
        self.sigma_range = sigma_range
        h, w = self.shape
        k = self.size
        self.positions = [(r, c) for r in range(0, h - k + 1, self.stride)
                          for c in range(0, w - k + 1, self.stride)]

    def sample(self, k: int, rng: np.random.Generator) -> list[GaborParams]:
        return [GaborParams(theta=float(rng.uniform(0, np.pi)),
                            f0=float(rng.uniform(*self.f0_range)),
                            sigma_z=float(rng.uniform(*self.sigma_range)),
                            sigma_y=float(rng.uniform(*self.sigma_range))) for _ in range(k)]

    def kernel(self, p: GaborParams) -> np.ndarray:
        k = self.size
        half = (k - 1) / 2.0
        yy, zz = np.mgrid[0:k, 0:k].astype(float) - half
        z0 = zz * np.cos(p.theta) + yy * np.sin(p.theta)
        y0 = -zz * np.sin(p.theta) + yy * np.cos(p.theta)
        return np.exp(-z0**2 / (2 * p.sigma_z**2) - y0**2 / (2 * p.sigma_y**2)) * \
            np.cos(2 * np.pi * p.f0 * z0)

    def _patches(self, X) -> np.ndarray:
        """n × P × k² stack of the sub-windows at the grid positions."""
        dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        imgs = dense.reshape(-1, *self.shape)
        k = self.size
        return np.stack([imgs[:, r:r + k, c:c + k].reshape(len(imgs), -1)
                         for r, c in self.positions], axis=1)

    def columns(self, X, params: list[GaborParams]) -> np.ndarray:
        P = self._patches(X)                                         # n × P × k²
        F = np.stack([self.kernel(p).ravel() for p in params], 1)    # k² × m
        return np.abs(P @ F).sum(axis=1)                              # n × m

    def importance(self, params: list[GaborParams], weights: np.ndarray) -> np.ndarray:
        """Pixel importance: Σ_g ‖W_g‖ · Σ_positions |F_g| placed on the image grid."""
        h, w = self.shape
        k = self.size
        out = np.zeros((h, w))
        for p, wt in zip(params, weights):
            F = np.abs(self.kernel(p))
            for r, c in self.positions:
                out[r:r + k, c:c + k] += wt * F
        return out.ravel()


class FixedFamily:
    """A finite bank of columns (one group per column): "sampling" returns all of them, so
    column generation over it must reproduce the restricted master on the whole bank."""

    group_size = 1

    def __init__(self, n_columns: int):
        self.m = int(n_columns)

    def sample(self, k: int, rng: np.random.Generator) -> list[int]:
        return list(range(self.m))

    def active_mask(self, candidates: list[int], params: list[int]) -> np.ndarray:
        """Candidates already in the model (a finite bank can re-sample them)."""
        return np.isin(np.asarray(candidates), np.asarray(params, dtype=int))

    def columns(self, X, params: list[int]) -> np.ndarray:
        dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        return dense[:, params]

    def importance(self, params, weights) -> np.ndarray:
        out = np.zeros(self.m)
        for p, w in zip(params, weights):
            out[p] += w
        return out
