"""Numba hot loops. Each has a plain-numpy twin in :mod:`explorer.kernels._reference` that the
tests compare it with. All compile with ``cache=True`` and release the GIL (``nogil=True``) so
a UI thread stays responsive while a worker thread runs them."""

from __future__ import annotations

import numba as nb

_JIT = dict(nogil=True, cache=True, fastmath=False)


@nb.njit(**_JIT)
def csr_xts(data, indices, indptr, s, out):
    """out[j] = Σ_i X_ij s_i for a CSR matrix (one pass over the non-zeros)."""
    out[:] = 0.0
    n = indptr.shape[0] - 1
    for i in range(n):
        si = s[i]
        if si == 0.0:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += data[k] * si
    return out


@nb.njit(**_JIT)
def csc_xts(data, indices, indptr, s, out):
    """out[j] = Σ_i X_ij s_i for a CSC matrix (column by column)."""
    m = indptr.shape[0] - 1
    for j in range(m):
        acc = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            acc += data[k] * s[indices[k]]
        out[j] = acc
    return out


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
        if size < k:
            # insert at the end and sift up
            pos = size
            heap_vals[pos] = v
            heap_idx[pos] = cid
            size += 1
            while pos > 0:
                parent = (pos - 1) // 2
                if heap_vals[pos] < heap_vals[parent]:
                    heap_vals[pos], heap_vals[parent] = heap_vals[parent], heap_vals[pos]
                    heap_idx[pos], heap_idx[parent] = heap_idx[parent], heap_idx[pos]
                    pos = parent
                else:
                    break
        elif v > heap_vals[0]:
            heap_vals[0] = v
            heap_idx[0] = cid
            _sift_down(heap_vals, heap_idx, 0, size)
    return size


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
