"""Sweeps, comparisons, agreement, stability and error control give what the user knows to
every method they fit, so that a comparison with a pinned covariate is a fair one."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from explorer.data import load
from explorer.experiments import agreement, compare, stability, stability_selection, sweep

DATA = load("breast-cancer")
NAMES = DATA.names()
PIN, BAN = 13, 20  # a weak feature and one every method picks


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_agreement_pins_and_bans_for_every_method_by_name():
    plain = agreement(["fsa", "abess", "fisher"], DATA, k=5)
    assert all(BAN in s for s in plain.supports.values())
    assert not all(PIN in s for s in plain.supports.values())
    result = agreement(["fsa", "abess", "fisher"], DATA, k=5,
                       knowledge={"always_include": [NAMES[PIN]], "exclude": [NAMES[BAN]]})
    for name, chosen in result.supports.items():
        assert PIN in chosen and BAN not in chosen and len(chosen) == 5, (name, chosen)


def test_compare_gives_every_method_the_knowledge_and_its_grid_leaves_room():
    seen = []
    result = compare(["fsa", "rfe"], DATA, cv=3, repeats=1, n_points=4,
                     knowledge={"always_include": [PIN, PIN + 1], "exclude": [BAN]},
                     callback=seen.append)
    ks = sorted(set(result.rows["value"]))
    assert ks[0] >= 2 and ks[-1] <= DATA.n_features - 1
    assert result.rows["n_selected"].notna().all()


def test_compare_names_a_method_that_cannot_honour_the_knowledge_before_any_fit():
    with pytest.raises(ValueError, match="GrFL cannot honour always_include"):
        compare(["fsa", "grfl"], DATA, cv=3, knowledge={"always_include": [PIN]})
    with pytest.raises(ValueError, match="knowledge takes"):
        compare(["fsa", "fisher"], DATA, cv=3, knowledge={"pin": [PIN]})


def test_a_sweep_at_k_smaller_than_the_pinned_features_is_refused():
    with pytest.raises(ValueError, match="smaller than the 2 always-included"):
        sweep("fisher", DATA, ks=[1, 4], always_include=[PIN, PIN + 1])
    rows = sweep("fisher", DATA, ks=[2, 4], always_include=[NAMES[PIN], NAMES[PIN + 1]])
    assert rows["n_selected"].tolist() == [2, 4]


def test_stability_and_stability_selection_keep_the_pinned_and_never_the_banned():
    result = stability("fsa", DATA, n_resamples=6, chance=0, k=5,
                       always_include=[NAMES[PIN]], exclude=[BAN])
    assert result.frequency[PIN] == 1.0 and result.frequency[BAN] == 0.0
    chosen = stability_selection("fisher", DATA, ks=[3, 5], n_pairs=3, exclude=[BAN])
    assert np.all(chosen.probabilities[:, BAN] == 0) and BAN not in chosen.stable
    assert chosen.probabilities[:, PIN].max() < 1
    pinned = stability_selection("fisher", DATA, ks=[3, 5], n_pairs=3, always_include=[PIN])
    assert np.all(pinned.probabilities[:, PIN] == 1)
