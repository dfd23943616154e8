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


# the loss table's kernels, for the engines' compiled loops (FGM's APG, FSA's steps)
loss_value = _loss_value
loss_derivative_into = _loss_derivative


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
