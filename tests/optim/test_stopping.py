"""One stopping rule (explorer/optim/stopping.py): its knobs are checked and its relative gap
is what it says."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.optim.stopping import Stopping, check_tolerance, relative_gap


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "x", None])
def test_bad_tolerances_raise(bad):
    with pytest.raises(ValueError, match="tol"):
        Stopping(bad, 10)
    with pytest.raises(ValueError):
        check_tolerance("tol", bad)


@pytest.mark.parametrize("bad", [0, -3, 2.5, float("nan")])
def test_bad_budgets_raise(bad):
    with pytest.raises(ValueError, match="max_iter"):
        Stopping(1e-3, bad)


def test_relative_gap():
    assert relative_gap(2.0, 1.0) == 0.5
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(1.0, None) == np.inf
    assert relative_gap(1.0, 1.5) == 0.0  # rounding can put the bound above
