"""The generated columns' cache (explorer/optim/cache.py): its centring and its block products
equal those of the matrices it stands for."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.optim import BlockCache


@pytest.mark.parametrize("sparse", [False, True])
def test_centred_cache_products_are_those_of_the_centred_columns(sparse):
    """Dense caches store A − 1μᵀ, sparse ones centre implicitly (and stay sparse)."""
    rng = np.random.default_rng(2)
    blocks = [sp.random(40, w, density=0.3, random_state=s, format="csc") * 5 + 0.0
              for s, w in ((0, 3), (1, 5))]
    cache = BlockCache(40, sparse=sparse, center=True)
    for block in blocks:
        cache.add(block if sparse else block.toarray())
    A = np.hstack([b.toarray() for b in blocks])
    Ac = A - A.mean(axis=0)
    r, coef = rng.standard_normal(40), rng.standard_normal(8)
    np.testing.assert_allclose(cache.rmatvec(r), Ac.T @ r, atol=1e-12)
    expected = np.column_stack([Ac[:, :3] @ coef[:3], Ac[:, 3:] @ coef[3:]])
    np.testing.assert_allclose(cache.block_products(coef), expected, atol=1e-12)
    assert sp.issparse(cache.matrix()) == sparse


@pytest.mark.parametrize("sparse", [False, True])
def test_block_products_over_blocks_of_mixed_widths(sparse):
    """Blocks of one width side by side are multiplied as one batched product: widths that
    change, come back, are 0 or 1, and a buffer that grows under them give each block's own
    A_t ω_t (the columns in order, the products column by column)."""
    rng = np.random.default_rng(5)
    widths = [4, 4, 4, 1, 0, 3, 3, 4, 4, 17, 17, 2]
    blocks = [rng.standard_normal((30, w)) for w in widths]
    cache = BlockCache(30, sparse=sparse)
    for block in blocks:
        cache.add(sp.csc_matrix(block) if sparse else block)
    A = np.hstack(blocks)
    coef = rng.standard_normal(A.shape[1])
    edges = np.cumsum([0] + widths)
    expected = np.column_stack([A[:, a:b] @ coef[a:b] for a, b in zip(edges[:-1], edges[1:])])
    got = cache.block_products(coef)
    assert got.shape == (30, len(widths)) and got.flags.f_contiguous
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(got[:, 4], 0.0)  # the empty block
    np.testing.assert_allclose(cache.matrix() if not sparse else cache.matrix().toarray(), A)
