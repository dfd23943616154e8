"""Numba kernels against their plain-numpy twins."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.kernels import GroupIndex, TopK, _numba, take_columns, top_k, xts
from explorer.kernels import _reference as ref
from tests.conftest import as_layout


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_xts_matches_reference(layout, dtype):
    rng = np.random.default_rng(0)
    X = sp.random(120, 300, density=0.1, random_state=1).toarray()
    s = rng.normal(size=120)
    got = xts(as_layout(X, layout, dtype), s)
    assert got.dtype == np.float64 and got.shape == (300,)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, ref.xts(X, s), rtol=tol, atol=tol)


@pytest.mark.parametrize("layout", ["csr", "csc", "coo"])
@pytest.mark.parametrize("threads", [2, 3])
def test_sparse_xts_split_over_threads_matches_reference(monkeypatch, layout, threads):
    # a large sparse product is split by non-zeros over threads (CSR: per-thread outputs
    # summed; CSC: disjoint column ranges); some rows and columns are empty
    import explorer.kernels as kernels

    monkeypatch.setattr(kernels, "PART_NNZ", 500)
    monkeypatch.setattr(kernels, "_cores", lambda: threads)
    X = sp.random(200, 400, density=0.05, random_state=2, format="csr")
    X = sp.csr_matrix(X.multiply(np.arange(200)[:, None] % 7 != 0))  # empty rows
    s = np.random.default_rng(3).normal(size=200)
    s[::5] = 0.0
    out = np.full(400, np.nan)
    got = xts(X.asformat(layout), s, out=out)
    assert got is out
    np.testing.assert_allclose(got, ref.xts(X, s), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_sparse_xts_refuses_a_signal_of_the_wrong_length(layout):
    X = sp.random(30, 8, density=0.3, random_state=0, format=layout)
    for s in (np.ones(29), np.ones(31), np.ones((30, 2))):
        with pytest.raises(ValueError, match="one value per row of X"):
            xts(X, s)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_total_is_the_float64_sum_and_carries_any_nan_or_inf(monkeypatch, threads, dtype,
                                                             order):
    # the finiteness check of every fit: split over threads, any part's NaN/inf must reach
    # the result, float32 entries are summed in float64
    import explorer.kernels as kernels

    monkeypatch.setattr(kernels, "PART_NNZ", 50)
    monkeypatch.setattr(kernels, "_cores", lambda: threads)
    X = np.asarray(np.random.default_rng(0).normal(size=(37, 11)), dtype=dtype, order=order)
    expected = float(X.astype(np.float64).sum())
    assert kernels.total(X) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert kernels.total(X[:0]) == 0.0
    big = np.full((4, 3), np.finfo(np.float32).max, dtype=dtype, order=order)
    assert kernels.total(big) == pytest.approx(12 * float(np.finfo(np.float32).max))
    for (i, j), bad in zip([(0, 0), (36, 10), (18, 5)], [np.nan, np.inf, -np.inf]):
        Y = X.copy(order=order)
        Y[i, j] = bad
        got = kernels.total(Y)
        assert np.isnan(got) if np.isnan(bad) else got == bad


@pytest.mark.parametrize("layout", ["csr", "csc", "unsorted"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_weighted_gram_is_the_sparse_hessian(layout, dtype):
    # Newton's AᵀDA and Aᵀd on a sparse cache: the dense reference to rounding, and scipy's
    # sparse product to the last bit (a sparse fit's Newton steps do not move); empty rows and
    # an empty column included
    from explorer.kernels import weighted_gram

    A = sp.random(300, 12, density=0.2, random_state=4, format="csr", dtype=np.float64)
    A = sp.csr_matrix(A.multiply(np.arange(300)[:, None] % 5 != 0))
    A = sp.csr_matrix(A.multiply(np.arange(12)[None, :] != 7)).astype(dtype)
    d = np.random.default_rng(5).random(300)
    if layout == "csc":
        A = A.tocsc()
    elif layout == "unsorted":
        order = np.concatenate([np.arange(a, b)[::-1] for a, b in zip(A.indptr, A.indptr[1:])])
        A = sp.csr_matrix((A.data[order], A.indices[order], A.indptr), shape=A.shape)
        assert not A.has_sorted_indices  # the same matrix, each row's indices reversed
    G, v = weighted_gram(A, d)
    dense = A.toarray().astype(np.float64)
    np.testing.assert_allclose(G, dense.T @ (d[:, None] * dense), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v, dense.T @ d, rtol=1e-12, atol=1e-12)
    assert not G[7].any() and not G[:, 7].any() and v[7] == 0.0
    C = A.tocsc().astype(np.float64)
    np.testing.assert_array_equal(G, np.asarray((C.T @ C.multiply(d[:, None])).todense()))
    with pytest.raises(ValueError, match="one weight per row"):
        weighted_gram(A, d[:-1])


def test_kernel_threads_are_remade_in_a_forked_child(monkeypatch):
    import explorer.kernels as kernels

    first = kernels._pool()
    monkeypatch.setattr(kernels, "_POOL", (-1, first))  # as a child sees its parent's pool
    assert kernels._pool() is not first


@pytest.mark.parametrize("layout", ["dense", "fortran", "csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_column_sums_match_numpy(layout, dtype, n):
    from explorer.kernels import column_moments, column_sums

    X = np.random.default_rng(n).normal(3.0, 2.0, size=(n, 9)).astype(dtype)
    M = np.asfortranarray(X) if layout == "fortran" else as_layout(X, layout, dtype)
    sums, sq = column_sums(M)
    X64 = X.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(sums, X64.sum(axis=0), rtol=tol, atol=tol)
    np.testing.assert_allclose(sq, np.square(X64).sum(axis=0), rtol=tol, atol=tol)
    if n:
        mean, std = column_moments(M)
        np.testing.assert_allclose(mean, X64.mean(axis=0), rtol=tol, atol=tol)
        np.testing.assert_allclose(std, X64.std(axis=0), rtol=1e-4, atol=tol)


@pytest.mark.parametrize("layout", ["dense", "fortran"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 7, 40])
def test_column_moments_and_xts_in_one_pass_match_numpy(layout, dtype, n):
    from explorer.kernels import column_moments_and_xts

    rng = np.random.default_rng(n)
    X = rng.normal(3.0, 2.0, size=(n, 9)).astype(dtype)
    r = rng.normal(size=n)
    M = np.asfortranarray(X) if layout == "fortran" else X
    mean, std, product = column_moments_and_xts(M, r)
    X64 = X.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(mean, X64.mean(axis=0), rtol=tol, atol=tol)
    np.testing.assert_allclose(std, X64.std(axis=0), rtol=1e-4, atol=tol)
    np.testing.assert_allclose(product, X64.T @ r, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="one value per row"):
        column_moments_and_xts(M, np.ones(n + 1))


def test_group_sumsq_overlapping():
    rng = np.random.default_rng(1)
    v = rng.normal(size=20)
    groups = [[0, 1, 2], [2, 3], [5], [0, 19, 7, 8]]
    weights = rng.uniform(0.5, 2, size=4)
    index = GroupIndex.from_lists(groups, 20)
    np.testing.assert_allclose(index.sumsq(v, weights), ref.group_sumsq(v, groups, weights))
    assert index.overlapping()


def test_group_index_from_ids_is_a_partition():
    ids = np.array([3, 1, 3, 7, 1, 1])
    index = GroupIndex.from_ids(ids)
    assert index.n_groups == 3 and not index.overlapping()
    assert sorted(index.members_of(0).tolist()) == [1, 4, 5]  # label 1 comes first
    assert list(index.labels) == [1, 3, 7]


@pytest.mark.parametrize("k", [1, 5, 37])
def test_streaming_top_k_equals_sort(k):
    rng = np.random.default_rng(k)
    scores = rng.normal(size=1000)
    excluded = rng.random(1000) < 0.1
    heap = TopK(k, excluded=excluded)
    for start in range(0, 1000, 64):
        heap.push(scores[start:start + 64], start)
    ids, vals = heap.result()
    expected = ref.top_k(scores, k, excluded)
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_allclose(vals, scores[expected])
    ids2, _ = top_k(scores, k, excluded)
    np.testing.assert_array_equal(ids2, expected)


def test_top_k_ties_and_short_input():
    ids, vals = top_k(np.array([1.0, 3.0, 3.0, 2.0]), 2)
    assert ids.tolist() == [1, 2]
    ids, _ = top_k(np.array([1.0, 2.0]), 5)
    assert ids.tolist() == [1, 0]


@pytest.mark.parametrize("k", [1, 3, 10, 60, 500])
@pytest.mark.parametrize("seed", range(3))
def test_top_k_with_ties_nan_and_minus_inf_equals_sort(k, seed):
    # scores rounded to few values (many ties at the k-th), NaN and −inf never chosen, and
    # fewer valid scores than k for the largest k
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=300), 1)
    scores[rng.random(300) < 0.1] = np.nan
    scores[rng.random(300) < 0.1] = -np.inf
    excluded = rng.random(300) < 0.2
    for exc in (None, excluded):
        ids, vals = top_k(scores, k, exc)
        expected = ref.top_k(scores, k, exc)
        np.testing.assert_array_equal(ids, expected)
        np.testing.assert_array_equal(vals, scores[expected])
    ids, _ = top_k(np.array([np.inf, 1.0, np.nan, np.inf, -np.inf]), 4)
    assert ids.tolist() == [0, 3, 1]  # +inf first (a score, by id), NaN and −inf never


def test_dense_take_rows_matches_its_twin():
    # Fortran-ordered and C-ordered input, repeated and unsorted rows, scaled per row
    rng = np.random.default_rng(5)
    A = rng.normal(size=(50, 7))
    rows = np.array([49, 3, 3, 0, 17])
    scale = rng.uniform(0.5, 2.0, rows.size)
    for matrix in (A, np.asfortranarray(A)):
        got = np.full((rows.size, 7), np.nan, order="F")
        _numba.dense_take_rows(matrix, rows, scale, got)
        twin = np.full((rows.size, 7), np.nan)
        ref.dense_take_rows(matrix, rows, scale, twin)
        np.testing.assert_array_equal(got, twin)
        np.testing.assert_array_equal(got, A[rows] * scale[:, None])


def _split_over(monkeypatch, threads: int, **sizes):
    """explorer.kernels with ``threads`` cores and the given part sizes (small, so that tiny
    inputs are split)."""
    import explorer.kernels as kernels

    for name, value in sizes.items():
        monkeypatch.setattr(kernels, name, value)
    monkeypatch.setattr(kernels, "_cores", lambda: threads)
    return kernels


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_take_columns_gathers_by_rows_over_threads(monkeypatch, threads, dtype):
    # a C-ordered dense X goes through the compiled row-by-row gather, split by rows over
    # the threads (uneven parts); its numpy twin, and X[:, columns] for every layout
    kernels = _split_over(monkeypatch, threads, DENSE_PART_CELLS=50)
    rng = np.random.default_rng(threads)
    X = rng.normal(size=(101, 40)).astype(dtype)
    columns = np.array([39, 0, 17, 17, 5, -2])
    scale = rng.uniform(0.5, 2.0, columns.size)
    expected = X[:, columns].astype(np.float64) * scale
    for matrix in (X, np.asfortranarray(X), X[:, ::2].copy()[:, np.r_[0:20, 0:20]]):
        got = kernels.take_columns(matrix, columns, scale)
        assert got.dtype == np.float64 and got.shape == (101, 6)
        np.testing.assert_array_equal(got, matrix[:, columns].astype(np.float64) * scale)
    np.testing.assert_array_equal(kernels.take_columns(X, columns, scale), expected)
    twin = np.full((101, 6), np.nan)
    ref.dense_take_columns(X, np.where(columns < 0, columns + 40, columns), scale, twin,
                           0, 101)
    np.testing.assert_array_equal(twin, expected)
    assert kernels.take_columns(X, np.zeros(0, dtype=np.int64)).shape == (101, 0)
    with pytest.raises(IndexError, match="out of range for X's 40 columns"):
        kernels.take_columns(X, np.array([40]))
    assert kernels.take_columns(X, []).shape == (101, 0)  # an empty list is no selection
    for wrong in (np.array([1.5, 2.0]), np.arange(40) < 3):  # not ids: refused, not rounded
        with pytest.raises(TypeError, match="column ids must be integers"):
            kernels.take_columns(X, wrong)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_take_columns_matches_dense_indexing(monkeypatch, threads, dtype):
    # CSR goes through the compiled gather, split over threads by non-zeros; empty rows,
    # an empty wanted column, a full one (more hits than the first buffer guesses), columns
    # out of order, and indices unsorted within rows
    _split_over(monkeypatch, threads, PART_NNZ=300)
    rng = np.random.default_rng(threads)
    dense = sp.random(400, 3000, density=0.01, random_state=4).toarray().astype(dtype)
    dense[::3] = 0.0
    dense[:, 7] = 0.0
    dense[:, 11] = 1.5
    columns = np.array([2999, 11, 7, 5, 1234, 0])
    scale = rng.uniform(0.5, 2.0, columns.size)
    expected = dense[:, columns].astype(np.float64) * scale
    X = sp.csr_matrix(dense)
    shuffled = X.copy()
    for i in range(shuffled.shape[0]):  # the same matrix with each row's entries reversed
        a, b = shuffled.indptr[i], shuffled.indptr[i + 1]
        shuffled.indices[a:b] = shuffled.indices[a:b][::-1].copy()
        shuffled.data[a:b] = shuffled.data[a:b][::-1].copy()
    shuffled.has_sorted_indices = False
    for matrix in (X, shuffled, X.tocsc(), dense):
        got = take_columns(matrix, columns, scale)
        if sp.issparse(got):
            assert got.format == "csc"
            if sp.issparse(matrix) and matrix.format == "csr":
                # rows increasing within each column, as CSC consumers expect
                assert all(np.all(np.diff(got.indices[a:b]) > 0)
                           for a, b in zip(got.indptr[:-1], got.indptr[1:]))
            got = got.toarray()
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, expected)
    # repeated columns (overlapping groups) by scipy's indexing, the same values
    twice = np.array([3, 11, 3])
    np.testing.assert_array_equal(take_columns(X, twice).toarray(), dense[:, twice])
    assert take_columns(X, np.zeros(0, dtype=np.int64)).shape == (400, 0)
    # negative ids count from the end (as in numpy and scipy); out of range is an error
    np.testing.assert_array_equal(take_columns(X, np.array([-1, 3])).toarray(),
                                  dense[:, [2999, 3]])
    for bad in ([3000], [2, -3001]):
        with pytest.raises(IndexError, match="out of range for X's 3000 columns"):
            take_columns(X, np.array(bad))
    with pytest.raises(ValueError, match="one value per column"):
        take_columns(X, np.array([1, 2]), np.ones(3))


def test_poly2_block_kernel_matches_reference():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 7))
    s = rng.normal(size=30)
    G = X.T @ (X * s[:, None])
    out = np.empty(7 * 7)
    count = _numba.poly2_block_scores(np.ascontiguousarray(G), 0, 1.0, np.sqrt(2), out)
    expected = ref.poly2_scores(X, s, gamma=1.0, r=1.0)[7:]
    np.testing.assert_allclose(out[:count], expected)


@pytest.mark.parametrize("p", [1.2, 1.5, 2.0, 3.0, 6.0])
@pytest.mark.parametrize("seed", range(3))
def test_lp_ball_projection_matches_a_generic_minimiser(p, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=7) * rng.uniform(0.1, 5)
    v[seed] = 0.0
    radius = 0.4 * np.sum(np.abs(v) ** p) ** (1 / p)
    got = _numba.lp_ball_projection(v, radius, p)
    assert np.sum(np.abs(got) ** p) ** (1 / p) == pytest.approx(radius, rel=1e-10)
    np.testing.assert_allclose(got, ref.lp_ball_projection(v, radius, p), atol=1e-5)
    if p == 2.0:
        np.testing.assert_allclose(got, v * radius / np.linalg.norm(v), atol=1e-12)
    inside = v * 0.3 / np.sum(np.abs(v) ** p) ** (1 / p)
    np.testing.assert_array_equal(_numba.lp_ball_projection(inside, 0.5, p), inside)


@pytest.mark.parametrize("seed", range(6))
def test_l1sq_scales_kernel_matches_reference(seed):
    """Ties, zero norms, one block and steps from tiny to huge: the compiled Alg. 3 gives
    the numpy twin's scales (and the prox's public function is the compiled one)."""
    from explorer.optim import l1_squared_block_scales

    rng = np.random.default_rng(seed)
    norms = np.abs(rng.standard_normal(rng.integers(1, 12)))
    norms[rng.random(norms.size) < 0.3] = 0.0
    if norms.size > 2:
        norms[1] = norms[2]  # a tie
    for step in (1e-6, 0.05, 1.0, 30.0, 1e6):
        want = ref.l1sq_scales(norms, step, np.full(norms.size, np.nan))
        got = _numba.l1sq_scales(norms, step, np.full(norms.size, np.nan))
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
        np.testing.assert_array_equal(l1_squared_block_scales(norms, step), got)
        assert np.all((got >= 0) & (got < 1))


@pytest.mark.parametrize("order", ["F", "C"])
def test_scaled_trial_kernel_matches_reference(order):
    rng = np.random.default_rng(8)
    Pv = np.asarray(rng.standard_normal((50, 7)), order=order)
    G = np.asarray(rng.standard_normal((50, 7)), order=order)
    scales = np.array([0.0, 1.0, 0.3, 0.9, 0.0, 0.5, 1e-9])
    want = ref.scaled_trial(Pv, G, 0.37, scales, np.full((50, 7), np.nan))
    got = _numba.scaled_trial(Pv, G, 0.37, scales, np.full((50, 7), np.nan, order="F"))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, [0, 4]], 0.0)
