"""FSA's annealing schedule (Barbu et al., eq. 3) and its cost (Table 1)."""

from __future__ import annotations

import numpy as np


def fsa_schedule(M: int, k: int, n_iter: int, mu: float) -> np.ndarray:
    """M_e = k + (M − k)·max(0, (N_iter − 2e)/(2eμ + N_iter)) for e = 1 … N_iter (eq. 3).

    Returned as integers (rounded up, never below k): the number of variables kept after
    iteration e. It is non-increasing and equals k from e = N_iter/2 on.
    """
    if k > M:
        raise ValueError(f"k={k} is larger than the number of variables M={M}")
    e = np.arange(1, n_iter + 1, dtype=np.float64)
    frac = np.maximum(0.0, (n_iter - 2.0 * e) / (2.0 * e * mu + n_iter))
    return np.maximum(k, np.ceil(k + (M - k) * frac - 1e-9)).astype(np.int64)


def schedule_cost(M: int, k: int, n_iter: int, mu: float) -> tuple[float, float]:
    """(a, b) with Σ_e M_e = a·M + b·k: the area under the schedule (Table 1 lists
    ``a·MN + kN·N_iter``; b is ≈ N_iter)."""
    e = np.arange(1, n_iter + 1, dtype=np.float64)
    frac = np.maximum(0.0, (n_iter - 2.0 * e) / (2.0 * e * mu + n_iter))
    return float(frac.sum()), float(n_iter - frac.sum())
