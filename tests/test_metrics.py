"""Measures against hand-computed values and scikit-learn."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

from explorer import metrics as M


def test_accuracy_f1_auc_against_scikit_learn():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = y + rng.normal(0, 1, 200)
    p = (s > 0.5).astype(int)
    assert M.accuracy(y, p) == np.mean(y == p)
    assert M.f1(y, p) == pytest.approx(f1_score(y, p))
    assert M.auc(y, s) == pytest.approx(roc_auc_score(y, s))


def test_prbep_by_hand():
    y = np.array([1, 0, 1, 0, 0, 1])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.1])
    # 3 positives: top-3 are (1, 0, 1) → 2/3
    assert M.prbep(y, s) == pytest.approx(2 / 3)


def test_prbep_is_the_break_even_point():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 60)
    s = rng.normal(size=60) + y
    k = y.sum()
    top = np.argsort(-s)[:k]
    precision = y[top].mean()
    recall = y[top].sum() / k
    assert precision == pytest.approx(recall) == pytest.approx(M.prbep(y, s))


def test_recall_at_k_defaults_to_twice_the_positives():
    y = np.array([0, 1, 0, 1, 0, 0, 0, 0])
    s = np.array([8, 7, 6, 5, 4, 3, 2, 1.0])
    assert M.recall_at_k(y, s) == pytest.approx(1.0)  # top 4 hold both positives
    assert M.recall_at_k(y, s, k=2) == pytest.approx(0.5)


def test_macro_measures_average_one_vs_rest():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 90)
    S = rng.normal(size=(90, 3)) + np.eye(3)[y]
    expected = np.mean([M.prbep((y == c).astype(int), S[:, c]) for c in range(3)])
    assert M.macro_prbep(y, S, np.arange(3)) == pytest.approx(expected)
    pred = S.argmax(1)
    assert M.macro_f1(y, pred) == pytest.approx(f1_score(y, pred, average="macro"))


def test_rmse_and_recovery():
    assert M.rmse([1, 2, 3], [1, 2, 5]) == pytest.approx(np.sqrt(4 / 3))
    rec = M.recovery([1, 5, 9, 20], truth=[5, 9, 30])
    assert rec == {"found": 2, "percent_found": pytest.approx(200 / 3), "all_found": False,
                   "precision": 0.5}
    mask = np.zeros(40, bool)
    mask[[5, 9, 30]] = True
    assert M.recovery(mask, [5, 9, 30])["all_found"]


def test_recall_at_k_brute_force_small():
    # exhaustive over all 0/1 label vectors of length 6 with a fixed score order
    s = np.arange(6, 0, -1.0)
    for y in itertools.product([0, 1], repeat=6):
        y = np.array(y)
        if y.sum() == 0:
            continue
        k = 2 * y.sum()
        assert M.recall_at_k(y, s) == pytest.approx(y[:k].sum() / y.sum())


@pytest.mark.parametrize("case", range(5))
def test_gaussian_sign_accuracy_matches_sampling_the_design(case):
    # independent reference: 2 million draws of the design x ~ N(0, I), y = sign(xᵀw)
    rng = np.random.default_rng(case)
    w = rng.uniform(0, 1, 6) * (rng.random(6) < 0.7)
    w[0] = 1.0
    coef = [w + rng.normal(0, 0.6, 6), rng.normal(0, 1, 6), -w, 3 * w, w * [1, 0, 0, 0, 0, 0]][case]
    intercept = [0.3, -0.8, 0.1, 1.5, 0.0][case]
    hits = total = 0
    for _ in range(4):
        x = rng.standard_normal((500_000, 6))
        y = np.where(x @ w >= 0, 1, -1)
        hits += int(np.sum(np.where(x @ coef + intercept > 0, 1, -1) == y))
        total += x.shape[0]
    sampled = hits / total
    exact = M.gaussian_sign_accuracy(coef, intercept, w)
    assert abs(exact - sampled) < 4 * np.sqrt(sampled * (1 - sampled) / total) + 1e-4


def test_gaussian_sign_accuracy_closed_forms_and_bad_input():
    rng = np.random.default_rng(1)
    w, v = rng.normal(size=8), rng.normal(size=8)
    rho = v @ w / np.linalg.norm(v) / np.linalg.norm(w)
    assert M.gaussian_sign_accuracy(v, 0.0, w) == pytest.approx(1 - np.arccos(rho) / np.pi,
                                                                 abs=1e-9)
    assert M.gaussian_sign_accuracy(w, 0.0, w) == pytest.approx(1.0)
    assert M.gaussian_sign_accuracy(-w, 0.0, w) == pytest.approx(0.0, abs=1e-12)
    assert M.gaussian_sign_accuracy(np.zeros(8), 2.0, w) == 0.5
    with pytest.raises(ValueError, match="match"):
        M.gaussian_sign_accuracy(v[:3], 0.0, w)
    with pytest.raises(ValueError, match="finite"):
        M.gaussian_sign_accuracy(v, np.nan, w)
    with pytest.raises(ValueError, match="zero"):
        M.gaussian_sign_accuracy(v, 0.0, np.zeros(8))


def test_a_ranking_is_measured_inside_its_queries():
    """pairwise accuracy: the share of pairs of different grades in one query that the scores
    order right, against a loop over every pair; RMSE does not apply to a ranking's scores."""
    from explorer import FSA
    from explorer.data import load
    from explorer.metrics import evaluate

    ds = load("fsa-ranking")
    est = FSA(k=10, loss="ranking").fit(ds.X, ds.y, query=ds.query)
    scores = est.predict(ds.X_test)
    right = total = 0
    for i in range(len(ds.y_test)):
        for j in range(len(ds.y_test)):
            if ds.query_test[i] == ds.query_test[j] and ds.y_test[i] > ds.y_test[j]:
                total += 1
                right += scores[i] > scores[j]
    out = evaluate(est, ds.X_test, ds.y_test, ["pairwise", "rmse"], query=ds.query_test)
    assert out["pairwise"] == pytest.approx(right / total, abs=1e-12) and 0.6 < out["pairwise"]
    assert np.isnan(out["rmse"])
