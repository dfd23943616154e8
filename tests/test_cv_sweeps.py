"""Cross-validated sweeps: the whole fit (selection included) inside each fold."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import LinearSVC

from explorer import FGM
from explorer.data import Dataset
from explorer.experiments import cv_folds, sweep


def _noise(n=80, d=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    rng.shuffle(y)
    return Dataset(X=X, y=y, name="noise")


def test_a_cv_sweep_does_not_leak_the_selection_into_its_scores():
    """Ambroise & McLachlan (PNAS 2002): pure-noise labels, 80 × 2,000. Selecting on all rows
    and then cross-validating the classifier reports a fine accuracy; the cross-validated
    sweep, which selects inside each fold, stays at chance."""
    data = _noise()
    rows = sweep("fgm", data, values=[5, 10, 20], cv=5, test_size=0.2)
    assert np.all(np.abs(rows["accuracy"] - 0.5) < 0.15), rows["accuracy"].tolist()
    assert {"accuracy_sd", "n_selected_sd", "supports", "cv"} <= set(rows.columns)
    assert all(len(s) == 5 for s in rows["supports"])
    # the leak this guards against: FGM's 10 features chosen with every row, then CV
    chosen = FGM(k=10).fit(data.X, data.y).selected_features_
    leaked = cross_val_score(LinearSVC(C=1.0), data.X[:, chosen], data.y,
                             cv=StratifiedKFold(5, shuffle=True, random_state=0)).mean()
    assert leaked >= 0.8, leaked


def test_cv_rows_are_the_mean_of_the_folds_own_fits(digits38):
    rows = sweep("fgm", digits38, values=[4], cv=3, seed=1)
    data = digits38.split()
    scores, counts = [], []
    for train, held in cv_folds(data, 3, seed=1):
        est = FGM(k=4).fit(data.X[train], data.y[train])
        scores.append(np.mean(est.predict(data.X[held]) == data.y[held]))
        counts.append(est.n_selected_)
    assert rows.loc[0, "accuracy"] == pytest.approx(np.mean(scores), abs=1e-12)
    assert rows.loc[0, "accuracy_sd"] == pytest.approx(np.std(scores, ddof=1), abs=1e-12)
    assert rows.loc[0, "n_selected"] == np.mean(counts) == 4


def test_cv_folds_never_hold_test_rows_and_refuse_bad_counts(digits38):
    data = digits38.split()
    folds = cv_folds(data, 4)
    held = np.sort(np.concatenate([h for _, h in folds]))
    np.testing.assert_array_equal(held, np.arange(data.n_samples))  # each training row once
    for bad in (1, 0, data.n_samples + 1):
        with pytest.raises(ValueError, match="cv must be"):
            cv_folds(data, bad)
