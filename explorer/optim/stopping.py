"""One stopping rule for every iterative loop: a certified optimality measure at most ``tol``,
or the loop's work budget.

The measure is the duality gap relative to the objective, ``(upper − lower)/|upper|``, where a
loop has a dual (FGM's APG master, the bundle master, the cutting-plane loop); otherwise the
relative KKT residual (the gradient mapping of a proximal step, GrFL's group master). Either
way it is a statement about the distance to the optimum, not about the last step's progress,
and every record reports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TINY = 1e-300


@dataclass(frozen=True)
class Stopping:
    """Stop when ``measure ≤ tol`` or after ``max_iter`` steps.

    ``check_every`` bounds the steps between two evaluations of the measure when it costs a
    pass over the data (a certificate is also checked as soon as the objective stops moving by
    more than ``tol`` relative).

    ``stall`` (optional) also ends the loop, *uncertified*, once a step changes the objective by
    at most ``stall`` relative: the paper's inner rule (FGM: 1e-4), for solves that only steer
    an outer loop (an ill-conditioned master's gap can take thousands of steps to close while
    its objective is within 1 % of the optimum). A final answer never uses it."""

    tol: float
    max_iter: int
    check_every: int = 10
    stall: float | None = None

    def __post_init__(self):
        check_tolerance("tol", self.tol)
        if not isinstance(self.max_iter, int | float) or not self.max_iter >= 1 \
                or self.max_iter != int(self.max_iter):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if int(self.check_every) < 1:
            raise ValueError(f"check_every must be at least 1, got {self.check_every!r}")
        object.__setattr__(self, "max_iter", int(self.max_iter))
        object.__setattr__(self, "check_every", int(self.check_every))
        if self.stall is not None:
            object.__setattr__(self, "stall", check_tolerance("stall", self.stall))

    def stalled(self, previous: float, current: float) -> bool:
        """Whether one step's relative objective change is within ``stall``."""
        return self.stall is not None and \
            abs(previous - current) <= self.stall * max(abs(current), TINY)

    def met(self, measure: float) -> bool:
        return bool(measure <= self.tol)


def check_tolerance(name: str, value) -> float:
    """A tolerance is a finite number ≥ 0 (0 means: run to the budget)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number ≥ 0, got {value!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
    return value


COARSE_GAP = 1e-2  # relative gap of the masters that only choose the next block
COARSE_STALL = 1e-4  # ... or the paper's relative objective change, whichever comes first


def coarse_stopping(tol: float, max_iter: int) -> Stopping:
    """The one rule for a restricted master that only chooses the next block (FGM, FS-multi,
    GrFL inside their outer loops): its certificate at ``max(tol, COARSE_GAP)`` or, uncertified,
    the paper's relative objective change ``COARSE_STALL`` (FGM's inner rule), whichever comes
    first. The last master of a fit is solved to ``tol`` itself."""
    return Stopping(max(float(tol), COARSE_GAP), max_iter, stall=COARSE_STALL)


def relative_gap(upper: float, lower: float | None) -> float:
    """``(upper − lower)/|upper|``, 0 when both are 0, ∞ without a lower bound."""
    if lower is None or not math.isfinite(lower) or not math.isfinite(upper):
        return math.inf
    gap = max(float(upper) - float(lower), 0.0)
    if gap == 0.0:
        return 0.0
    return gap / max(abs(float(upper)), TINY)
