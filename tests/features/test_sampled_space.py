"""GrFL's sampled feature space against direct computations of the violations (eqs. 6–7)."""

import pickle

import numpy as np
import pytest

from explorer.features import FixedFamily, FourierFamily, SampledSpace
from explorer.features._sampled import group_violations


def _direct(cols, R, g, q):
    """‖φ_gᵀR‖ in the dual norm q′, group by group, by an explicit loop."""
    qd = np.inf if q == 1 else q / (q - 1)
    out = []
    for j in range(cols.shape[1] // g):
        H = cols[:, j * g:(j + 1) * g].T @ R
        out.append(np.abs(H).max() if qd == np.inf else np.sum(np.abs(H) ** qd) ** (1 / qd))
    return np.array(out)


@pytest.mark.parametrize("q", [1.0, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("tasks", [1, 3])
def test_violations_match_a_direct_loop(q, tasks):
    rng = np.random.default_rng(1)
    cols, R = rng.standard_normal((40, 12)), rng.standard_normal((40, tasks))
    qd = np.inf if q == 1 else q / (q - 1)
    viol, shared = group_violations(cols, R, 2, qd)
    np.testing.assert_allclose(viol, _direct(cols, R, 2, q), rtol=1e-12)
    H = cols.T @ R
    np.testing.assert_allclose(shared, np.abs(H.sum(1)).reshape(6, 2).max(1), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_scores_are_violations_relative_to_lambda_and_columns_round_trip(dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4)).astype(dtype)
    R = rng.standard_normal(50)
    fam = FourierFamily(4, [1.0])
    space = SampledSpace(X, fam, 30, np.random.default_rng(7), lam=0.5)
    ids, scores = space.top(R, 3)
    # the same draw, computed directly
    cand = fam.sample(30, np.random.default_rng(7))
    raw = fam.columns(X, cand)
    unit = raw / np.linalg.norm(raw, axis=0)
    direct = _direct(unit, R[:, None], 2, 2.0) / 0.5
    np.testing.assert_allclose(scores, np.sort(direct)[::-1][:3], rtol=1e-6)
    cols = space.columns(ids)
    assert cols.width == 6 and list(cols.candidate) == [ids[0]] * 2 + [ids[1]] * 2 + \
        [ids[2]] * 2
    best = int(np.argmax(direct))
    np.testing.assert_allclose(cols.matrix[:, :2], unit[:, 2 * best:2 * best + 2], rtol=1e-6)
    # the stored map reproduces the columns on new rows (transform)
    np.testing.assert_allclose(space.transform(X, cols), cols.matrix, rtol=1e-6)
    assert space.violation[int(ids[0])] == pytest.approx(0.5 * scores[0])


def test_shared_violations_rank_only_when_no_group_violates():
    rng = np.random.default_rng(2)
    X, R = rng.standard_normal((30, 5)), rng.standard_normal(30)
    space = SampledSpace(X, FixedFamily(5), 5, rng, lam=1e6, lam_shared=0.1, threshold=1.0)
    ids, scores = space.top(R, 5)
    unit = X / np.linalg.norm(X, axis=0)
    np.testing.assert_allclose(np.sort(scores)[::-1], np.sort(np.abs(unit.T @ R))[::-1] / 0.1)
    space.lam = 1e-6  # now every group violates: ranked by the group violation
    _, scores = space.top(R, 1)
    assert scores[0] == pytest.approx(np.abs(unit.T @ R).max() / 1e-6)


def test_a_finite_bank_never_offers_a_column_already_in_the_model():
    rng = np.random.default_rng(3)
    X, R = rng.standard_normal((20, 4)), rng.standard_normal(20)
    space = SampledSpace(X, FixedFamily(4), 4, rng, lam=1e-3)
    taken = []
    for _ in range(4):
        ids, _ = space.top(R, 1)
        taken.append(space.params[int(ids[0])])
        space.columns(ids)
    assert sorted(taken) == [0, 1, 2, 3]
    ids, scores = space.top(R, 1)
    assert ids.size == 0 and scores.size == 0


def test_pickles_keep_the_map_but_not_the_training_columns():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((2000, 30))
    space = SampledSpace(X, FourierFamily(30, [1.0]), 50, rng, lam=1.0)
    ids, _ = space.top(rng.standard_normal(2000), 2)
    cols = space.columns(ids)
    copy = pickle.loads(pickle.dumps(space))
    assert len(pickle.dumps(space)) < 20_000  # neither X (480 kB) nor the kept columns
    np.testing.assert_allclose(copy.transform(X[:5], cols), cols.matrix[:5])
