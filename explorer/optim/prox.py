"""Proximal operators, each a small function tested against a generic minimiser.

Conventions: ``prox_f(v, step)`` returns ``argmin_x f(x) + ‖x − v‖²/(2·step)``.
"""

from __future__ import annotations

import numpy as np

from ..kernels import l1sq_scales, lp_ball_projection


def l1_squared_block_scales(norms: np.ndarray, step: float) -> np.ndarray:
    """Scales c_t ≥ 0 of the Moreau projection of ½(Σ_t‖ω_t‖)² (Alg. 3 of Tan et al., FGM).

    ``prox(g)_t = c_t · g_t`` with ``u_t = ‖g_t‖`` and ``s = step`` (= 1/τ): sort u in
    decreasing order, ρ = max{j : u_j − s/(1+js) Σ_{i≤j} u_i > 0},
    ς = s/(1+ρs) Σ_{i≤ρ} u_i, and o_t = max(u_t − ς, 0), c_t = o_t / u_t. Compiled
    (:func:`explorer.kernels.l1sq_scales`): APG calls it at every line-search trial.
    """
    u = np.ascontiguousarray(norms, dtype=np.float64)
    return l1sq_scales(u, float(step), np.empty_like(u))


def prox_l1_squared(blocks: list[np.ndarray], step: float) -> list[np.ndarray]:
    """Prox of ½(Σ_t ‖ω_t‖)² on a list of blocks (Alg. 3 of Tan et al., FGM)."""
    norms = np.array([np.linalg.norm(b) for b in blocks])
    scales = l1_squared_block_scales(norms, step)
    return [c * b for c, b in zip(scales, blocks)]


def soft_threshold(v: np.ndarray, threshold: float | np.ndarray) -> np.ndarray:
    """Prox of threshold·‖x‖₁: sign(v)·max(|v| − threshold, 0)."""
    return np.sign(v) * np.maximum(np.abs(v) - threshold, 0.0)


def prox_group_l2(V: np.ndarray, threshold: float | np.ndarray) -> np.ndarray:
    """Prox of threshold·Σ_g ‖V_g‖₂ with one group per row of V (block soft-thresholding)."""
    V = np.atleast_2d(V)
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > 0, np.maximum(1.0 - threshold / norms, 0.0), 0.0)
    return V * scale


def prox_group_lq(V: np.ndarray, threshold: float, q: float) -> np.ndarray:
    """Prox of threshold·Σ_g ‖V_g‖_q, one group per row, for 1 < q < ∞.

    By Moreau's identity prox = V − Π_{‖·‖_{q′} ≤ t}(V) row by row (q′ = q/(q−1)); the
    projection onto the ℓ_{q′} ball is found by a 1-D root find on its multiplier (Table 1 of
    Rakotomamonjy et al. lists ℓ1-ℓq; this is the standard reduction).
    """
    if q == 2:
        return prox_group_l2(V, threshold)
    if q == 1:
        return soft_threshold(V, threshold)
    V = np.atleast_2d(np.asarray(V, dtype=np.float64))
    qp = q / (q - 1.0)
    out = np.empty_like(V)
    for g in range(V.shape[0]):
        out[g] = V[g] - project_lq_ball(V[g], threshold, qp)
    return out


def project_lq_ball(v: np.ndarray, radius: float, p: float) -> np.ndarray:
    """Euclidean projection of v onto {x : ‖x‖_p ≤ radius}, 1 < p < ∞ (a 1-D root find on the
    multiplier, numba kernel :func:`explorer.kernels.lp_ball_projection`)."""
    return lp_ball_projection(np.ascontiguousarray(v, dtype=np.float64), float(radius), float(p))
