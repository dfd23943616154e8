"""Every method held to a budget of passes over X on small fixed designs: counts the methods
keep of their own work (``n_passes_``), deterministic, not timings (``make bench-guard`` times
them). The budgets are checked in beside the speed guard's (``benchmarks/budgets.json``,
section ``"passes"``) at 1.25× the count when they were set: a change that makes a method
read X markedly more often fails here, and says so in its commit by raising the budget."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from explorer import FGM, FSA, FSManifold, FSMulti, GrFL, load
from explorer.data import make

BUDGETS = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" /
                      "budgets.json").read_text())["passes"]


def _fgm_design():
    return make("fgm-type1", n_samples=400, n_features=2000, n_test=50, seed=0)


def _text():
    return make("text-like", n_samples=600, n_features=2000, seed=0)


CASES = {
    "fgm": (lambda: FGM(B=5), _fgm_design),
    "fgm refine": (lambda: FGM(k=20, refine="auto"), _fgm_design),
    "fs-multi": (lambda: FSMulti(B=5, measure="f1"), _text),
    "fsa": (lambda: FSA(k=10), lambda: make("fsa-correlated", n_samples=300, n_features=300,
                                            k_star=10, n_test=50, seed=0)),
    "fsa sparse": (lambda: FSA(k=10), _text),
    "grfl": (lambda: GrFL(max_features=10), lambda: make("xor", n_samples=400, seed=0)),
    "fs-manifold": (lambda: FSManifold(m=10), lambda: load("digits-3v8-semi")),
}


def test_every_budget_has_its_design():
    assert set(CASES) == set(BUDGETS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_passes_within_budget(name):
    make_estimator, design = CASES[name]
    data = design()
    extra = {"X_unlabeled": data.X_unlabeled} if data.X_unlabeled is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_estimator().fit(data.X, data.y, **extra)
    assert est.n_passes_ > 0
    assert est.n_passes_ <= BUDGETS[name], (
        f"{name} read X {est.n_passes_:.1f} times, its budget is {BUDGETS[name]}: if the "
        "extra work buys accuracy, raise the budget in benchmarks/budgets.json and say both "
        "numbers in the commit")
