"""FSA's compiled annealing steps (Algorithm 1 of Barbu et al. on a dense or CSC working
matrix) and its step-size rule, beside its engine; the shared loss kernels stay in
:mod:`explorer.kernels`."""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ...kernels import loss_scalar

_JIT = dict(nogil=True, cache=True, fastmath=False)


# ----------------------------------------------------------------------------- FSA steps
_SHIFT = 6755399441055744.0  # 1.5·2⁵²: adding it rounds to an integer kept in the low bits
_SHIFT_BITS = 0x4338000000000000
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2 split so that k·_LN2_HI is exact for |k| < 2¹¹
_LN2_LO = 1.9082149292705877e-10


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _exp_neg_inplace(v, work):
    """v[i] ← exp(−v[i]) for v ≥ 0, in loops that vectorise (LLVM calls libm's exp one
    element at a time): exp(x) = 2ᵏ·exp(r), k = round(x/ln 2), |r| ≤ ln 2 / 2 (Cody–Waite),
    exp(r) by its Taylor polynomial to degree 13 (truncation < 1e-17), 2ᵏ built in the exponent
    bits. Within 2.3e-16 relative of libm; arguments above 708 give 3.3e-308 (≈ 0) instead of
    a subnormal. ``work`` is a float64 scratch of v's length."""
    n = v.shape[0]
    bits = work.view(np.int64)
    for i in range(n):
        x = -min(v[i], 708.0)
        shifted = x * _LOG2E + _SHIFT
        work[i] = shifted
        k = shifted - _SHIFT
        r = (x - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        v[i] = p * r + 1.0
    for i in range(n):
        bits[i] = (bits[i] - _SHIFT_BITS + 1023) << 52
    for i in range(n):
        v[i] *= work[i]


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _columns_times(X, cols, count, w, f):
    """f += X[:, cols[:count]] @ w[cols[:count]] on a column-major X, four columns per sweep
    over f (one load and store of f per four columns instead of per column)."""
    n = X.shape[0]
    q = 0
    while q + 4 <= count:
        j0, j1, j2, j3 = cols[q], cols[q + 1], cols[q + 2], cols[q + 3]
        w0, w1, w2, w3 = w[j0], w[j1], w[j2], w[j3]
        for i in range(n):
            f[i] += X[i, j0] * w0 + X[i, j1] * w1 + X[i, j2] * w2 + X[i, j3] * w3
        q += 4
    while q < count:
        j = cols[q]
        wj = w[j]
        for i in range(n):
            f[i] += X[i, j] * wj
        q += 1


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _columns_dot(X, cols, count, r, g):
    """g[cols[:count]] = X[:, cols[:count]]ᵀ r on a column-major X, four columns per sweep
    over r."""
    n = X.shape[0]
    q = 0
    while q + 4 <= count:
        j0, j1, j2, j3 = cols[q], cols[q + 1], cols[q + 2], cols[q + 3]
        a0 = a1 = a2 = a3 = 0.0
        for i in range(n):
            ri = r[i]
            a0 += X[i, j0] * ri
            a1 += X[i, j1] * ri
            a2 += X[i, j2] * ri
            a3 += X[i, j3] * ri
        g[j0], g[j1], g[j2], g[j3] = a0, a1, a2, a3
        q += 4
    while q < count:
        j = cols[q]
        acc = 0.0
        for i in range(n):
            acc += X[i, j] * r[i]
        g[j] = acc
        q += 1


@nb.njit(nogil=True, cache=True)
def _csc_columns_times(data, indices, indptr, cols, count, w, f):
    """f += X[:, cols[:count]] @ w[cols[:count]] on a CSC X (its stored values only)."""
    for q in range(count):
        j = cols[q]
        wj = w[j]
        for p in range(indptr[j], indptr[j + 1]):
            f[indices[p]] += data[p] * wj


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _csc_columns_dot(data, indices, indptr, cols, count, r, g):
    """g[cols[:count]] = X[:, cols[:count]]ᵀ r on a CSC X (its stored values only)."""
    for q in range(count):
        j = cols[q]
        acc = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            acc += data[p] * r[indices[p]]
        g[j] = acc


ROW_MAJOR, COLUMN_MAJOR, CSC = 0, 1, 2  # the working matrix's storage (WorkingDesign.layout)


@nb.njit(nogil=True, cache=True)
def _same_columns(a, b):
    """Whether two alive masks are equal."""
    for j in range(a.shape[0]):
        if a[j] != b[j]:
            return False
    return True


@nb.njit(nogil=True, cache=True)
def _cells(design, cols, count, n):
    """Matrix cells one product over the working columns ``cols[:count]`` reads: every
    column of a row-major matrix, the given ones of a column-major one, their stored values
    when CSC."""
    layout, indptr = design[1], design[6]
    if layout == ROW_MAJOR:
        return n * design[2].shape[0] if count > 0 else 0
    if layout == COLUMN_MAJOR:
        return n * count
    total = 0
    for q in range(count):
        total += indptr[cols[q] + 1] - indptr[cols[q]]
    return total


# SIMD sums, IEEE otherwise; numpy's error model: a division is not checked for a zero
# divisor (none can be zero here), which is what lets the per-example loops vectorise
@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _fsa_outputs(design, beta, alive, b, w, cols, f):
    """f = Zβ + b for the alive columns of the implicitly standardised working matrix
    (:class:`WorkingDesign`); returns how many columns moved it (their products were
    taken), listed first in ``cols``."""
    X, layout, mean, scale, data, indices, indptr = design
    n, W = f.shape[0], mean.shape[0]
    offset = b
    n_moving = 0
    for j in range(W):
        if alive[j]:
            w[j] = beta[j] / scale[j]
            offset -= mean[j] * w[j]
            cols[n_moving] = j  # compacted to the moving ones
            n_moving += w[j] != 0.0
        else:
            w[j] = 0.0
    if layout == ROW_MAJOR and n_moving > 0:
        for i in range(n):
            acc = 0.0
            for j in range(W):
                acc += X[i, j] * w[j]
            f[i] = acc + offset
    else:  # (β = 0, the first step, needs no pass)
        for i in range(n):
            f[i] = offset
        if layout == CSC:
            _csc_columns_times(data, indices, indptr, cols, n_moving, w, f)
        else:
            _columns_times(X, cols, n_moving, w, f)
    return n_moving


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _fsa_data_term(f, y, code, h, weight, r, scratch):
    """(the mean loss at outputs f, Σ r) with r the loss's derivative per example."""
    n = f.shape[0]
    total = 0.0
    rsum = 0.0
    if code == 1:
        # Σ log(1 + e^{−|z|}) as the log of products of up to 256 factors in (1, 2]: one
        # log per 256 examples instead of one each (the loss is evaluated every iteration);
        # branch-free, so that the signs of the margins cost no mispredictions and the
        # loops vectorise
        for i in range(n):
            r[i] = abs(y[i] * f[i])
        _exp_neg_inplace(r, scratch)
        for i0 in range(0, n, 256):
            product = 1.0
            for i in range(i0, min(n, i0 + 256)):
                product *= 1.0 + r[i]
            total += np.log(product)
        for i in range(n):
            z = y[i] * f[i]
            e = r[i]
            total -= min(z, 0.0)
            r[i] = -weight * y[i] * (1.0 if z < 0 else e) / (1.0 + e)
            rsum += r[i]
    else:
        for i in range(n):
            if code == 4:
                value, d = loss_scalar(f[i] - y[i], code, h)
            else:
                value, d = loss_scalar(y[i] * f[i], code, h)
                d *= y[i]
            total += value
            r[i] = weight * d
            rsum += r[i]
    return weight * total, rsum


REJECTED, AT_ONCE, AFTER_CUTS = 0, 1, 2  # what became of a trial step (fsa_next_eta)
MAX_WAIT = 64.0  # most steps accepted at once that FSA's η waits for before doubling again


@nb.njit(nogil=True, cache=True)
def fsa_next_eta(eta, eta_max, outcome, bound, rule):
    """FSA's step size after a trial step d of size η. ``rule`` holds the rule's state:
    [steps accepted at once since the last change, the number of them to wait for before
    doubling, whether this step's η was just doubled]. A ``REJECTED`` step is retried at
    η/2ʲ, the first halving at or below 1/``bound`` — ``bound`` = l″_max·Σ_i(Δf_i)²/‖d‖² (Δf
    the outputs' change along d, l″_max the loss's curvature bound) bounds the data term's
    curvature anywhere along that direction, so the retry is a step it certainly allows
    (from β = 0, where the logistic loss is at its most curved, the bound is attained: the
    first step's search ends after one cut instead of halving η = 20 seven times); a doubling
    rejected at once doubles the wait before the next one (up to ``MAX_WAIT`` steps), so a
    curvature that the doubled step exceeds — the squared loss's, constant — costs a few
    rejected trials, not one every other step. After ``AT_ONCE`` acceptances for the wait, η
    doubles, up to ``eta_max`` (a doubling that holds resets the wait to one step);
    ``AFTER_CUTS`` keeps η. η stays η_max/2ʲ: the same steps for every storage of X. The
    backtracking of proximal gradient methods (Beck & Teboulle 2009)."""
    if outcome == REJECTED:
        if rule[2] != 0.0:
            rule[1] = min(2.0 * rule[1], MAX_WAIT)
            rule[2] = 0.0
        rule[0] = 0.0
        cut = 0.5 * eta
        if bound > 0.0 and bound < np.inf:
            while cut > 1.0 / bound and cut > 1e-300:
                cut *= 0.5
        return cut
    if outcome == AFTER_CUTS:
        rule[0] = 0.0
        rule[2] = 0.0
        return eta
    if rule[2] != 0.0:
        rule[1] = 1.0
        rule[2] = 0.0
    rule[0] += 1.0
    if rule[0] >= rule[1] and eta < eta_max:
        rule[0] = 0.0
        rule[2] = 1.0
        return min(eta_max, 2.0 * eta)
    return eta


class WorkingDesign(NamedTuple):
    """FSA's working matrix (n × W), standardised implicitly: column j is (x_j − ``mean[j]``)
    / ``scale[j]``. Dense in ``X`` (``layout`` ``ROW_MAJOR`` or ``COLUMN_MAJOR``; the CSC
    arrays empty), or CSC in ``data``, ``indices``, ``indptr`` (``layout`` ``CSC``; ``X`` a
    placeholder): the steps of a column-major or CSC matrix read only its alive columns."""

    X: np.ndarray
    layout: int
    mean: np.ndarray
    scale: np.ndarray
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray


class DataTerm(NamedTuple):
    """The data term: labels or targets ``y``, the loss by its kernel ``code`` and parameter
    ``h``, its ``weight`` (1/n) and ``curvature``, the bound per example on its second
    derivative times the weight."""

    y: np.ndarray
    code: int
    h: float
    weight: float
    curvature: float


class StepState(NamedTuple):
    """The model and the step rule when a chunk starts: ``beta`` and ``alive`` (W, updated in
    place), the intercept ``b``, the next step size ``eta``, the rule's state ``rule`` (see
    :func:`fsa_next_eta`) and the objective ``first`` of the first step (NaN before it)."""

    beta: np.ndarray
    alive: np.ndarray
    b: float
    eta: float
    rule: np.ndarray
    first: float


class Knobs(NamedTuple):
    """Algorithm 1's knobs on this working matrix: the ridge prior, the intercept, the
    schedule M_e, and what the user knows: ``priority[j]`` multiplies |β_j| in the kill
    ranking (1 / the penalty factor; ``inf``: never killed), ``positive`` projects each step
    onto β ≥ 0."""

    ridge: float
    fit_intercept: bool
    schedule: np.ndarray
    priority: np.ndarray
    positive: bool


class ChunkPlan(NamedTuple):
    """A chunk of iterations: from schedule index ``e0``, at most ``budget`` steps, until
    ``compact_at`` columns are dead; η at most ``eta_max``, at most ``max_halvings`` cuts of a
    step, ``slack`` the majoriser test's rounding allowance relative to the values."""

    e0: int
    budget: int
    compact_at: int
    eta_max: float
    max_halvings: int
    slack: float


class ChunkOut(NamedTuple):
    """Per step: the loss before it, β, the alive mask, the intercept and η after it; and
    ``work``: the matrix cells the products read (``work[0]``) and the trial steps the
    majoriser test rejected (``work[1]``), added to."""

    loss: np.ndarray
    beta: np.ndarray
    alive: np.ndarray
    b: np.ndarray
    eta: np.ndarray
    work: np.ndarray


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def fsa_compiled_steps(design, data, state, knobs, plan, out, g0, stop):
    """Up to ``plan.budget`` iterations of FSA's Algorithm 1 (Barbu et al.) on an in-memory
    working matrix, dense or CSC (:class:`WorkingDesign`): gradient step with the ridge
    prior's exact prox, keep the ``schedule[e]`` largest |β| of the alive columns (ties: the
    earlier column), the step size chosen by :func:`fsa_next_eta` (cut until the new model
    lies under the data term's quadratic majoriser, doubled after steps accepted at once, at
    most ``eta_max``). The
    compiled path of ``AnnealingRun._step``, the same arithmetic (sums reassociated for SIMD);
    ``state.beta``, ``state.alive`` and ``state.rule`` are updated in place. ``g0`` (W values,
    or none): Xᵀr of the first iteration, already taken (FSA's first pass over X computes it
    with the moments). What the user knows enters through :class:`Knobs`. From β = 0 (the
    start) a rejected trial's retry needs no product: every trial there is a multiple of the
    gradient on the same columns, so its outputs are the rejected ones rescaled.

    Writes each step into ``out`` (:class:`ChunkOut`).
    Stops early when the loss is not finite or exceeds 1e3·``first`` (status 1), no halving
    gives a finite step under the majoriser (status 1, that step not written), another
    thread sets ``stop[0]`` (status 2), or ``compact_at`` columns are dead.
    Returns (b, steps written, status, first, η for the next step, objective of the final
    model)."""
    X, layout, mean, scale, csc_data, csc_indices, csc_indptr = design
    y, code, h, weight, curv = data
    beta, alive, b, eta, rule, first = state
    ridge, fit_intercept, schedule, priority, positive = knobs
    e0, budget, compact_at, eta_max, max_halvings, slack = plan
    loss_out, beta_out, alive_out, b_out, eta_out, work = out
    n, W = y.shape[0], mean.shape[0]
    f = np.empty(n)
    r = np.empty(n)
    fc = np.empty(n)
    rc = np.empty(n)
    scratch = np.empty(n)
    w = np.empty(W)
    g = np.empty(W)
    beta_c = np.empty(W)
    alive_c = np.empty(W, dtype=np.bool_)
    cols = np.empty(W, dtype=np.int64)  # the alive columns (column-major products)
    moving = np.empty(W, dtype=np.int64)
    n_alive = 0
    for j in range(W):
        if alive[j]:
            n_alive += 1
    n_moving = _fsa_outputs(design, beta, alive, b, w, cols, f)
    work[0] += _cells(design, cols, n_moving, n)
    data, rsum = _fsa_data_term(f, y, code, h, weight, r, scratch)
    at_zero = n_moving == 0  # β = 0 on every alive column (Algorithm 1's start)
    tried = np.empty(W, dtype=np.bool_)  # the last rejected trial's alive columns
    steps = 0
    status = 0
    for k in range(budget):
        if stop[0] != 0:
            status = 2
            break
        prior = 0.0
        for j in range(W):
            if alive[j]:
                prior += beta[j] * beta[j]
        loss = data + ridge * prior
        if np.isnan(first):
            first = loss
        if not np.isfinite(loss) or loss > 1e3 * max(first, 1e-12):
            status = 1
            break
        if k == 0 and g0.size == W:
            for j in range(W):
                g[j] = g0[j]
        elif layout == ROW_MAJOR:
            for j in range(W):
                g[j] = 0.0
            for i in range(n):
                ri = r[i]
                for j in range(W):
                    g[j] += X[i, j] * ri
            work[0] += n * W
        else:
            q = 0
            for j in range(W):
                if alive[j]:
                    moving[q] = j
                    q += 1
            if layout == CSC:
                _csc_columns_dot(csc_data, csc_indices, csc_indptr, moving, q, r, g)
            else:
                _columns_dot(X, moving, q, r, g)
            work[0] += _cells(design, moving, q, n)
        for j in range(W):
            if alive[j]:
                g[j] = (g[j] - mean[j] * rsum) / scale[j]
        gb = rsum if fit_intercept else 0.0
        M = schedule[e0 + k]
        accepted = False
        cut = False
        b_c = b
        data_c = rsum_c = 0.0
        scaled = b_trial = 0.0  # η/(1 + 2η·ridge) and b of the last rejected trial (0: none)
        for _halving in range(max_halvings):
            denom = 1.0 + 2.0 * eta * ridge
            big = 0.0
            finite = True
            for j in range(W):
                alive_c[j] = alive[j]
                beta_c[j] = (beta[j] - eta * g[j]) / denom if alive[j] else 0.0
                if positive and beta_c[j] < 0.0:
                    beta_c[j] = 0.0
            b_c = b - eta * gb
            if n_alive > M:
                ids = np.empty(n_alive, dtype=np.int64)
                size = np.empty(n_alive)
                q = 0
                for j in range(W):
                    if alive[j]:
                        ids[q] = j
                        size[q] = -np.inf if priority[j] == np.inf else \
                            -abs(beta_c[j]) * priority[j]
                        q += 1
                # the M largest |β| (ties: the earlier column), by selection, not a sort
                threshold = np.partition(size, M - 1)[M - 1]
                room = M
                for q in range(n_alive):
                    room -= size[q] < threshold
                for q in range(n_alive):
                    if size[q] < threshold:
                        continue
                    if size[q] == threshold and room > 0:
                        room -= 1
                        continue
                    j = ids[q]
                    alive_c[j] = False
                    beta_c[j] = 0.0
            for j in range(W):
                if alive_c[j]:
                    a = abs(beta_c[j])
                    if not np.isfinite(a):
                        finite = False
                    elif a > big:
                        big = a
            if not finite or big > 1e150:
                break
            if scaled > 0.0 and _same_columns(alive_c, tried):
                # from β = 0 every trial is −η/(1 + 2η·ridge)·∇ on the same columns (the
                # kill ranks |∇|, whatever η): its outputs are the rejected trial's, rescaled
                ratio = (eta / denom) / scaled
                for i in range(n):
                    fc[i] = b_c + ratio * (fc[i] - b_trial)
            else:
                n_moving = _fsa_outputs(design, beta_c, alive_c, b_c, w, cols, fc)
                work[0] += _cells(design, cols, n_moving, n)
            data_c, rsum_c = _fsa_data_term(fc, y, code, h, weight, rc, scratch)
            lin = 0.0
            sq = 0.0
            for j in range(W):
                if alive[j]:
                    d = beta_c[j] - beta[j]
                    lin += g[j] * d
                    sq += d * d
            db = b_c - b
            norm2 = sq + db * db
            bound = data + lin + gb * db + norm2 / (2.0 * eta)
            if data_c <= bound + slack * max(abs(data), abs(data_c)) + 1e-300:
                accepted = True
                break
            moved = 0.0
            for i in range(n):
                moved += (fc[i] - f[i]) * (fc[i] - f[i])
            if at_zero:
                scaled, b_trial = eta / denom, b_c
                for j in range(W):
                    tried[j] = alive_c[j]
            eta = fsa_next_eta(eta, eta_max, REJECTED,
                               curv * moved / norm2 if norm2 > 0 else 0.0, rule)
            cut = True
            work[1] += 1
        if not accepted:
            status = 1
            break
        for j in range(W):
            alive[j] = alive_c[j]
            beta[j] = beta_c[j]
        b = b_c
        n_alive = min(n_alive, M)
        at_zero = False
        f, fc = fc, f
        r, rc = rc, r
        data, rsum = data_c, rsum_c
        loss_out[k] = loss
        beta_out[k, :] = beta
        alive_out[k, :] = alive
        b_out[k] = b
        eta_out[k] = eta
        eta = fsa_next_eta(eta, eta_max, AFTER_CUTS if cut else AT_ONCE, 0.0, rule)
        steps = k + 1
        if W - n_alive >= compact_at:
            break
    prior = 0.0
    for j in range(W):
        if alive[j]:
            prior += beta[j] * beta[j]
    return b, steps, status, first, eta, data + ridge * prior
