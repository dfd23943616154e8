"""FS-multi's compiled loop: the most violated labeling of the F1 loss (Alg. 3's table), beside
its engine; the shared scorer stays in :mod:`explorer.kernels`."""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = dict(nogil=True, cache=True, fastmath=False)


@nb.njit(**_JIT)
def _f1_table_value(a, b, P, sp, sn, n):
    return 1.0 - 2.0 * a / (P + a + b) + (2.0 * sp[a] - sp[-1] + 2.0 * sn[b] - sn[-1]) / n


@nb.njit(**_JIT)
def f1_most_violated_table(sp, sn, n):
    """(a, b) maximising 1 − 2a/(P + a + b) + (2·sp[a] − sp[P] + 2·sn[b] − sn[N])/n, with
    ``sp``/``sn`` the prefix sums of the sorted positive/negative scores: for each a the
    objective is concave in b, so b is found by binary search on its increments (first
    maximiser); the first a with the largest value wins. Its numpy twin is Joachims' grid,
    :func:`explorer.engines.fs_multi.structured.most_violated_grid` (and brute force), in the
    tests."""
    P = sp.size - 1
    N = sn.size - 1
    best_a, best_b, best = 0, 0, -np.inf
    for a in range(P + 1):
        lo, hi = 0, N
        while lo < hi:
            mid = (lo + hi) // 2
            if _f1_table_value(a, mid + 1, P, sp, sn, n) > _f1_table_value(a, mid, P, sp, sn, n):
                lo = mid + 1
            else:
                hi = mid
        value = _f1_table_value(a, lo, P, sp, sn, n)
        if value > best:
            best_a, best_b, best = a, lo, value
    return best_a, best_b
