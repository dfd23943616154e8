"""Stability of a selection (Nogueira, Sechidis & Brown, JMLR 2018) and agreement between
methods."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from explorer.data import load, make
from explorer.experiments import (
    MAX_COUNT_FITS,
    agreement,
    fit_at_k,
    mean_jaccard,
    phi,
    phi_interval,
    phi_variance,
    stability,
    stability_difference,
    subsample,
)
from explorer.experiments.resampling import _phi_terms


def _direct_phi(Z):
    """Eq. 4 written out: 1 − (1/d Σ_f s_f²) / (k̄/d (1 − k̄/d)), s_f² the unbiased sample
    variance of column f, k̄ the mean row sum."""
    Z = np.asarray(Z, dtype=float)
    M, d = Z.shape
    s2 = np.array([np.var(Z[:, f], ddof=1) for f in range(d)])
    kbar = Z.sum(axis=1).mean()
    return 1.0 - s2.mean() / ((kbar / d) * (1.0 - kbar / d))


def _random_sets(M, d, k, seed=0):
    rng = np.random.default_rng(seed)
    Z = np.zeros((M, d), dtype=bool)
    for i in range(M):
        Z[i, rng.choice(d, size=k, replace=False)] = True
    return Z


def test_phi_equals_equation_4_written_out():
    rng = np.random.default_rng(3)
    for M, d in ((2, 5), (7, 30), (40, 12)):
        Z = rng.random((M, d)) < 0.3
        Z[0, 0] = True  # not all empty
        assert phi(Z) == pytest.approx(_direct_phi(Z), abs=1e-12)


def test_phi_is_one_for_identical_sets_and_near_zero_for_random_ones():
    same = np.tile(np.arange(50) < 7, (20, 1))
    assert phi(same) == pytest.approx(1.0)
    assert mean_jaccard(same) == pytest.approx(1.0)
    values = [phi(_random_sets(30, 200, 10, seed=s)) for s in range(20)]
    assert abs(np.mean(values)) < 0.02, np.mean(values)
    assert np.isnan(phi(np.zeros((5, 8), dtype=bool)))  # no selection: undefined


def test_the_interval_covers_phi_and_shrinks_with_more_resamples():
    rng = np.random.default_rng(0)
    p = np.r_[np.full(5, 0.9), np.full(45, 0.05)]  # 5 stable features, noise elsewhere
    widths = []
    for M in (10, 40, 160):
        Z = rng.random((M, p.size)) < p
        low, high = phi_interval(Z)
        assert low <= phi(Z) <= high
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2], widths


def test_subsamples_are_stratified_without_replacement_and_reproducible():
    y = np.r_[np.zeros(30), np.ones(10)]
    rows = subsample(y, 0.5, seed=4, index=2, task="classification")
    assert rows.size == np.unique(rows).size == 20
    assert np.sum(y[rows] == 1) == 5
    np.testing.assert_array_equal(rows, subsample(y, 0.5, 4, 2, "classification"))
    assert not np.array_equal(rows, subsample(y, 0.5, 4, 3, "classification"))


def test_stability_of_fgm_streams_and_names_the_features():
    data = make("fgm-type1")
    seen = []
    result = stability("fgm", data, n_resamples=6, k=5, callback=seen.append, chance=2)
    assert result.selected.shape == (6, data.n_features)
    assert np.all(result.selected.sum(axis=1) == 5)
    own = [u for u in seen if u["stage"] == "resample"]
    assert [u["n_done"] for u in own] == list(range(1, 7))
    assert np.isnan(own[0]["phi"]) and own[-1]["phi"] == pytest.approx(result.phi)
    # then the chance reference: two permutations of the labels, five resamples each
    noise = [u for u in seen if u["stage"] == "chance"]
    assert [(u["permutation"], u["n_done"]) for u in noise] == \
        [(p, i) for p in range(2) for i in range(1, 6)]
    assert seen.index(noise[0]) == len(own)
    assert result.chance.n_permutations == 2 and result.chance.resamples_each == 5
    assert result.phi == pytest.approx(_direct_phi(result.selected), abs=1e-12)
    table = result.table()
    assert table.loc[0, "frequency"] == result.frequency.max()
    assert table.loc[0, "feature"] == data.names()[table.loc[0, "index"]]
    # a stop keeps what was done
    stopped = stability("fgm", data, n_resamples=6, k=5, callback=lambda u: u["n_done"] < 3,
                        chance=2)
    assert stopped.n_resamples == 3
    np.testing.assert_array_equal(stopped.selected, result.selected[:3])


@pytest.mark.parametrize("bad", [{"n_resamples": 1}, {"fraction": 0.0}, {"fraction": 1.0},
                                 {"fraction": float("nan")}])
def test_bad_stability_knobs_are_clear_errors(bad):
    with pytest.raises(ValueError, match="n_resamples|fraction"):
        stability("fgm", make("fgm-type1"), **bad)


def test_agreement_of_methods_at_the_same_k():
    data = make("fgm-type1")
    result = agreement(["fgm", "fisher", "fs-manifold"], data, k=5)
    J = result.jaccard
    assert list(J.index) == ["fgm", "fisher", "fs-manifold"]
    np.testing.assert_allclose(np.diag(J), 1.0)
    np.testing.assert_allclose(J.values, J.values.T)
    assert all(len(s) == 5 for s in result.supports.values())
    a, b = result.supports["fgm"], result.supports["fisher"]
    assert J.loc["fgm", "fisher"] == len(np.intersect1d(a, b)) / len(np.union1d(a, b))
    assert result.only("fgm", "fisher") == [data.names()[j] for j in np.setdiff1d(a, b)]
    assert set(result.recovery) == {"fgm", "fisher", "fs-manifold"}
    assert len(result.table()) == 3
    assert result.settings == {"fgm": {"k": 5}, "fisher": {"k": 5}, "fs-manifold": {"m": 5}}
    assert result.off_target() == {}


def test_agreement_asks_grfl_for_k_inputs():
    """GrFL's count knob k (inputs by backward elimination) is what fit_at_k asks for."""
    data = make("xor").split(test_size=0.3, seed=0)
    est, setting = fit_at_k("grfl", data, 10)
    assert setting == {"k": 10} and est.n_selected_ == 10
    result = agreement(["fgm", "grfl"], "xor", k=2)
    assert len(result.supports["fgm"]) == len(result.supports["grfl"]) == 2
    assert result.off_target() == {}
    with pytest.raises(ValueError, match="at least 1|k"):
        fit_at_k("grfl", data, 0)


def test_a_method_without_a_count_knob_is_searched_through_its_cap(monkeypatch):
    """A method whose only integer knob is a cap on what it learns (GrFL without k) is
    searched for k input features within a bound on its fits, and a count it cannot reach is
    returned as the nearest, not hidden."""
    from explorer.methods import GrFL

    class CappedGrFL(GrFL):
        def __init__(self, max_features: int = 100, random_state: int | None = 0):
            super().__init__(max_features=max_features, random_state=random_state)

    caps = []
    fit = GrFL.fit

    def counted(self, *args, **kwargs):
        caps.append(self.max_features)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(GrFL, "fit", counted)
    data = make("xor").split(test_size=0.3, seed=0)
    est, setting = fit_at_k(CappedGrFL, data, 10)
    assert est.n_selected_ == 10 and setting == {"max_features": est.max_features}
    assert 1 <= len(caps) <= MAX_COUNT_FITS
    # the search's answer is a cold fit at that cap
    cold = GrFL(max_features=setting["max_features"]).fit(data.X, data.y)
    assert cold.n_selected_ == 10

    caps.clear()
    est, setting = fit_at_k(CappedGrFL, data, 2, max_fits=3)  # one pair spans 3 inputs here
    assert len(caps) <= 3 and est.n_selected_ > 2
    with pytest.raises(ValueError, match="at least 1"):
        fit_at_k(CappedGrFL, data, 0)


def test_the_interval_is_clipped_to_the_range_of_phi():
    rng = np.random.default_rng(0)
    Z = rng.random((3, 8)) < 0.5  # three selections: a wide interval
    low, high = phi_interval(Z)
    assert -1.0 <= low <= high <= 1.0


def test_phi_on_permuted_labels_lies_in_its_chance_band():
    inside = 0
    for seed in range(10):
        data = load("breast-cancer")
        data.y = np.random.default_rng(100 + seed).permutation(data.y)
        result = stability("fsa", data, k=5, n_resamples=20, seed=seed)
        low, high = result.chance.band
        inside += low <= result.phi <= high
        assert "cannot show it is more stable" in result.verdict()
    assert inside >= 9


def test_real_labels_are_more_stable_than_the_chance_reference():
    result = stability("fgm", load("breast-cancer"), k=5, n_resamples=20)
    assert result.chance.n_permutations == 10 and result.chance.resamples_each == 5
    assert result.phi > result.chance.band[1]
    assert result.verdict().endswith("more stable than on noise")
    assert result.covers == "resamples of this training set"
    assert stability("fgm", load("breast-cancer"), k=5, n_resamples=4, chance=0).chance is None


def test_across_splits_the_interval_is_the_splits_spread():
    result = stability("fsa", load("breast-cancer"), k=5, n_resamples=6, splits=3, chance=0)
    assert result.n_resamples == 18 and len(result.split_phis) == 3
    assert result.phi == pytest.approx(np.mean(result.split_phis))
    half = stats.t.ppf(0.975, 2) * np.std(result.split_phis, ddof=1) / np.sqrt(3)
    assert result.phi_ci == pytest.approx((max(-1, result.phi - half), min(1, result.phi + half)))
    assert result.covers.startswith("3 training splits")
    one = stability("fsa", load("breast-cancer"), k=5, n_resamples=6, chance=0)
    np.testing.assert_array_equal(result.selected[:6], one.selected)  # split 0 is the seed's


def test_stability_differences_pair_the_same_resamples():
    data = load("breast-cancer")
    a = stability("fgm", data, k=5, n_resamples=12, chance=0)
    b = stability("fsa", data, k=5, n_resamples=12, chance=0)
    d = stability_difference(a, b)
    assert d["difference"] == pytest.approx(a.phi - b.phi)
    # the delta method on both selections' terms: Var(A − B) = Var A + Var B − 2 Cov(A, B)
    _, ta = _phi_terms(a.selected)
    _, tb = _phi_terms(b.selected)
    cov = 4 / 12**2 * np.sum((ta - ta.mean()) * (tb - tb.mean()))
    var = phi_variance(a.selected) + phi_variance(b.selected) - 2 * cov
    assert (d["high"] - d["low"]) / 2 == pytest.approx(1.959964 * np.sqrt(var), rel=1e-5)
    assert stability_difference(b, a)["difference"] == pytest.approx(-d["difference"])
    same = stability_difference(a, a)
    assert same["low"] == same["high"] == 0.0 and "no difference" in same["verdict"]
    other = stability("fsa", data, k=5, n_resamples=10, chance=0)
    with pytest.raises(ValueError, match="same resamples"):
        stability_difference(a, other)


def test_an_empty_model_says_so():
    data = make("fgm-type1")
    result = stability("fgm", data, n_resamples=3, k=5, chance=0)
    empty = type(result)(method="x", params={}, selected=np.zeros((4, 6), dtype=bool),
                         feature_names=[f"f{i}" for i in range(6)], fit_times=np.zeros(4),
                         fraction=0.5, seed=0)
    assert empty.empty and "selected no feature" in empty.verdict()
    assert not result.empty
