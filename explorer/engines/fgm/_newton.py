"""FGM refine's restricted ℓ2 fits, compiled, for the narrow problems of small dense data.

On a few hundred rows and a handful of columns (pd-speech, QSAR sets at k ≤ 50) a refinement
runs some thirty restricted fits of five Newton steps each, and numpy's per-call overhead
around k × k products took most of the fit (1.5–2× abess's time at k = 10). This is
:func:`explorer.engines.fgm.refine.newton_l2` step for step — Newton's method with an Armijo
backtracking line search on ½‖w‖² + C Σ_i l(y_i(a_iᵀw + b)) (Keerthi & DeCoste's finite Newton
method for the squared hinge, plain Newton for the logistic loss) — in one compiled call; the
line search moves along the precomputed A·d, so each trial costs O(n), not O(nk).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ...kernels import loss_scalar

COMPILED_COLUMNS = 64  # restricted fits up to this many columns run compiled …
COMPILED_CELLS = 200_000  # … on up to this many rows × columns


@nb.njit(nogil=True, cache=True)
def _slope_curvature(z, code, h):
    """(l′(z), l″(z)) of the loss ``code`` (the squared hinge's generalised l″: 1 where
    violated); the logistic loss's from one exponential."""
    if code == 0:
        return (z - 1.0, 1.0) if z < 1.0 else (0.0, 0.0)
    if code == 1:
        e = np.exp(-abs(z))
        s = 1.0 / (1.0 + e)
        return (-e * s if z >= 0.0 else -s), e * s * s
    if code == 2:
        return loss_scalar(z, code, h)[1], (1.0 / (2.0 * h) if abs(1.0 - z) <= h else 0.0)
    if code == 3:
        u = min(z - 1.0, 0.0)
        curvature = 2.0 * (1.0 - u * u) / ((1.0 + u * u) * (1.0 + u * u)) if u < 0.0 else 0.0
        return loss_scalar(z, code, h)[1], curvature
    return z, 1.0


@nb.njit(nogil=True, cache=True, fastmath=True)
def _bordered_gram(columns, d2, weighted, H):
    """H = [A 1]ᵀ diag(d2) [A 1] from ``columns`` = [A 1]ᵀ: column by column, each entry one
    contiguous reduction (vectorised; summed in the same order on any number of threads)."""
    size, n = columns.shape
    for a in range(size):
        for i in range(n):
            weighted[i] = d2[i] * columns[a, i]
        for c in range(a, size):
            total = 0.0
            for i in range(n):
                total += weighted[i] * columns[c, i]
            H[a, c] = total
            H[c, a] = total


@nb.njit(nogil=True, cache=True)
def _value(f, y, code, h, C, w):
    total = 0.0
    for i in range(f.shape[0]):
        total += loss_scalar(y[i] * f[i], code, h)[0]
    return 0.5 * np.dot(w, w) + C * total


class NarrowFit(NamedTuple):
    """A restricted ℓ2 problem for the compiled path: ``A`` n × k float64, ``y`` ±1, the loss
    by its kernel ``code`` and parameter ``h``, the data term's weight ``C``."""

    A: np.ndarray
    y: np.ndarray
    code: int
    h: float
    C: float
    fit_intercept: bool


class Start(NamedTuple):
    """A warm start (``w``, ``b``), taken when ``use`` and below the objective at zero."""

    w: np.ndarray
    b: float
    use: bool


@nb.njit(nogil=True, cache=True)
def newton_l2_compiled(fit, start, tol, max_iter, trace):
    """Newton's method on the restricted ℓ2 problem ``fit`` (:class:`NarrowFit`; see the
    module) from ``start`` (:class:`Start`). Writes the objective after each accepted step
    into ``trace`` (``max_iter + 1`` entries, the start first). Returns (w, b, steps)."""
    A, y, code, h, C, fit_intercept = fit
    w0, b0, use_start = start
    n, k = A.shape
    w = np.zeros(k)
    b = 0.0
    f = np.zeros(n)
    F = _value(f, y, code, h, C, w)
    if use_start:
        b_start = b0 if fit_intercept else 0.0
        f0 = A @ w0 + b_start
        F0 = _value(f0, y, code, h, C, w0)
        if F0 < F:
            w, b, F = w0.copy(), b_start, F0
    trace[0] = F
    steps = 0
    g = np.empty(k + 1)
    H = np.empty((k + 1, k + 1))
    columns = np.ones((k + 1, n))  # [A 1]ᵀ, each column of the problem contiguous
    columns[:k] = A.T
    weighted = np.empty(n)
    r = np.empty(n)
    d2 = np.empty(n)
    for _ in range(max_iter):
        f = A @ w + b
        for i in range(n):
            slope, curvature = _slope_curvature(y[i] * f[i], code, h)
            r[i] = C * y[i] * slope
            d2[i] = C * curvature
        for a in range(k):
            g[a] = w[a]
        g[:k] += A.T @ r
        g[k] = r.sum() if fit_intercept else 0.0
        _bordered_gram(columns, d2, weighted, H)
        for a in range(k):
            H[a, a] += 1.0
        if fit_intercept:
            H[k, k] += 1e-12 * max(1.0, H[k, k])
        else:
            for a in range(k):
                H[a, k] = 0.0
                H[k, a] = 0.0
            H[k, k] = 1.0
        direction = -np.linalg.solve(H, g)
        decrement = -np.dot(g, direction)
        if decrement <= tol * max(abs(F), 1e-300):
            break
        moved = A @ direction[:k] + direction[k]
        t = 1.0
        accepted = False
        F_new = F
        for _halving in range(60):
            w_new = w + t * direction[:k]
            F_new = _value(f + t * moved, y, code, h, C, w_new)
            if F_new <= F - 1e-4 * t * decrement:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break  # no decrease left at machine precision
        w = w + t * direction[:k]
        b = b + t * direction[k]
        F = F_new
        steps += 1
        trace[steps] = F
    return w, b, steps


@nb.njit(nogil=True, cache=True)
def surgeon_compiled(A, d2, fit_intercept, w, keep, score, alive):
    """:func:`surgeon_loop` from the restricted columns ``A`` (n × m) and the curvature
    weights ``d2``: H = I + Aᵀ diag(d2) A, bordered by the intercept's row when
    ``fit_intercept``, inverted here (``w`` has H's size)."""
    n, m = A.shape
    size = m + 1 if fit_intercept else m
    columns = np.ones((size, n))
    columns[:m] = A.T
    H = np.empty((size, size))
    _bordered_gram(columns, d2, np.empty(n), H)
    for a in range(m):
        H[a, a] += 1.0
    if fit_intercept:
        H[m, m] += 1e-12 * max(1.0, H[m, m])
    surgeon_loop(np.linalg.inv(H), w, m, keep, score, alive)


@nb.njit(nogil=True, cache=True)
def surgeon_loop(Hinv, w, m, keep, score, alive):
    """The greedy eliminations of :func:`explorer.engines.fgm.refine.surgeon_order` from the
    inverse Hessian ``Hinv`` (size ≥ m; the intercept's row last, never eliminated) and the
    weights ``w``: m − ``keep`` times, drop the alive q of least saliency w_q²/(2[H⁻¹]_qq)
    (ties: the first), move the others by −w_q H⁻¹e_q/[H⁻¹]_qq and downdate H⁻¹ by rank one.
    ``score`` gets each dropped column's step (the survivors keep theirs). Only the columns
    ``alive`` on entry can go (the others — pinned by the user — stay, as the intercept does,
    and count among the ``keep``). ``Hinv``, ``w`` and ``alive`` are changed in place."""
    size = Hinv.shape[0]
    column = np.empty(size)
    for step in range(m - keep):
        q = -1
        best = np.inf
        for j in range(m):
            if alive[j]:
                saliency = w[j] * w[j] / (2.0 * max(Hinv[j, j], 1e-300))
                if saliency < best:
                    best = saliency
                    q = j
        for a in range(size):
            column[a] = Hinv[a, q]
        pivot = column[q]
        ratio = w[q] / pivot
        for a in range(size):
            w[a] -= ratio * column[a]
        for a in range(size):
            ca = column[a] / pivot
            for c in range(size):
                Hinv[a, c] -= ca * column[c]
        alive[q] = False
        score[q] = float(step)
        w[q] = 0.0
