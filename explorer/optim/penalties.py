"""Penalty objects: value, proximal operator and dual norm, one class per penalty.

* :class:`L1Squared` — ½(Σ_t ‖ω_t‖₂)² over blocks (FGM's and FS-multi's masters, Theorem 4);
  prox by Alg. 3 of Tan et al., dual ½ max_t ‖u_t‖².
* :class:`GroupLq` — λ Σ_g ‖W_g‖_q over groups of rows (GrFL eq. 17, Table 1), plus an optional
  λ_s‖w̃‖₁ on a shared part.
"""

from __future__ import annotations

import numpy as np

from .prox import l1_squared_block_scales, prox_group_lq, soft_threshold


class L1Squared:
    """½(Σ_t ‖ω_t‖)² with blocks given as [start, stop) column ranges."""

    def __init__(self, bounds):
        self.bounds = np.asarray(bounds, dtype=np.int64).reshape(-1, 2)
        widths = self.bounds[:, 1] - self.bounds[:, 0]
        self._owner = np.repeat(np.arange(len(widths)), widths)

    def norms(self, coef: np.ndarray) -> np.ndarray:
        if not len(self.bounds):
            return np.zeros(0)
        sq = np.bincount(self._owner, weights=coef * coef, minlength=len(self.bounds))
        return np.sqrt(sq)

    def value(self, coef: np.ndarray) -> float:
        return 0.5 * float(self.norms(coef).sum()) ** 2

    def scales(self, coef: np.ndarray, step: float) -> np.ndarray:
        """Per-block factors c_t of prox_{step·Ω}(coef): ``prox(g)_t = c_t g_t``."""
        return l1_squared_block_scales(self.norms(coef), step)

    def expand(self, per_block: np.ndarray) -> np.ndarray:
        """A per-block array repeated over each block's columns."""
        return per_block[self._owner]

    def dual(self, u: np.ndarray) -> float:
        """Ω*(u) = ½ max_t ‖u_t‖² (the conjugate of ½‖·‖²_{2,1} is ½‖·‖²_{2,∞})."""
        if not len(self.bounds):
            return 0.0
        return 0.5 * float(self.norms(u).max()) ** 2


class GroupLq:
    """λ_p Σ_g ‖W_g‖_q over groups of rows of W (one column per task) + λ_s ‖w̃‖₁."""

    def __init__(self, groups, lam: float, q: float = 2.0, lam_shared: float = 0.0):
        self.groups = groups
        self.lam = float(lam)
        self.q = float(q)
        self.lam_shared = float(lam_shared)
        self.block = None

    def _block(self, n_rows: int) -> int:
        if self.block is None:
            self.block = block_size(self.groups, n_rows)
        return self.block

    def norms(self, W: np.ndarray) -> np.ndarray:
        return group_norms(W, self.groups, self.q, self._block(W.shape[0]))

    def value(self, W: np.ndarray, ws: np.ndarray) -> float:
        return self.lam * float(self.norms(W).sum()) + self.lam_shared * float(np.abs(ws).sum())

    def prox(self, W: np.ndarray, ws: np.ndarray, step: float):
        nW = prox_groups(W, self.groups, self.lam * step, self.q, self._block(W.shape[0]))
        ns = soft_threshold(ws, self.lam_shared * step) if self.lam_shared > 0 else ws
        return nW, ns



def block_size(groups, c: int) -> int:
    """g if the groups are the consecutive blocks [0, g), [g, 2g), … covering all c columns
    (GrFL's layout), else 0."""
    if not groups:
        return 0
    g = len(groups[0])
    if g == 0 or len(groups) * g != c:
        return 0
    first = np.fromiter((grp[0] for grp in groups), dtype=np.int64, count=len(groups))
    if not np.array_equal(first, np.arange(0, c, g)):
        return 0
    return g if all(len(grp) == g and grp[-1] == grp[0] + g - 1 for grp in groups) else 0


def group_norms(W: np.ndarray, groups, q: float, block: int | None = None) -> np.ndarray:
    """‖W_g‖_q per group; ``block`` is :func:`block_size` when the caller knows it."""
    if not groups:
        return np.zeros(0)
    g = block_size(groups, W.shape[0]) if block is None else block
    if g:
        A = np.abs(W.reshape(len(groups), -1))
        return A.max(axis=1) if q == np.inf else np.sum(A ** q, axis=1) ** (1.0 / q)
    return np.array([np.sum(np.abs(W[grp]) ** q) ** (1.0 / q) if q != np.inf
                     else np.abs(W[grp]).max() for grp in groups])


def prox_groups(V: np.ndarray, groups, threshold: float, q: float,
                block: int | None = None) -> np.ndarray:
    """Prox of threshold·Σ_g ‖V_g‖_q (each group's block flattened over its columns and tasks)."""
    g = block_size(groups, V.shape[0]) if block is None else block
    if g:
        return prox_group_lq(V.reshape(len(groups), -1), threshold, q).reshape(V.shape)
    out = V.copy()
    for grp in groups:
        block = V[grp].reshape(1, -1)
        out[grp] = prox_group_lq(block, threshold, q).reshape(V[grp].shape)
    return out


__all__ = ["GroupLq", "L1Squared", "group_norms", "prox_groups"]
