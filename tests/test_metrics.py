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
