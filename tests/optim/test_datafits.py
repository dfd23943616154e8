"""The data terms (explorer/optim/datafits.py): gradients by finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.optim.datafits import Datafit
from explorer.optim.losses import LOSSES, make_loss


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_datafit_gradient_is_the_finite_difference(dtype):
    rng = np.random.default_rng(0)
    y = np.where(rng.standard_normal(7) > 0, 1.0, -1.0).astype(dtype)
    f = rng.standard_normal(7).astype(dtype)
    for name in sorted(LOSSES):
        fit = Datafit(make_loss(name), y, scale=2.0, mean=name != "squared")
        g = fit.gradient(f.astype(np.float64))
        h = 1e-6
        for i in range(7):
            e = np.zeros(7)
            e[i] = h
            fd = (fit.value(f + e) - fit.value(f - e)) / (2 * h)
            assert g[i] == pytest.approx(fd, abs=1e-5)
