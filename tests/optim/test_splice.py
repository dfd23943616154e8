"""The exchange rounds of FGM's refinement (:func:`explorer.optim.refine.splice`) against an
exhaustive search over restricted SVMs."""

from itertools import combinations

import numpy as np
import pytest
from sklearn.svm import LinearSVC

from explorer.optim.losses import make_loss
from explorer.optim.refine import restricted_fit, splice
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


def _splice(X, y, start, **kw):
    def top(signal, m):  # the worst-case scores |Xᵀs|, written out
        scores = np.abs(X.T @ signal)
        ids = np.argsort(-scores, kind="stable")[:m]
        return ids, scores[ids]

    loss, stopping = make_loss("squared_hinge"), Stopping(1e-12, 1000)
    w, b, res = restricted_fit(X, start, y, loss, C, fit_intercept=False, stopping=stopping)
    return splice(lambda ids: X[:, ids], top, y, loss, C, start, w, b, res, len(start),
                  n_features=X.shape[1], fit_intercept=False, stopping=stopping, **kw)


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
