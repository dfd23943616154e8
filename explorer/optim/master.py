"""What a restricted master returns — one result type for every outer loop's master (FGM's ℓ1²
primal, GrFL's group master, FS-multi's bundle) — and what a fit leaves for the next one (one
warm-start type for every method).

A master speaks the protocol :func:`~explorer.optim.cutting_plane.cutting_plane` drives,
declared as :class:`Master`: ``initial() -> MasterSolution`` (the empty model),
``add_block(columns)``, ``solve()``, ``polish()`` (re-solve the last master to the fine
tolerance, or None when there is nothing to polish) and ``lower_bound(solution, top_scores)``
(a certified lower bound on the full problem, or None); a :class:`WeightedMaster` also tells
its weights per column (the loop counts the candidates it holds from them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass
class MasterSolution:
    """What a restricted master returns after a solve.

    ``objective`` is a primal value (an upper bound on the full problem's optimum since the
    restricted solution is feasible for it); ``signal`` is the vector s whose scores
    ``‖X_Gᵀs‖²`` rank the next candidates; ``dual_base`` (if the master has a dual) is the part
    of the dual objective that does not depend on the block choice, so that
    ``dual_base − ½ Σ top-B scores`` is a certified lower bound.
    """

    objective: float
    signal: np.ndarray
    trace: list[float] = field(default_factory=list)
    inner_steps: int = 0
    dual_base: float | None = None
    block_norms: np.ndarray | None = None
    info: dict = field(default_factory=dict)


@runtime_checkable
class Master(Protocol):
    """A restricted master of the outer cutting-plane loop (FGM's ℓ1² primal, FS-multi's
    bundle, GrFL's group master)."""

    def initial(self) -> MasterSolution:
        """The empty model's solution (before any block)."""

    def add_block(self, columns) -> None:
        """Take a generated block's materialised columns."""

    def solve(self) -> MasterSolution:
        """Solve over the blocks so far (coarsely: it only chooses the next block)."""

    def polish(self) -> MasterSolution | None:
        """Re-solve the last master to the fine tolerance (None: nothing to polish)."""

    def lower_bound(self, solution: MasterSolution, top_scores: np.ndarray) -> float | None:
        """A certified lower bound on the full problem from the worst-case block's scores."""


@runtime_checkable
class WeightedMaster(Master, Protocol):
    """A master that tells its weights: (columns, weights) pairs, one per block."""

    def weights_by_column(self) -> list:
        """The blocks' columns with their weights."""


@dataclass
class WarmStart:
    """The state a fit leaves for a ``warm_start=True`` refit, the same for every method.

    ``key`` says what the next fit must share for the state to apply (number of features,
    tasks, the knobs that change the feature space); ``support`` the kept candidates (ids,
    ranked or in model order, or the generated features' parameters); ``coef`` and
    ``intercept`` the weights to start from; ``step`` a step-size/Lipschitz guess; ``extra``
    anything else the method needs (in the method's own terms).
    """

    key: tuple
    support: object
    coef: object = None
    intercept: object = None
    step: float | None = None
    extra: dict = field(default_factory=dict)
