"""Sweeps: curves over the sparsity knob, streamed rows, stop, threads."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.experiments import monotone_fraction, sweep


def test_sweep_rows_and_monotone_curve(digits38):
    frame = sweep("fisher", digits38, values=[1, 2, 4, 8, 16, 32],
                  metrics=("accuracy", "auc"))
    assert list(frame.columns[:4]) == ["method", "param", "value", "n_selected"]
    assert frame["n_selected"].tolist() == [1, 2, 4, 8, 16, 32]
    assert monotone_fraction(frame["accuracy"]) >= 0.6
    assert frame["accuracy"].iloc[-1] > frame["accuracy"].iloc[0]
    assert (frame["fit_time"] > 0).all()


def test_sweep_default_grid_for_l1_moves_feature_count(digits38):
    frame = sweep("l1-svm", digits38, n_points=6, metrics=("accuracy",))
    assert len(frame) == 6
    assert monotone_fraction(frame["n_selected"]) >= 0.8
    assert frame["n_selected"].iloc[-1] > frame["n_selected"].iloc[0]


def test_sweep_streams_rows_and_stops(digits38):
    rows = []

    def take_two(row):
        rows.append(row)
        return len(rows) < 2

    frame = sweep("rfe", digits38, values=[2, 4, 8, 16], callback=take_two)
    assert len(rows) == 2 and len(frame) == 2
    assert rows[0]["value"] == 2 and "accuracy" in rows[0]


def test_sweep_threads_match_serial(digits38):
    a = sweep("fisher", digits38, values=[2, 4, 8], n_jobs=1)
    b = sweep("fisher", digits38, values=[2, 4, 8], n_jobs=2)
    np.testing.assert_allclose(a["accuracy"], b["accuracy"])


def test_sweep_splits_a_dataset_without_test_part():
    frame = sweep("fisher", "breast-cancer", values=[2, 5], metrics=("accuracy", "f1"))
    assert len(frame) == 2 and frame["accuracy"].between(0.8, 1).all()


def test_sweep_reports_recovery_when_truth_is_known():
    from explorer.data import make

    ds = make("fsa-correlated", n_samples=300, n_features=100, k_star=3)
    frame = sweep("fisher", ds, values=[3, 10])
    assert "percent_found" in frame and frame["found"].iloc[-1] >= frame["found"].iloc[0]


def test_a_refusal_names_the_setting_or_the_methods_that_fit():
    from explorer.data import DataError, load
    from explorer.experiments import check_compatible, settings_for_task

    ranking, regression = load("fsa-ranking"), load("fsa-regression")
    assert settings_for_task("fsa", "ranking") == {"loss": "ranking"}
    assert settings_for_task("fsa", "classification") == {}
    assert settings_for_task("fgm", "ranking") is None
    with pytest.raises(DataError, match="FSA is a classifier but the target is a ranking "
                                        "target: set loss='ranking'"):
        check_compatible("fsa", ranking)
    with pytest.raises(DataError, match=r"FGM is a classifier .* regression target; methods "
                                        r"for it: .*Lasso.*FSA \(loss='squared'\)"):
        check_compatible("fgm", regression)
    check_compatible("fsa", ranking, {"loss": "ranking"})  # the named setting fits


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_sweep_stops_when_its_callback_says_so(n_jobs):
    """In turn or in threads: the callback's False ends the sweep with the rows so far."""
    seen = []

    def enough(row):
        seen.append(row["value"])
        return len(seen) < 2

    rows = sweep("fisher", "digits-3v8", values=[1, 2, 4, 8, 16, 32], n_jobs=n_jobs,
                 callback=enough)
    assert len(rows) == 2 and sorted(rows["value"]) == sorted(seen)
    threaded = sweep("fisher", "digits-3v8", values=[1, 2, 4, 8], n_jobs=n_jobs)
    serial = sweep("fisher", "digits-3v8", values=[1, 2, 4, 8])
    np.testing.assert_allclose(threaded["accuracy"], serial["accuracy"])


def test_a_grouped_sweep_in_k_runs_up_to_the_number_of_groups():
    """With groups, FGM's k counts groups: its default grid stops at their number."""
    from explorer.data import make

    data = make("fgm-groups", n_samples=160, n_groups=12, group_size=3,
                n_informative_groups=2, n_test=50)
    rows = sweep("fgm", data, n_points=5)
    assert rows["value"].max() == 12 and rows["value"].min() == 1
    assert rows["n_selected"].max() <= 12 * 3  # whole groups of 3
    assert (rows["n_selected"] % 3 == 0).all()
