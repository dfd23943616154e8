"""The paired difference of two methods on shared folds: its interval against the corrected
resampled t-test written out by hand, its verdicts in words, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from explorer.experiments import corrected_se, paired_difference, verdict
from explorer.experiments.inference import interval_of_mean


def _by_hand(a, b, folds, runs, ratio=None):
    """Nadeau & Bengio's corrected resampled t interval (Bouckaert & Frank's repeated-CV
    form), independent of baycomp: Var(d̄) = (1/n + n_test/n_train)·s², t with n − 1 df."""
    d = np.asarray(a) - np.asarray(b)
    n = d.size
    ratio = 1.0 / (folds - 1) if ratio is None else ratio
    se = np.sqrt((1.0 / n + ratio) * np.var(d, ddof=1))
    half = stats.t.ppf(0.975, n - 1) * se
    return d.mean(), d.mean() - half, d.mean() + half, 1 - stats.t.cdf(0, n - 1, d.mean(), se)


@pytest.mark.parametrize("folds,runs", [(5, 1), (5, 3), (10, 2), (3, 4)])
def test_interval_is_the_corrected_resampled_t(folds, runs):
    rng = np.random.default_rng(folds * 10 + runs)
    a = 0.8 + 0.05 * rng.standard_normal(folds * runs)
    b = a - 0.01 + 0.02 * rng.standard_normal(folds * runs)
    d = paired_difference(a, b, method="A", other="B", runs=runs)
    mean, low, high, p = _by_hand(a, b, folds, runs)
    assert (d.mean, d.low, d.high) == pytest.approx((mean, low, high), rel=1e-12)
    assert d.p_better == pytest.approx(p, rel=1e-9)
    assert d.n == folds * runs and d.runs == runs


def test_random_splits_take_their_own_test_to_train_ratio():
    rng = np.random.default_rng(3)
    a, b = rng.random(10), rng.random(10)
    d = paired_difference(a, b, test_to_train=3 / 7)
    mean, low, high, _ = _by_hand(a, b, None, 1, ratio=3 / 7)
    assert (d.low, d.high) == pytest.approx((low, high), rel=1e-12)


def test_the_correction_widens_the_plain_paired_interval():
    rng = np.random.default_rng(0)
    a, b = rng.random(25), rng.random(25)
    d = paired_difference(a, b, runs=5)
    plain = stats.t.ppf(0.975, 24) * np.std(a - b, ddof=1) / 5
    assert d.half_width > 2 * plain  # 1/25 + 1/4 against 1/25 of the variance


def test_verdicts_in_words_and_their_direction():
    ahead = paired_difference([0.9, 0.91, 0.92, 0.9, 0.93], [0.8, 0.82, 0.8, 0.81, 0.83],
                              method="fgm", other="fsa")
    assert ahead.winner == "fgm" and ahead.decided
    assert ahead.verdict.startswith("fgm is ahead of fsa by 10.0 ± 2.3 points")
    assert ahead.verdict.endswith("(accuracy)")
    unclear = paired_difference([0.9, 0.8, 0.85, 0.95, 0.7], [0.85, 0.86, 0.8, 0.9, 0.8],
                                method="fgm", other="fsa")
    assert unclear.winner is None
    assert unclear.verdict.startswith("no difference the data can show between fgm and fsa")
    # RMSE: smaller is better, so a negative difference puts the first method ahead
    rmse = paired_difference([1.0, 1.1, 0.9, 1.0, 1.05], [2.0, 2.1, 1.9, 2.2, 2.0],
                             method="lasso", other="abess", metric="rmse")
    assert rmse.winner == "lasso" and rmse.p_better > 0.99
    assert rmse.verdict.startswith("lasso is ahead of abess by 1.03 ± ")
    assert "points" not in rmse.verdict


def test_a_region_of_practical_equivalence():
    a = np.array([0.900, 0.901, 0.899, 0.900, 0.902, 0.898] * 4)
    d = paired_difference(a, a - 0.001, method="A", other="B", rope=0.01, runs=4)
    assert "A and B are equivalent within ±1.0 points" in d.verdict
    assert verdict("A", "B", "accuracy", 0.0, -0.02, 0.02, rope=0.01).startswith(
        "no difference the data can show")


def test_failed_folds_are_left_out_and_too_few_cannot_be_compared():
    a = np.array([0.9, np.nan, 0.8, 0.85, 0.9, 0.88])
    b = np.array([0.8, 0.7, np.nan, 0.8, 0.82, 0.8])
    d = paired_difference(a, b, runs=2)
    assert d.n == 4 and np.isfinite(d.mean)
    none = paired_difference([np.nan, 0.9], [0.8, np.nan])
    assert not np.isfinite(none.mean) and "cannot be compared" in none.verdict


@pytest.mark.parametrize("kwargs,message", [
    ({"scores": [0.1, 0.2], "other_scores": [0.1]}, "same folds"),
    ({"scores": [0.1, 0.2, 0.3], "other_scores": [0.1, 0.2, 0.3], "runs": 2}, "repetitions"),
    ({"scores": [0.1, 0.2], "other_scores": [0.1, 0.3], "level": 1.0}, "level"),
    ({"scores": [0.1, 0.2], "other_scores": [0.1, 0.3], "rope": -1}, "rope"),
    ({"scores": [0.1, 0.2], "other_scores": [0.1, 0.3], "test_to_train": 0}, "test_to_train"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        paired_difference(**kwargs)


def test_the_interval_of_one_mean_uses_the_corrected_standard_error():
    rng = np.random.default_rng(1)
    x = 0.8 + 0.03 * rng.standard_normal(15)
    mean, low, high, se = interval_of_mean(x, cv=5, repeats=3)
    assert se == pytest.approx(np.std(x, ddof=1) * np.sqrt(1 / 15 + 1 / 4))
    assert high - mean == pytest.approx(stats.t.ppf(0.975, 14) * se)
    assert corrected_se(1.0, 5, 1) == pytest.approx(np.sqrt(1 / 5 + 1 / 4))
    with pytest.raises(ValueError, match="cv ≥ 2"):
        corrected_se(1.0, 1)


def test_an_interval_inside_the_equivalence_region_decides_nothing():
    a = np.array([0.900, 0.901, 0.899, 0.900, 0.902, 0.898] * 4)
    d = paired_difference(a, a - 0.001, rope=0.01, runs=4)
    assert d.low > 0 and not d.decided and d.winner is None
    assert paired_difference(a, a - 0.001, runs=4).winner == "A"


def _shown(delta: float, sigma: float, n: int, reps: int, rng) -> tuple[float, float]:
    """(share of `reps` planted data sets whose verdict decides for A, median detectable)."""
    decided, detectable = 0, []
    for _ in range(reps):
        d = delta + sigma * rng.standard_normal(n)  # independent paired differences
        result = paired_difference(0.5 + d, np.full(n, 0.5), method="A", other="B",
                                   test_to_train=1e-12)  # var = s²/n: no overlap to correct
        decided += result.winner == "A"
        detectable.append(result.detectable)
    return decided / reps, float(np.median(detectable))


def test_a_difference_the_size_of_the_detectable_one_shows_four_times_in_five():
    """The verdict's "only a difference above D would show (4 times in 5)", on planted
    differences: at D the interval leaves zero out about 80 % of the time (the noncentral t's
    power, an independent reference), at 0 about 2.5 %, at D/2 well under 80 %."""
    from scipy import stats

    from explorer.experiments.inference import detectable_difference

    rng = np.random.default_rng(0)
    n, sigma = 10, 0.05
    se = sigma / np.sqrt(n)
    delta = detectable_difference(se, n - 1)
    t = stats.t.ppf(0.975, n - 1)
    exact = 1 - stats.nct.cdf(t, n - 1, delta / se)  # the test's power at delta
    shown, median = _shown(delta, sigma, n, 2000, rng)
    assert 0.72 <= exact <= 0.85
    assert abs(shown - exact) < 0.04, (shown, exact)
    assert 0.85 * delta < median < 1.1 * delta  # the verdict's D estimates the true one
    assert _shown(0.0, sigma, n, 2000, rng)[0] < 0.045  # no difference: rarely "ahead"
    assert _shown(delta / 2, sigma, n, 1000, rng)[0] < 0.45


def test_a_no_difference_verdict_says_what_difference_the_data_could_show():
    unclear = paired_difference([0.9, 0.8, 0.85, 0.95, 0.7], [0.85, 0.86, 0.8, 0.9, 0.8],
                                method="fgm", other="fsa", n_rows=130)
    assert unclear.winner is None
    shown = f"{unclear.detectable * 100:.1f}"
    assert (f"at 130 training rows (5-fold CV × 1) only a difference above {shown} points "
            "would show (4 times in 5)") in unclear.verdict, unclear.verdict
