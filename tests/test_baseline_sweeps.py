"""The baselines' default sweep grids fit the data: on every catalogue dataset a baseline
can fit, each point of its sweep selects at least one feature and none aborts the sweep.
A penalty's grid is fitted (only a fit tells how many features a penalty leaves); a count's
grid (RFE, Fisher, abess: k itself) is checked to lie in 1 … p, its fits being tested where
each method's k is."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from explorer.data import catalogue, make
from explorer.experiments import check_compatible, sweep
from explorer.methods import get_method

BASELINES = ("l1-svm", "l1-logreg", "lasso", "rfe", "fisher", "abess", "abess-reg")


@pytest.mark.slow
@pytest.mark.parametrize("name", catalogue())
def test_every_baseline_sweep_selects_features_at_every_point(name):
    data = make(name)
    ran = 0
    for method in BASELINES:
        try:
            check_compatible(method, data)
        except Exception:  # noqa: BLE001 - a method the dataset's target does not suit
            continue
        cls = get_method(method)
        if cls.sparsity_param == "k":
            ks = cls.sweep_values(data.X, data.y, 3)
            assert len(ks) >= 2 and 1 <= min(ks) and max(ks) <= data.n_features, (method, ks)
            ran += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = sweep(method, data, n_points=3)
        assert "error" not in rows or rows["error"].isna().all(), (method, rows["error"])
        assert len(rows) >= 2 and np.all(rows["n_selected"] >= 1), \
            (method, rows["n_selected"].tolist())
        ran += 1
    assert ran >= 1  # every dataset has a baseline


def test_l1_logreg_sweep_probes_count_in_few_iterations_and_fits_keep_theirs(monkeypatch):
    """The C grid's probe fits only count features: ℓ1-LogReg stops them at its
    ``probe_max_iter`` (on pd-speech's raw columns a converged probe took up to 25 s, and the
    grid came out the same); the sweep's own fits keep the user's ``max_iter``."""
    cls = get_method("l1-logreg")
    data = make("breast-cancer")
    seen = []
    original = cls._one

    def spy(self, X, y, C, multi):
        seen.append(self.max_iter)
        return original(self, X, y, C, multi)

    monkeypatch.setattr(cls, "_one", spy)
    grid = cls.sweep_values(data.X, data.y, 3)
    assert len(grid) == 3 and seen and set(seen) == {cls.probe_max_iter} == {100}
    seen.clear()
    cls(C=grid[1], max_iter=700).fit(data.X, data.y)
    assert seen == [700]
