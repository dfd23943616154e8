"""The restricted problem FGM's master and its refinement are given, as skglm's solvers take a
datafit: the data term C Σ l(y_i f_i) with its stopping rule and the user's *Stop*."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...optim import MarginLoss, Stopping


@dataclass(frozen=True)
class Restricted:
    """The data term C Σ_i l(y_i f_i) (``loss``, labels ``y`` ±1, an unpenalised intercept
    when ``fit_intercept``), solved to ``stopping``, polling ``interrupt`` (a user's *Stop*).
    The refinement refits and compares ½‖w‖² + it on chosen columns (FGM's master with one
    block, eq. 31); the master (:class:`~explorer.engines.fgm.L12Master`) solves
    ½(Σ_t‖ω_t‖)² + it over the generated blocks."""

    y: np.ndarray
    loss: MarginLoss
    C: float
    fit_intercept: bool
    stopping: Stopping
    interrupt: Callable[[], bool] | None = None

    def data_loss(self, margins: np.ndarray) -> float:
        """The restricted loss C Σ l(y_i f_i) at the decision values ``margins``."""
        return float(self.C) * float(np.sum(self.loss.value(self.y * margins)))

    def stopped(self) -> bool:
        return self.interrupt is not None and bool(self.interrupt())
