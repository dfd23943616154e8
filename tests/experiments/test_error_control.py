"""Stability selection with the bound the user chose: two of pfer, cutoff and q give the
third (as R's stabs), the bound holds on planted designs with raw and with standardised
columns, breaks without a word on neither, and the README's example says something."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

from explorer.data import load, make_planted_logistic
from explorer.experiments import permutation_check, stability_selection
from explorer.experiments.pfer import bound, mb_bound, shah_samworth_bound, solve


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def planted(seed, n=300, p=500, signals=20, rho=0.5, null=False):
    """AR(1)-correlated Gaussian columns, ``signals`` of them with weights ±1 in a logistic
    model; ``null``: the labels permuted."""
    return make_planted_logistic(n, p, signals, rho, null=null, seed=seed)


def raw(data, seed):
    """The same design on columns in other units: offsets and scales over six decades."""
    rng = np.random.default_rng(seed + 99)
    scale = 10.0 ** rng.uniform(-3, 3, data.n_features)
    offset = rng.exponential(5.0, data.n_features)
    return replace(data, X=(np.asarray(data.X) + offset) * scale)


def test_the_bounds_written_out():
    assert mb_bound(10.0, 500, 0.6) == pytest.approx(100 / (0.2 * 500))
    assert np.isnan(mb_bound(10.0, 500, 0.5))
    # Shah & Samworth, unimodal, cutoff ≤ ¾: c = 2(2τ − 1 − 1/(2B))
    assert shah_samworth_bound(10.0, 500, 0.7, 25) == pytest.approx(
        100 / (500 * 2 * (0.4 - 1 / 50)))
    # cutoff > ¾: c = (1 + 1/B)/(4(1 − τ + 1/(2B)))
    assert shah_samworth_bound(10.0, 500, 0.9, 25) == pytest.approx(
        100 / (500 * (1 + 1 / 25) / (4 * (0.1 + 1 / 50))))
    assert np.isnan(shah_samworth_bound(300.0, 500, 0.6, 25))  # cutoff below ½ + q/p
    assert shah_samworth_bound(10.0, 500, 0.6, 25) < mb_bound(10.0, 500, 0.6)


@pytest.mark.parametrize("assumption", ["unimodal", "none"])
@pytest.mark.parametrize("p", [30, 64, 500, 5000])
def test_two_of_pfer_cutoff_and_q_give_the_third(assumption, p):
    pairs = 25
    pfer, cutoff, q = solve(p, pairs, assumption=assumption)
    assert (pfer, cutoff) == (1.0, 0.75)
    assert bound(q, p, cutoff, pairs, assumption) <= 1.0  # q is within the PFER …
    above = bound(q + 1, p, cutoff, pairs, assumption)
    assert not above <= 1.0  # … and the largest that is
    # q and cutoff give the bound; pfer and q give the smallest cutoff that keeps it
    assert solve(p, pairs, cutoff=cutoff, q=q, assumption=assumption)[0] == \
        pytest.approx(bound(q, p, cutoff, pairs, assumption))
    _, smallest, _ = solve(p, pairs, pfer=1.0, q=q, assumption=assumption)
    assert smallest <= cutoff and bound(q, p, smallest, pairs, assumption) <= 1.0 + 1e-9
    assert not bound(q, p, smallest - 1e-6, pairs, assumption) <= 1.0


@pytest.mark.parametrize("bad, match", [
    ({"pfer": 1, "cutoff": 0.8, "q": 3}, "give two"),
    ({"pfer": 0}, "pfer must be"), ({"pfer": float("nan")}, "pfer must be"),
    ({"cutoff": 0.5}, "cutoff must be"), ({"cutoff": 1.2}, "cutoff must be"),
    ({"q": 0}, "q must be"), ({"q": 2.5}, "q must be"), ({"q": 31}, "q must be"),
    ({"pfer": 0.001, "cutoff": 0.6}, "no fit may select"),
    ({"pfer": 0.01, "q": 20}, "no cutoff up to 1"),
])
def test_bad_error_control_knobs_say_what_to_change(bad, match):
    with pytest.raises(ValueError, match=match):
        solve(30, 25, **bad)


def test_the_readme_example_reports_a_bound_that_says_something():
    data = load("digits-3v8").split(test_size=0.3, seed=0)
    result = stability_selection("fgm", data)
    assert result.pfer == 1 and result.bound <= 1.0
    assert result.stable.size >= 1
    assert f"at most {result.bound:.2f}, within the PFER of 1 you chose" in result.verdict()
    assert "the PFER of 1 you chose" in result.verdict()
    assert max(result.ks) == result.pinned.size + result.q
    table = result.table()
    assert set(table.loc[table["stable"], "index"]) == set(result.stable)


def _false_and_bound(method, make, seeds, null=False):
    """Mean false features in the stable set and mean bound over ``seeds``."""
    false, bounds = [], []
    for seed in seeds:
        data = make(seed, null)
        result = stability_selection(method, data, n_pairs=8, seed=seed)
        truth = set() if null else set(data.truth.tolist())
        false.append(len(set(result.stable.tolist()) - truth))
        bounds.append(result.bound)
    return np.mean(false), np.mean(bounds)


@pytest.mark.parametrize("method", ["fsa", "fgm"])
def test_the_bound_holds_on_raw_and_on_standardised_columns(method):
    designs = (lambda s, null: planted(s, null=null),
               lambda s, null: raw(planted(s, null=null), s))
    for make in designs:
        for null in (False, True):
            false, bounds = _false_and_bound(method, make, range(3), null)
            assert false <= bounds <= 1.0, (method, null, false, bounds)


def loud_and_quiet(seed):
    """Permuted labels on columns of two kinds: five at mean 0 and sd 1, the rest far from
    zero on a narrow spread — to a method that scales by the root mean square (FGM's
    default) the five are loud whatever the labels."""
    data = planted(seed, n=200, p=200, signals=5, rho=0.0, null=True)
    X = np.asarray(data.X).copy()
    X[:, 5:] = 500.0 + 0.5 * X[:, 5:]
    return replace(data, X=X)


def test_columns_on_different_scales_are_standardised_or_the_verdict_says_the_bound_fails():
    for seed in range(2):
        data = loud_and_quiet(seed)
        as_loaded = stability_selection("fgm", data, n_pairs=6, seed=seed, scale=None)
        assert as_loaded.stable.size > as_loaded.bound  # every one false: broken …
        assert not as_loaded.holds and "the bound does not hold here" in as_loaded.verdict()
        standard = stability_selection("fgm", data, n_pairs=6, seed=seed)
        assert standard.stable.size <= standard.bound and standard.holds  # … and kept
        assert "standardised for the selection" in standard.verdict()


def test_a_permutation_check_reports_the_stable_count_on_noise():
    data = loud_and_quiet(0)
    as_loaded = stability_selection("fgm", data, n_pairs=4, scale=None, permutations=1)
    assert as_loaded.null_stable.tolist() == [5]
    assert "On permuted labels this run keeps 5.0 stable features" in as_loaded.verdict()
    data = planted(1)
    checked = permutation_check(stability_selection("fsa", data, n_pairs=4), data, 2)
    assert len(checked.null_stable) == 2 and "mean of 2 permutations" in checked.verdict()
    assert len(permutation_check(checked, data, 1).null_stable) == 3
    with pytest.raises(ValueError, match="measured on 500"):
        permutation_check(checked, planted(1, p=60))


def test_pinned_features_are_stable_and_outside_the_bound():
    data = load("breast-cancer")
    result = stability_selection("fisher", data, n_pairs=3, always_include=[13],
                                 exclude=[20])
    assert 13 in result.stable and 20 not in result.stable
    assert result.n_candidates == 28 and result.ks[0] >= 2
    assert np.all(result.probabilities[:, 13] == 1) and np.all(result.probabilities[:, 20] == 0)
    assert "1 of them always included by you and outside the bound" in result.verdict()


def test_the_path_table_and_a_stop():
    data = planted(1, n=200, p=60, signals=5)
    seen = []
    result = stability_selection("fsa", data, ks=[1, 3, 5], n_pairs=4,
                                 callback=lambda u: seen.append(u) or u["n_done"] < 2)
    assert [u["n_done"] for u in seen] == [1, 2] and result.n_pairs == 2
    path = result.path()
    assert set(path["k"]) <= {1, 3, 5} and (path["probability"] > 0).all()
    # half-samples: a fit at k selects k, so each k's probabilities sum to k
    np.testing.assert_allclose(result.probabilities.sum(axis=1), [1, 3, 5])
    # each fit's selection holds its first q features: q of them at most
    assert result.frequency.sum() <= result.q + 1e-9


@pytest.mark.parametrize("bad", [{"cutoff": 0.5}, {"cutoff": 1.2}, {"n_pairs": 0},
                                 {"ks": [0, 3]}, {"scale": "minmax"}, {"permutations": -1},
                                 {"assumption": "r-concave"}])
def test_bad_stability_selection_knobs(bad):
    with pytest.raises(ValueError):
        stability_selection("fsa", planted(0, n=100, p=30, signals=3), **bad)
