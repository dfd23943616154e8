"""Numba hot loops. Each has a plain-numpy twin in :mod:`explorer.kernels._reference` that the
tests compare it with. All compile with ``cache=True`` and release the GIL (``nogil=True``) so
a UI thread stays responsive while a worker thread runs them."""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = dict(nogil=True, cache=True, fastmath=False)


@nb.njit(**_JIT)
def csr_xts(data, indices, indptr, s, out, start, stop):
    """out[j] = Σ_i X_ij s_i over the rows start ≤ i < stop of a CSR matrix (one pass over
    their non-zeros)."""
    out[:] = 0.0
    for i in range(start, stop):
        si = s[i]
        if si == 0.0:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += data[k] * si
    return out


@nb.njit(**_JIT)
def csc_xts(data, indices, indptr, s, out, start, stop):
    """out[j] = Σ_i X_ij s_i for the columns start ≤ j < stop of a CSC matrix."""
    for j in range(start, stop):
        acc = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            acc += data[k] * s[indices[k]]
        out[j] = acc
    return out


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def flat_sum(values, start, stop):
    """Σ values[start:stop] in float64 (SIMD partial sums); NaN or ±inf if any entry is."""
    part = values[start:stop]  # indices from 0: no wrap-around test, the loop vectorises
    total = 0.0
    for i in range(part.shape[0]):
        total += np.float64(part[i])
    return total


@nb.njit(**_JIT)
def csr_weighted_gram(data, indices, indptr, d, G, v):
    """G = AᵀDA and v = Aᵀd for a CSR A with sorted rows and D = diag(d), one pass over the
    rows (work Σ_i nnz_i², not a sparse product's symbolic pass and temporaries). Each sum
    runs over the rows in order, as scipy's CSR product computes (x_ij·(x_il·d_i)), so both
    give the same matrix to the last bit (G is not symmetrised: G[j, l] and G[l, j] differ in
    rounding there too)."""
    G[:, :] = 0.0
    v[:] = 0.0
    for i in range(indptr.shape[0] - 1):
        di = d[i]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            xij = data[p]
            v[j] += xij * di
            for q in range(indptr[i], indptr[i + 1]):
                G[j, indices[q]] += xij * (data[q] * di)
    return G, v


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def dense_column_sums(X, row_major, sums, sq, r, dot):
    """sums[j] = Σ_i X_ij and sq[j] = Σ_i X_ij² in one pass over a dense X (float64
    accumulators whatever X's precision), in X's own memory order; with ``r`` of X's row count
    (not empty) also dot[j] = Σ_i X_ij r_i, Xᵀr in the same pass."""
    n, m = X.shape
    product = r.shape[0] > 0
    sums[:] = 0.0
    sq[:] = 0.0
    if product:
        dot[:] = 0.0
    if row_major:
        # four rows per sweep: a quarter of the loads and stores of the accumulators
        n4 = n - n % 4
        for i in range(0, n4, 4):
            r0 = r1 = r2 = r3 = 0.0
            if product:
                r0, r1, r2, r3 = r[i], r[i + 1], r[i + 2], r[i + 3]
            for j in range(m):  # (the loop-invariant test below is hoisted by LLVM)
                a = np.float64(X[i, j])
                b = np.float64(X[i + 1, j])
                c = np.float64(X[i + 2, j])
                d = np.float64(X[i + 3, j])
                sums[j] += (a + b) + (c + d)
                sq[j] += (a * a + b * b) + (c * c + d * d)
                if product:
                    dot[j] += (a * r0 + b * r1) + (c * r2 + d * r3)
        for i in range(n4, n):
            for j in range(m):
                v = np.float64(X[i, j])
                sums[j] += v
                sq[j] += v * v
                if product:
                    dot[j] += v * r[i]
    else:
        for j in range(m):
            a = 0.0
            b = 0.0
            c = 0.0
            for i in range(n):
                v = np.float64(X[i, j])
                a += v
                b += v * v
                if product:
                    c += v * r[i]
            sums[j] = a
            sq[j] = b
            if product:
                dot[j] = c


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def dense_matmul_f64(X, row_major, W, out):
    """out = X W with float64 accumulation, reading a dense X (float32 or float64) once in its
    own memory order and without a float64 copy of it."""
    n, m = X.shape
    c = W.shape[1]
    out[:] = 0.0
    if row_major:
        for i in range(n):
            for k in range(c):
                acc = 0.0
                for j in range(m):
                    acc += np.float64(X[i, j]) * W[j, k]
                out[i, k] = acc
    else:
        for j in range(m):
            for k in range(c):
                wk = W[j, k]
                if wk != 0.0:
                    for i in range(n):
                        out[i, k] += np.float64(X[i, j]) * wk


@nb.njit(**_JIT)
def group_sumsq(values, ptr, members, weights, out):
    """out[g] = weights[g]² Σ_{j ∈ G_g} values[j]² with groups given CSR-style
    (members[ptr[g]:ptr[g+1]]); groups may overlap."""
    p = ptr.shape[0] - 1
    for g in range(p):
        acc = 0.0
        for k in range(ptr[g], ptr[g + 1]):
            v = values[members[k]]
            acc += v * v
        out[g] = weights[g] * weights[g] * acc
    return out


@nb.njit(**_JIT)
def _sift_down(vals, idx, start, size):
    root = start
    while True:
        child = 2 * root + 1
        if child >= size:
            break
        if child + 1 < size and vals[child + 1] < vals[child]:
            child += 1
        if vals[child] < vals[root]:
            vals[root], vals[child] = vals[child], vals[root]
            idx[root], idx[child] = idx[child], idx[root]
            root = child
        else:
            break


@nb.njit(**_JIT)
def _sift_up(vals, idx, pos):
    while pos > 0:
        parent = (pos - 1) // 2
        if vals[pos] < vals[parent]:
            vals[pos], vals[parent] = vals[parent], vals[pos]
            idx[pos], idx[parent] = idx[parent], idx[pos]
            pos = parent
        else:
            break


@nb.njit(**_JIT)
def heap_push_block(heap_vals, heap_idx, size, scores, offset, excluded):
    """Stream ``scores`` (candidate ids ``offset + t``) into a min-heap holding the k largest.

    ``heap_vals``/``heap_idx`` have capacity k; ``size`` is the current fill; entries whose id
    is flagged in ``excluded`` (a bool array over all ids, or length 0) are skipped. Returns
    the new fill. Ties keep the earlier id (strict comparison).
    """
    k = heap_vals.shape[0]
    use_excl = excluded.shape[0] > 0
    for t in range(scores.shape[0]):
        cid = offset + t
        if use_excl and excluded[cid]:
            continue
        v = scores[t]
        if v != v:  # NaN never enters
            continue
        if size < k:  # insert at the end and sift up
            heap_vals[size] = v
            heap_idx[size] = cid
            size += 1
            _sift_up(heap_vals, heap_idx, size - 1)
        elif v > heap_vals[0]:
            heap_vals[0] = v
            heap_idx[0] = cid
            _sift_down(heap_vals, heap_idx, 0, size)
    return size


@nb.njit(**_JIT)
def kth_largest(scores, k, heap, slots):
    """(number of scores above −inf, the k-th largest of them) in one pass: a min-heap of
    values (``heap``, capacity k; ``slots`` its unused position scratch). NaN and −inf never
    count; with fewer than k counted the smallest counted value is returned."""
    size = 0
    count = 0
    for t in range(scores.shape[0]):
        v = scores[t]
        if not v > -np.inf:  # NaN and −inf
            continue
        count += 1
        if size < k:
            heap[size] = v
            size += 1
            _sift_up(heap, slots, size - 1)
        elif v > heap[0]:
            heap[0] = v
            _sift_down(heap, slots, 0, size)
    return count, (heap[0] if size else -np.inf)


@nb.njit(**_JIT)
def dense_take_columns(X, columns, scale, out, start, stop):
    """out[i, t] = X[i, columns[t]]·scale[t] (float64) for rows start ≤ i < stop of a
    row-major X, read row by row (numpy's X[:, columns] on a C-ordered X walks it column by
    column, a cache miss per element)."""
    for i in range(start, stop):
        for t in range(columns.shape[0]):
            out[i, t] = np.float64(X[i, columns[t]]) * scale[t]


@nb.njit(**_JIT)
def dense_take_rows(A, rows, scale, out):
    """out[t, j] = A[rows[t], j]·scale[t], column by column (for Fortran-ordered A and out:
    a gather within each contiguous column)."""
    for j in range(A.shape[1]):
        for t in range(rows.shape[0]):
            out[t, j] = A[rows[t], j] * scale[t]


@nb.njit(**_JIT)
def csr_column_hits(indices, indptr, wanted, hit_nz, hit_row, start, stop):
    """The non-zeros of the rows start ≤ i < stop of a CSR matrix in the columns flagged in
    the bitmap ``wanted`` (bit j of word j // 64), in row order: their index into
    ``indices`` and their row, written while they fit in ``hit_nz`` (the count is returned
    either way). One pass over the column indices; the bitmap (m/8 bytes) stays in cache."""
    cap = hit_nz.shape[0]
    h = 0
    for i in range(start, stop):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if (wanted[j >> 6] >> (j & 63)) & 1:
                if h < cap:
                    hit_nz[h] = k
                    hit_row[h] = i
                h += 1
    return h


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


@nb.njit(**_JIT)
def poly2_block_scores(G, rows_start, sq_weight, pair_weight, out):
    """Squared scores of the degree-2 columns whose first index lies in a block of rows.

    ``G`` (b × m) holds rows ``rows_start … rows_start+b−1`` of Xᵀ diag(s) X. For each row a
    it writes the square column (a, a) and then the pairs (a, c), c > a — the id order of
    :class:`explorer.features.Poly2Space` — into ``out``; returns the number written.
    """
    b, m = G.shape
    t = 0
    for r in range(b):
        a = rows_start + r
        # square term x_a²
        v = sq_weight * G[r, a]
        out[t] = v * v
        t += 1
        for c in range(a + 1, m):
            v = pair_weight * G[r, c]
            out[t] = v * v
            t += 1
    return t


@nb.njit(**_JIT)
def pl_forward(bins, frac, beta, out):
    """Piecewise-linear additive model (FSA §2.5): out[i] = Σ_j (1−a_ij) β_j[b_ij] +
    a_ij β_j[b_ij+1] for bins (n×m int), fractions (n×m) and β (m × (B+1))."""
    n, m = bins.shape
    out[:] = 0.0
    for j in range(m):  # column by column: bins/frac are stored column-major
        for i in range(n):
            b = bins[i, j]
            a = frac[i, j]
            out[i] += (1.0 - a) * beta[j, b] + a * beta[j, b + 1]
    return out


@nb.njit(**_JIT)
def pl_gradient(bins, frac, r, out):
    """Gradient of Σ_i r_i f_i with respect to the piecewise-linear coefficients:
    out[j, b_ij] += r_i (1 − a_ij), out[j, b_ij + 1] += r_i a_ij."""
    n, m = bins.shape
    out[:, :] = 0.0
    for j in range(m):
        for i in range(n):
            b = bins[i, j]
            a = frac[i, j]
            ri = r[i]
            out[j, b] += ri * (1.0 - a)
            out[j, b + 1] += ri * a
    return out


# ----------------------------------------------------------------------------- FGM master
@nb.njit(**_JIT)
def loss_scalar(z, code, h):
    """(l(z), l′(z)) for the table's loss ``code`` (:data:`explorer.optim.losses.NUMBA_CODES`):
    0 squared hinge ½max(0,1−z)², 1 logistic log(1+e^{−z}), 2 Huber-smoothed hinge of
    half-width h, 3 Lorenz ln(1+(z−1)²) for z ≤ 1, 4 squared ½z² of the residual z = f − y."""
    if code == 0:
        xi = 1.0 - z
        if xi > 0:
            return 0.5 * xi * xi, -xi
        return 0.0, 0.0
    if code == 1:
        if z >= 0:
            e = np.exp(-z)
            return np.log1p(e), -e / (1.0 + e)
        e = np.exp(z)
        return -z + np.log1p(e), -1.0 / (1.0 + e)
    if code == 2:
        u = 1.0 - z
        if u > h:
            return u, -1.0
        if u < -h:
            return 0.0, 0.0
        return (u + h) * (u + h) / (4.0 * h), -(u + h) / (2.0 * h)
    if code == 3:
        u = min(z - 1.0, 0.0)
        return np.log1p(u * u), 2.0 * u / (1.0 + u * u)
    return 0.5 * z * z, z


@nb.njit(**_JIT)
def _loss_value(z, code, h=0.0):
    """Σ l(z_i) for the loss ``code`` (see :func:`loss_scalar`)."""
    total = 0.0
    for i in range(z.shape[0]):
        total += loss_scalar(z[i], code, h)[0]
    return total


@nb.njit(**_JIT)
def _loss_derivative(z, code, out, h=0.0):
    for i in range(z.shape[0]):
        out[i] = loss_scalar(z[i], code, h)[1]
    return out


@nb.njit(**_JIT)
def l1sq_scales(norms, step, out):
    """Alg. 3 of Tan et al. (FGM): the per-block scales c_t of the Moreau projection of
    ½(Σ_t‖ω_t‖)² at block norms u (``step`` = 1/τ), written into ``out``. Sort u in decreasing
    order, ρ = max{j : u_j − s/(1+js) Σ_{i≤j} u_i > 0}, ς = s/(1+ρs) Σ_{i≤ρ} u_i,
    c_t = max(u_t − ς, 0)/u_t."""
    T = norms.shape[0]
    order = np.argsort(-norms)
    csum = 0.0
    rho = 0
    total_at_rho = 0.0
    for j in range(T):
        csum += norms[order[j]]
        if norms[order[j]] - step / (1.0 + (j + 1) * step) * csum > 0:
            rho = j + 1
            total_at_rho = csum
    if rho == 0:
        out[:] = 0.0
        return out
    thr = step / (1.0 + rho * step) * total_at_rho
    for t in range(T):
        out[t] = (norms[t] - thr) / norms[t] if norms[t] > thr else 0.0
    return out


@nb.njit(**_JIT)
def scaled_trial(Pv, G, step, scales, out):
    """out_t = (Pv_t − step·G_t)·c_t for every column t: the block products A_t ω_t at an APG
    trial point of FGM's master, from those at the extrapolated point (Pv) and of the gradient
    (G) (the line-search cache of Tan et al. §5.3), with the prox's block scales c."""
    n, T = Pv.shape
    for t in range(T):
        c = scales[t]
        for i in range(n):
            out[i, t] = (G[i, t] * -step + Pv[i, t]) * c
    return out


@nb.njit(**_JIT)
def _block_products(A, bounds, coef, out):
    n = A.shape[0]
    for t in range(bounds.shape[0]):
        for i in range(n):
            out[i, t] = 0.0
        for j in range(bounds[t, 0], bounds[t, 1]):
            c = coef[j]
            if c != 0.0:
                for i in range(n):
                    out[i, t] += A[i, j] * c
    return out


@nb.njit(**_JIT)
def _block_norms(coef, bounds, out):
    for t in range(bounds.shape[0]):
        acc = 0.0
        for j in range(bounds[t, 0], bounds[t, 1]):
            acc += coef[j] * coef[j]
        out[t] = np.sqrt(acc)
    return out


@nb.njit(**_JIT)
def apg_l1sq_dense(A, bounds, y, code, h, C, coef, prev_coef, b, prev_b, t, tau, F,
                   fit_intercept, eta, tol, budget, min_steps, trace, stop):
    """Up to ``budget`` APG steps (backtracking, adaptive restart) for
    ½(Σ_t‖ω_t‖)² + C Σ l(y_i f_i) over a dense column cache: the compiled path of
    :func:`explorer.optim.apg.apg` for FGM's small masters (Alg. 4 of Tan et al. with the
    line-search cache of §5.3), the same iterations as its Python steps. The momentum state
    (coef, prev_coef, b, prev_b, t, tau, F) comes in and goes out; after ``min_steps`` it
    returns early once the relative objective change is at most ``tol``. Writes the objective
    per step into ``trace``; another thread setting ``stop[0]`` to 1 ends it after the current
    step. Returns (coef, prev_coef, b, prev_b, t, tau, F, steps, stalled)."""
    n, W = A.shape
    T = bounds.shape[0]
    coef = coef.copy()
    prev_coef = prev_coef.copy()
    if not fit_intercept:
        b = 0.0
        prev_b = 0.0
    P = np.empty((n, T))
    prev_P = np.empty((n, T))
    _block_products(A, bounds, coef, P)
    _block_products(A, bounds, prev_coef, prev_P)
    z = np.empty(n)
    norms = np.empty(T)
    v = np.empty(W)
    Pv = np.empty((n, T))
    r = np.empty(n)
    grad = np.empty(W)
    G = np.empty((n, T))
    g = np.empty(W)
    scales = np.empty(T)
    new = np.empty(W)
    new_P = np.empty((n, T))
    steps = 0
    stalled = False
    for step in range(1, budget + 1):
        if stop[0] != 0:
            break
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_next
        for j in range(W):
            v[j] = coef[j] + beta * (coef[j] - prev_coef[j])
        bv = b + beta * (b - prev_b)
        for i in range(n):
            acc = bv
            for k in range(T):
                Pv[i, k] = P[i, k] + beta * (P[i, k] - prev_P[i, k])
                acc += Pv[i, k]
            z[i] = y[i] * acc
        pv = C * _loss_value(z, code, h)
        _loss_derivative(z, code, r, h)
        grad_b = 0.0
        for i in range(n):
            r[i] = C * y[i] * r[i]
            grad_b += r[i]
        if not fit_intercept:
            grad_b = 0.0
        for j in range(W):
            acc = 0.0
            for i in range(n):
                acc += A[i, j] * r[i]
            grad[j] = acc
        _block_products(A, bounds, grad, G)
        trial = eta * tau
        p_new = 0.0
        new_b = 0.0
        for _ in range(100):
            for j in range(W):
                g[j] = v[j] - grad[j] / trial
            _block_norms(g, bounds, norms)
            l1sq_scales(norms, 1.0 / trial, scales)
            for k in range(T):
                for j in range(bounds[k, 0], bounds[k, 1]):
                    new[j] = scales[k] * g[j]
            new_b = bv - grad_b / trial if fit_intercept else 0.0
            for i in range(n):
                acc = new_b
                for k in range(T):
                    new_P[i, k] = (Pv[i, k] - G[i, k] / trial) * scales[k]
                    acc += new_P[i, k]
                z[i] = y[i] * acc
            p_new = C * _loss_value(z, code, h)
            dot = 0.0
            dd = 0.0
            for j in range(W):
                d = new[j] - v[j]
                dot += grad[j] * d
                dd += d * d
            db = new_b - bv
            model = pv + dot + grad_b * db + 0.5 * trial * (dd + db * db)
            if p_new <= model + 4e-16 * max(1.0, abs(model)):
                break
            trial /= eta
        tau = trial
        _block_norms(new, bounds, norms)
        s = 0.0
        for k in range(T):
            s += norms[k]
        F_new = p_new + 0.5 * s * s
        prev_coef[:] = coef
        prev_P[:, :] = P
        prev_b = b
        coef[:] = new
        P[:, :] = new_P
        b = new_b
        t = 1.0 if F_new > F else t_next
        change = abs(F - F_new)
        F = F_new
        trace[step - 1] = F_new
        steps = step
        if step >= min_steps and change <= tol * max(abs(F_new), 1e-300):
            stalled = True
            break
    return coef, prev_coef, b, prev_b, t, tau, F, steps, stalled


@nb.njit(**_JIT)
def _lp_ball_coords(a, lam, p, z):
    """z_i ∈ [0, a_i] with z_i + λ p z_i^{p−1} = a_i (safeguarded Newton, bisection fallback)."""
    for i in range(a.shape[0]):
        ai = a[i]
        if ai == 0.0:
            z[i] = 0.0
            continue
        lo, hi = 0.0, ai
        x = 0.5 * ai
        for _ in range(200):
            f = x + lam * p * x ** (p - 1.0) - ai
            if f > 0.0:
                hi = x
            else:
                lo = x
            if hi - lo <= 1e-15 * ai:
                break
            df = 1.0 + lam * p * (p - 1.0) * x ** (p - 2.0) if x > 0.0 else np.inf
            nx = x - f / df
            x = nx if lo < nx < hi else 0.5 * (lo + hi)
        z[i] = x
    return z


@nb.njit(**_JIT)
def _pnorm(z, p):
    s = 0.0
    for i in range(z.shape[0]):
        s += z[i] ** p
    return s ** (1.0 / p)


@nb.njit(**_JIT)
def lp_ball_projection(v, radius, p):
    """Euclidean projection of v onto {x : ‖x‖_p ≤ radius} for 1 < p < ∞.

    KKT: x_i = sign(v_i) z_i with z_i + λ p z_i^{p−1} = |v_i|; ‖z(λ)‖_p decreases in λ, which
    is found by bracketing and bisection in log scale."""
    a = np.abs(v)
    out = np.empty_like(v)
    if radius <= 0.0:
        out[:] = 0.0
        return out
    if _pnorm(a, p) <= radius:
        out[:] = v
        return out
    z = np.empty_like(a)
    lo, hi = 0.0, 1.0
    while _pnorm(_lp_ball_coords(a, hi, p, z), p) > radius:
        lo = hi
        hi *= 4.0
    if lo == 0.0:
        lo = hi
        while _pnorm(_lp_ball_coords(a, lo, p, z), p) <= radius and lo > 1e-300:
            hi = lo
            lo *= 0.25
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        if _pnorm(_lp_ball_coords(a, mid, p, z), p) > radius:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-14 * hi:
            break
    _lp_ball_coords(a, hi, p, z)
    for i in range(v.shape[0]):
        out[i] = z[i] if v[i] >= 0.0 else -z[i]
    return out


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


# SIMD sums, IEEE otherwise; numpy's error model: a division is not checked for a zero
# divisor (none can be zero here), which is what lets the per-example loops vectorise
@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _fsa_outputs(X, row_major, mean, scale, beta, alive, b, w, cols, f):
    """f = Zβ + b for the alive columns of the implicitly standardised working matrix;
    returns how many columns moved it (their products were taken)."""
    n, W = X.shape
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
    if row_major and n_moving > 0:
        for i in range(n):
            acc = 0.0
            for j in range(W):
                acc += X[i, j] * w[j]
            f[i] = acc + offset
    else:  # (β = 0, the first step, needs no pass)
        for i in range(n):
            f[i] = offset
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


@nb.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def fsa_dense_steps(X, row_major, y, code, h, weight, curv, mean, scale, beta, alive, b, eta,
                    eta_max, rule, max_halvings, slack, ridge, fit_intercept, schedule, e0, budget,
                    first, compact_at, stop, g0, loss_out, beta_out, alive_out, b_out, eta_out,
                    work, priority, positive):
    """Up to ``budget`` iterations of FSA's Algorithm 1 (Barbu et al.) on a dense working
    matrix X (n × W, standardised implicitly by ``mean``/``scale``): gradient step with the
    ridge prior's exact prox, keep the ``schedule[e]`` largest |β| of the alive columns (ties:
    the earlier column), the step size chosen by :func:`fsa_next_eta` (cut until the new model
    lies under the data term's quadratic majoriser, doubled after steps accepted at once, at
    most ``eta_max``; ``rule`` its state, updated in place;
    ``slack``: the test's rounding allowance relative to the values; ``curv``: the data
    term's curvature bound per example, its weight times the loss's). The compiled path of
    ``AnnealingRun._step``, the same arithmetic (sums reassociated for SIMD); ``beta``,
    ``alive`` (W,) are updated in place. ``g0`` (W values, or none): Xᵀr of the first
    iteration, already taken (FSA's first pass over X computes it with the moments).
    What the user knows: the kill ranks |β_j|·``priority[j]`` (1 / the penalty factor; ``inf``
    never killed); ``positive`` projects each step onto β ≥ 0.

    Writes per step the loss before it, β, the alive mask, the intercept and η after it;
    adds to ``work`` the matrix cells its products read (``work[0]``) and the trial steps the
    majoriser test rejected (``work[1]``).
    Stops early when the loss is not finite or exceeds 1e3·``first`` (status 1), no halving
    gives a finite step under the majoriser (status 1, that step not written), another
    thread sets ``stop[0]`` (status 2), or ``compact_at`` columns are dead.
    Returns (b, steps written, status, first, η for the next step, objective of the final
    model)."""
    n, W = X.shape
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
    n_moving = _fsa_outputs(X, row_major, mean, scale, beta, alive, b, w, cols, f)
    work[0] += n * (W if row_major and n_moving > 0 else n_moving)
    data, rsum = _fsa_data_term(f, y, code, h, weight, r, scratch)
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
        elif row_major:
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
            _columns_dot(X, moving, q, r, g)
            work[0] += n * q
        for j in range(W):
            if alive[j]:
                g[j] = (g[j] - mean[j] * rsum) / scale[j]
        gb = rsum if fit_intercept else 0.0
        M = schedule[e0 + k]
        accepted = False
        cut = False
        b_c = b
        data_c = rsum_c = 0.0
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
            n_moving = _fsa_outputs(X, row_major, mean, scale, beta_c, alive_c, b_c, w, cols, fc)
            work[0] += n * (W if row_major and n_moving > 0 else n_moving)
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
