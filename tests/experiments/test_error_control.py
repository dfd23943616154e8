"""Error control: stability selection's bound holds on planted designs and nothing is stable
on noise; knockoffs (hidimstat) keep their false discovery rate, find the signal, select
nothing on noise, and say why where they cannot be used."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.data import Dataset, make_planted_logistic
from explorer.experiments import knockoff_selection, stability_selection
from explorer.experiments.error_control import mb_bound, shah_samworth_bound


def planted(seed, n=300, p=500, signals=20, rho=0.5, null=False):
    """AR(1)-correlated Gaussian columns (correlated nuisance), ``signals`` of them with
    weights ±1 in a logistic model; ``null``: the labels permuted."""
    return make_planted_logistic(n, p, signals, rho, null=null, seed=seed)


def test_the_bounds_written_out():
    assert mb_bound(10.0, 500, 0.6) == pytest.approx(100 / (0.2 * 500))
    assert np.isnan(mb_bound(10.0, 500, 0.5))
    # Shah & Samworth, unimodal, τ ≤ ¾: c = 2(2τ − 1 − 1/(2B))
    assert shah_samworth_bound(10.0, 500, 0.7, 25) == pytest.approx(
        100 / (500 * 2 * (0.4 - 1 / 50)))
    # τ > ¾: c = (1 + 1/B)/(4(1 − τ + 1/(2B)))
    assert shah_samworth_bound(10.0, 500, 0.9, 25) == pytest.approx(
        100 / (500 * (1 + 1 / 25) / (4 * (0.1 + 1 / 50))))
    assert np.isnan(shah_samworth_bound(300.0, 500, 0.6, 25))  # τ below ½ + q/p
    assert shah_samworth_bound(10.0, 500, 0.6, 25) < mb_bound(10.0, 500, 0.6)


def test_stable_sets_keep_false_selections_below_the_bound():
    false, bounds, empty_on_noise = [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(6):
            data = planted(seed)
            result = stability_selection("fsa", data, ks=[2, 4, 6, 8, 10], n_pairs=8,
                                         seed=seed)
            false.append(len(set(result.stable) - set(data.truth)))
            bounds.append(result.bound)
            noise = stability_selection("fsa", planted(seed, null=True), ks=[2, 4, 6, 8, 10],
                                        n_pairs=8, seed=seed)
            empty_on_noise += noise.stable.size == 0
    assert np.mean(false) <= np.mean(bounds)
    assert empty_on_noise >= 4
    assert result.probabilities.shape == (5, 500)
    assert np.all((0 <= result.probabilities) & (result.probabilities <= 1))
    assert "expected false selections among them at most" in result.verdict()
    assert "exchangeable" in result.verdict()


def test_the_path_table_and_a_stop():
    data = planted(1, n=200, p=60, signals=5)
    seen = []
    result = stability_selection("fsa", data, ks=[1, 3, 5], n_pairs=4,
                                 callback=lambda u: seen.append(u) or u["n_done"] < 2)
    assert [u["n_done"] for u in seen] == [1, 2] and result.n_pairs == 2
    table = result.table()
    assert table["probability"].is_monotonic_decreasing
    assert set(table.loc[table["stable"], "index"]) == set(result.stable)
    path = result.path()
    assert set(path["k"]) <= {1, 3, 5} and (path["probability"] > 0).all()
    # half-samples: a fit at k selects k, so each k's probabilities sum to k
    np.testing.assert_allclose(result.probabilities.sum(axis=1), [1, 3, 5])


@pytest.mark.parametrize("bad", [{"threshold": 0.5}, {"threshold": 1.2}, {"n_pairs": 0},
                                 {"ks": [0, 3]}])
def test_bad_stability_selection_knobs(bad):
    with pytest.raises(ValueError):
        stability_selection("fsa", planted(0, n=100, p=30, signals=3), **bad)


@pytest.mark.slow
def test_knockoffs_control_the_false_discovery_rate_and_find_the_signal():
    fdp, power, empty_on_noise = [], [], 0
    for seed in range(5):
        data = planted(seed, n=600, p=200)
        result = knockoff_selection("fsa", data, fdr=0.1, n_repeats=3, seed=seed)
        chosen = set(result.selected)
        fdp.append(len(chosen - set(data.truth)) / max(1, len(chosen)))
        power.append(len(chosen & set(data.truth)) / len(data.truth))
        noise = knockoff_selection("fsa", planted(seed, n=600, p=200, null=True), fdr=0.1,
                                   n_repeats=3, seed=seed)
        empty_on_noise += noise.selected.size == 0
    se = np.std(fdp, ddof=1) / np.sqrt(len(fdp))
    assert np.mean(fdp) <= 0.1 + se
    assert np.mean(power) >= 0.5
    assert empty_on_noise >= 3
    assert "at most 0.1" in result.verdict() and "Gaussian" in result.verdict()


def test_knockoffs_refuse_a_design_they_cannot_use():
    data = planted(0, n=300, p=500)  # p ≥ n
    result = knockoff_selection("fsa", data)
    assert result.refused and "p = 500 features ≥ n" in result.refused
    assert result.selected.size == 0 and result.verdict().startswith("knockoffs not used")
    sparse = Dataset(X=sp.random(400, 50, density=0.1, format="csr", random_state=0),
                     y=np.r_[np.zeros(200), np.ones(200)])
    assert "sparse" in knockoff_selection("fsa", sparse).refused
    with pytest.raises(ValueError, match="fdr"):
        knockoff_selection("fsa", data, fdr=1.5)
