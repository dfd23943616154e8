"""The exchange rounds of FGM's refinement (:func:`explorer.engines.fgm.refine.splice`) against an
exhaustive search over restricted SVMs."""

import itertools
from itertools import combinations

import numpy as np
import pytest
from sklearn.svm import LinearSVC

from explorer.engines.fgm.refine import (
    Candidates,
    Fitted,
    Refit,
    Restricted,
    eliminate,
    prune_and_refit,
    restricted_fit,
    sacrifices,
    splice,
    surgeon_order,
)
from explorer.optim.losses import make_loss
from explorer.optim.stopping import Stopping

C = 1.0


def _problem(seed):
    """10 features, 3 informative of unequal strength, 300 examples, labels with noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 10))
    y = np.where(X[:, :3] @ [1.5, -1.0, 0.7] + 0.8 * rng.standard_normal(300) > 0, 1.0, -1.0)
    return X, y


def _restricted_loss(X, y, cols):
    """C Σ ½ max(0, 1 − y xᵀw)² of the restricted SVM on ``cols`` (LinearSVC, c = C/2)."""
    svm = LinearSVC(C=C / 2, fit_intercept=False, dual=False, tol=1e-10, max_iter=100000)
    w = svm.fit(X[:, cols], y).coef_.ravel()
    return C * 0.5 * np.sum(np.maximum(0.0, 1.0 - y * (X[:, cols] @ w)) ** 2)


def _top(X):
    def top(signal, m):  # the worst-case scores |Xᵀs|, written out
        scores = np.abs(X.T @ signal)
        ids = np.argsort(-scores, kind="stable")[:m]
        return ids, scores[ids]
    return top


def _fit(X, y, cols, loss_name="squared_hinge", fit_intercept=False, tol=1e-12):
    """The restricted problem and its fit on ``cols`` (coef, intercept, result)."""
    problem = Restricted(y, make_loss(loss_name), C, fit_intercept, Stopping(tol, 1000))
    return problem, restricted_fit(problem, X, np.asarray(cols))


def _splice(X, y, start, columns=None, kept_columns=None, **kw):
    problem, (w, b, res) = _fit(X, y, start)
    refit, rounds, before, after = splice(
        problem, Candidates(columns or (lambda ids: X[:, ids]), _top(X), X.shape[1]),
        Refit(np.asarray(start), w, b, res, kept_columns), len(start), **kw)
    return refit.kept, refit.weights, refit.intercept, refit.result, rounds, before, after


@pytest.mark.parametrize("seed", range(4))
def test_exchange_from_noise_reaches_the_exhaustive_best_triple(seed):
    """Started on three pure-noise features, the rounds lower the restricted loss each time
    and end on the best of all 120 triples; its loss is the restricted SVM's."""
    X, y = _problem(seed)
    losses = {cols: _restricted_loss(X, y, list(cols)) for cols in combinations(range(10), 3)}
    best = min(losses, key=losses.get)
    start = np.array([7, 8, 9])
    kept, w, b, res, rounds, before, after = _splice(X, y, start)
    assert tuple(kept) == best == (0, 1, 2)
    assert 1 <= rounds and after < before
    assert before == pytest.approx(losses[(7, 8, 9)], rel=1e-6)
    assert after == pytest.approx(losses[best], rel=1e-6)


def test_exchange_stops_where_no_round_lowers_the_loss_and_keeps_its_bound():
    """The result is a fixed point (a second call makes no round and changes nothing), and
    ``max_rounds`` bounds the work."""
    X, y = _problem(0)
    kept, w, *_, rounds, before, after = _splice(X, y, np.array([7, 8, 9]))
    again = _splice(X, y, kept)
    assert again[4] == 0 and np.array_equal(again[0], kept) and again[5] == again[6]
    one = _splice(X, y, np.array([7, 8, 9]), max_rounds=1)
    assert one[4] <= 1
    none = _splice(X, y, np.array([7, 8, 9]), max_rounds=0)
    assert none[4] == 0 and np.array_equal(none[0], [7, 8, 9])


def test_rounds_read_only_the_candidate_columns_when_given_the_kept_ones():
    """With the kept set's columns handed in, a round reads only columns outside the set it
    holds from X (out of core, every read is a pass over the disk chunks that hold them): its
    ⌈k/2⌉ = 2 candidates, and when their exchange is rejected the shortlist of the one-for-one
    swaps; the exchange is the same as when every column is read."""
    from explorer.engines.fgm.refine import SHORTLIST

    X, y = _problem(1)
    start = np.array([7, 8, 9])
    reads = []

    def columns(ids):
        reads.append(np.asarray(ids).copy())
        return X[:, ids]

    got = _splice(X, y, start, columns=columns, kept_columns=X[:, start])
    assert got[4] >= 1 and reads[0].size == 2 and not np.isin(reads[0], start).any()
    assert all(r.size == 2 or 2 < r.size <= SHORTLIST for r in reads)
    assert len(reads) <= 2 * (got[4] + 1)  # at most two reads a round, the last rejected
    reads.clear()
    plain = _splice(X, y, start, columns=columns)
    assert reads[0].tolist() == [7, 8, 9]  # not handed in: read once, at the first round
    np.testing.assert_array_equal(got[0], plain[0])
    np.testing.assert_allclose(got[1], plain[1], rtol=1e-12)


@pytest.mark.parametrize("loss_name", ["squared_hinge", "logistic"])
def test_newton_hessian_updated_by_changed_rows_is_the_direct_sum(loss_name):
    """The finite Newton method's Hessian, updated from the last step's by the rows whose
    curvature changed, equals Aᵀdiag(d2)A summed afresh, along a sequence of models."""
    from explorer.engines.fgm.refine import _curvature_gram, curvature_weights

    rng = np.random.default_rng(3)
    A = rng.standard_normal((400, 7))
    y = np.where(rng.standard_normal(400) > 0, 1.0, -1.0)
    loss = make_loss(loss_name)
    gram = previous = None
    w = np.zeros(7)
    for step in range(6):
        w = w + 0.3 * rng.standard_normal(7) / (step + 1) ** 2  # ever fewer rows change
        d2 = 2.0 * curvature_weights(loss, y, A @ w)
        gram = _curvature_gram(A, d2, gram, previous)
        previous = d2
        np.testing.assert_allclose(gram, (A.T * d2) @ A, rtol=1e-12, atol=1e-10)


def _twins_problem(seed):
    """Two near-copies of one strong signal (columns 0, 1) and a weaker independent one
    (column 2): the best pair is a copy and column 2."""
    rng = np.random.default_rng(seed)
    z, other = rng.standard_normal(400), rng.standard_normal(400)
    X = np.column_stack([z + 0.002 * rng.standard_normal(400),
                         z + 0.002 * rng.standard_normal(400), other])
    y = np.where(z + 0.25 * other + 0.3 * rng.standard_normal(400) > 0, 1.0, -1.0)
    return X + 0.3, y  # off zero: the intercept matters when it is fitted


@pytest.mark.parametrize("loss_name", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_pruning_drops_the_redundant_twin_as_an_exhaustive_search_does(loss_name,
                                                                      fit_intercept, seed):
    """Cut from 3 to 2, the kept pair is the one of least restricted objective over all three
    pairs (each refit here): a copy of the strong signal and the weak independent feature.
    The elimination lets the twin take over the weight of the copy it drops."""
    X, y = _twins_problem(seed)
    cols = np.arange(3)
    problem, (w, b, res) = _fit(X, y, cols, loss_name, fit_intercept)
    objective = {pair: restricted_fit(problem, X, np.array(pair))[2].objective
                 for pair in combinations(range(3), 2)}
    best = min(objective, key=objective.get)
    assert 2 in best
    kept, *_ = prune_and_refit(problem, X, Fitted(cols, w, res.margins, b), 2)
    assert tuple(kept) == best


def test_the_diagonal_sacrifice_alone_keeps_both_twins_on_most_of_these_problems():
    """What the test above guards against: abess's ½h_j w_j², which holds the other features
    fixed, keeps both copies of the strong signal in most of the same 12 settings."""
    both = 0
    for loss_name, fit_intercept, seed in itertools.product(
            ["squared_hinge", "logistic"], [False, True], range(3)):
        X, y = _twins_problem(seed)
        problem, (w, _, res) = _fit(X, y, np.arange(3), loss_name, fit_intercept)
        diagonal = sacrifices(problem, X, Fitted(np.arange(3), w, res.margins))
        both += set(np.argsort(-diagonal)[:2]) == {0, 1}
    assert both >= 8


def test_surgeon_order_of_a_quadratic_objective_is_the_exact_cost_of_each_removal():
    """Where every example is inside the squared hinge's margin the objective is quadratic, so
    the surgeon's first saliency is exact: the feature it eliminates first is the one whose
    removal (and refit of the rest) raises the objective least, by brute force."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((200, 5)) @ rng.standard_normal((5, 5)) * 0.01  # small margins
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    problem, (w, b, res) = _fit(A, y, np.arange(5), tol=1e-14)
    assert np.all(y * res.margins < 1)  # all inside the margin: quadratic
    order = surgeon_order(problem, A, Fitted(np.arange(5), w, res.margins))
    rise = [restricted_fit(problem, A, np.delete(np.arange(5), q))[2].objective - res.objective
            for q in range(5)]
    assert int(np.argmin(order)) == int(np.argmin(rise))


@pytest.mark.parametrize("seed", range(4))
def test_elimination_from_all_ten_features_keeps_the_exhaustive_best_triple(seed):
    """Ten features down to three, half of the excess per stage with a refit between: the
    kept triple is the best of all 120 by restricted loss (the three informative ones)."""
    X, y = _problem(seed)
    losses = {cols: _restricted_loss(X, y, list(cols)) for cols in combinations(range(10), 3)}
    problem, (w, b, res) = _fit(X, y, np.arange(10))
    kept = eliminate(problem, X, Fitted(np.arange(10), w, res.margins, b), 3)
    assert tuple(kept) == min(losses, key=losses.get)
