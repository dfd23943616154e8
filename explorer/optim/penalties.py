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
        from .group_master import _block_size

        if self.block is None:
            self.block = _block_size(self.groups, n_rows)
        return self.block

    def norms(self, W: np.ndarray) -> np.ndarray:
        from .group_master import group_norms

        return group_norms(W, self.groups, self.q, self._block(W.shape[0]))

    def value(self, W: np.ndarray, ws: np.ndarray) -> float:
        return self.lam * float(self.norms(W).sum()) + self.lam_shared * float(np.abs(ws).sum())

    def prox(self, W: np.ndarray, ws: np.ndarray, step: float):
        from .group_master import prox_groups

        nW = prox_groups(W, self.groups, self.lam * step, self.q, self._block(W.shape[0]))
        ns = soft_threshold(ws, self.lam_shared * step) if self.lam_shared > 0 else ws
        return nW, ns


__all__ = ["GroupLq", "L1Squared", "prox_group_lq"]
