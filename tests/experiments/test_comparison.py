"""``compare``: methods at the same k on the same repeated folds, every fold kept, every pair
differenced; and the simulation a user's trust rests on — methods that are equal are called
equal, a planted difference is found."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from explorer import load
from explorer.data import Dataset
from explorer.experiments import compare, folds_frame, repeated_folds, sweep
from explorer.methods import BaseSelector, ParamSpec, get_method


class _Columns(BaseSelector):
    """A toy selector with a known truth: logistic regression on the first k of its own
    columns (``start`` onwards)."""

    param_specs = (ParamSpec("k", "k", 5, "int", 1, 1000),)
    sparsity_param = "k"
    multiclass = "binary"
    start = 0

    def __init__(self, k: int = 5):
        self.k = k

    def _fit(self, X, y, recorder, **_):
        cols = np.arange(self.start, self.start + int(self.k))
        model = LogisticRegression().fit(X[:, cols], y)
        self.coef_ = np.zeros(X.shape[1])
        self.coef_[cols] = model.coef_.ravel()
        self.intercept_ = float(model.intercept_[0])
        self.support_ = self.coef_ != 0
        recorder.emit(objective=0.0, n_selected=cols.size, selected=cols)


class FirstFive(_Columns):
    start = 0


class LastFive(_Columns):
    start = 5


def _design(n: int, seed: int, noise_last: float) -> Dataset:
    """A latent z, y = [z + ε > 0]; columns 0-4 are z plus unit noise, 5-9 z plus noise of
    ``noise_last``. Population accuracies of the two toy methods: 0.805 and 0.805 (noise 1),
    0.805 and 0.752 (noise 1.7: a 5-point difference)."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    y = np.where(z + 0.5 * rng.standard_normal(n) > 0, 1, -1)
    X = np.hstack([z[:, None] + rng.standard_normal((n, 5)),
                   z[:, None] + noise_last * rng.standard_normal((n, 5))])
    return Dataset(X=X, y=y)


@pytest.mark.slow
def test_methods_equal_in_truth_are_reported_indistinguishable():
    calls = []
    for seed in range(40):
        result = compare([FirstFive, LastFive], _design(200, seed, 1.0), ks=[5], cv=5,
                         repeats=3)
        calls.append(result.pair("FirstFive", "LastFive", 5).decided)
    assert np.mean(calls) <= 0.10  # indistinguishable in at least 90 % of seeds


@pytest.mark.slow
def test_a_planted_five_point_difference_on_a_thousand_rows_is_found():
    winners = []
    for seed in range(10):
        result = compare([FirstFive, LastFive], _design(1000, seed, 1.7), ks=[5], cv=5,
                         repeats=5)
        winners.append(result.pair("FirstFive", "LastFive", 5).winner)
    assert winners.count("FirstFive") >= 7 and "LastFive" not in winners


@pytest.fixture(scope="module")
def three():
    data = load("breast-cancer")
    return data, compare(["fgm", "fsa", "abess"], data, ks=[2, 8], cv=3, repeats=2)


def test_every_method_meets_the_same_folds_and_every_fold_is_kept(three):
    data, result = three
    folds = result.folds
    assert len(folds) == 3 * 2 * 3 * 2  # methods × ks × folds × repeats
    assert set(folds.columns) >= {"method", "value", "repeat", "fold", "n_selected",
                                  "accuracy", "selection"}
    assert set(zip(folds["repeat"], folds["fold"])) == {(r, f) for r in range(2)
                                                         for f in range(3)}
    # each fold's held-out rows are the ones repeated_folds gives for the training part
    split = data.split()
    expected = repeated_folds(split, 3, 2, 0)
    for method in result.methods:
        rows = folds[(folds["method"] == method) & (folds["value"] == 8)]
        assert list(zip(rows["repeat"], rows["fold"])) == [(r, f) for r, f, _, _ in expected]
        for (_, _, train, held), score in zip(expected, rows["accuracy"]):
            model = get_method(method)(k=8).fit(split.X[train], split.y[train])
            assert model.score(split.X[held], split.y[held]) == pytest.approx(score)
    assert (folds["n_selected"] == folds["value"]).all()
    assert all(len(s) == k for s, k in zip(folds["selection"], folds["n_selected"]))


def test_differences_pair_every_two_methods_at_each_k(three):
    _, result = three
    table = result.differences()
    assert len(table) == 2 * 3  # ks × pairs
    for row in table.itertuples():
        a = result.rows[(result.rows["method"] == row.method) &
                        (result.rows["value"] == row.value)]["accuracy_folds"].iloc[0]
        b = result.rows[(result.rows["method"] == row.other) &
                        (result.rows["value"] == row.value)]["accuracy_folds"].iloc[0]
        assert row.mean == pytest.approx(np.mean(a - b))
        assert row.low <= row.mean <= row.high
    mine = result.differences(method="fsa")
    assert set(mine["other"]) == {"fgm", "abess"} and (mine["method"] == "fsa").all()
    assert len(result.verdicts(k=2)) == 3
    assert all(v.startswith("k = 2: ") for v in result.verdicts(k=2))


def test_sweep_keeps_every_fold_of_every_repeat():
    rows = sweep("fsa", load("breast-cancer"), values=[3], cv=4, repeats=3)
    row = rows.iloc[0]
    assert row["cv"] == 4 and row["repeats"] == 3
    assert len(row["accuracy_folds"]) == len(row["supports"]) == 12
    assert row["accuracy"] == pytest.approx(np.mean(row["accuracy_folds"]))
    assert row["accuracy_low"] < row["accuracy"] < row["accuracy_high"]
    tidy = folds_frame(rows)
    assert list(tidy["repeat"]) == [r for r in range(3) for _ in range(4)]
    assert list(tidy["fold"]) == list(range(4)) * 3


def test_repetitions_shuffle_the_folds_anew_and_repeat_zero_is_cv_folds():
    from explorer.experiments import cv_folds

    data = load("breast-cancer").split()
    folds = repeated_folds(data, 5, 3, seed=2)
    firsts = [held for r, _, _, held in folds if r == 0]
    assert all(np.array_equal(a, b[1]) for a, b in zip(firsts, cv_folds(data, 5, seed=2)))
    second = [held for r, _, _, held in folds if r == 1]
    assert not any(np.array_equal(a, b) for a, b in zip(firsts, second))
    for r in range(3):
        held = np.concatenate([h for rr, _, _, h in folds if rr == r])
        assert np.array_equal(np.sort(held), np.arange(data.n_samples))


def test_rows_at_k_and_the_callback(three):
    data, _ = three
    seen = []
    result = compare(["fgm", "abess"], data, ks=[3], cv=3, repeats=1, callback=seen.append)
    assert [r["method"] for r in seen] == ["fgm", "abess"]
    stopped = compare(["fgm", "abess"], data, ks=[3, 5], cv=3, repeats=1,
                      callback=lambda r: False)
    assert list(stopped.rows["method"]) == ["fgm"]
    assert result.rows["param"].eq("k").all()


@pytest.mark.parametrize("methods,kwargs,message", [
    (["fgm"], {}, "at least two"),
    (["fgm", "fgm"], {}, "each method once"),
    (["fgm", "fsa"], {"cv": None}, "pass cv="),
    (["fgm", "fsa"], {"params": {"abess": {}}}, "not compared"),
    (["fgm", "lasso"], {}, "Lasso.* is a regressor"),
    (["fgm", "grfl"], {"params": {"grfl": {"max_features": 3}}}, "would fix"),
])
def test_bad_comparisons_are_clear_errors(methods, kwargs, message):
    settings = {"ks": [2], "cv": 3, "repeats": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        compare(methods, load("breast-cancer"), **settings)


def test_sweep_at_k_refuses_a_fixed_count_and_values_together():
    data = load("breast-cancer")
    with pytest.raises(ValueError, match="not both"):
        sweep("fgm", data, values=[2], ks=[2])
    with pytest.raises(ValueError, match="'k' would fix"):
        sweep("fgm", data, ks=[2], k=3)
    with pytest.raises(ValueError, match="repeats= repeats a cross-validation"):
        sweep("fgm", data, values=[2], repeats=2)


def test_each_rule_of_choosing_k_by_name_for_a_measure_either_way():
    from explorer.experiments import choose_point, one_standard_error

    rows = pd.DataFrame({"method": "lasso", "value": [1, 3, 10, 30], "n_selected": [1, 3, 10, 30],
                         "rmse": [7.7, 2.0, 1.15, 1.1], "rmse_sd": [0.5, 0.3, 0.1, 0.1],
                         "rmse_se": [0.3, 0.2, 0.08, 0.08], "cv": 5, "repeats": 2})
    # the best mean; ESL's rule with the folds' se 0.1/√10 = 0.032 (1.15 is not within
    # 1.132); the corrected se 0.08 (1.15 is within 1.18)
    assert choose_point(rows, "rmse")["value"] == 30
    assert one_standard_error(rows, "rmse")["value"] == 30
    assert one_standard_error(rows, "rmse", corrected=True)["value"] == 10
    rows["accuracy"], rows["accuracy_sd"] = [0.6, 0.9, 0.95, 0.96], 0.01
    rows["accuracy_se"] = 0.02
    assert choose_point(rows, "accuracy", "one-se")["value"] == 30
    assert choose_point(rows, "accuracy", "one-se-corrected")["value"] == 10
    rows.loc[2, "accuracy"] = 0.96  # a tie goes to fewer features
    assert choose_point(rows, "accuracy", "best")["value"] == 10
    with pytest.raises(ValueError, match="rule must be one of"):
        choose_point(rows, "accuracy", "1se")
