"""The method-agnostic core of the numerics: the loss table, datafits, penalties and their prox,
the one APG, the certified stopping rule, the block cache, the master protocol, the
cutting-plane outer loop and the level method. It knows no method: each method's engine
(``explorer.engines``) builds on these names. ``docs/architecture.md`` shows how they compose."""

from .apg import Composite, SolverResult, apg
from .cache import BlockCache, CachedMaster, block_norms
from .cutting_plane import (
    CuttingPlaneResult,
    OuterStep,
    OuterStopping,
    best_on_ray,
    candidate_norms,
    cutting_plane,
    held_candidates,
)
from .datafits import Datafit, PairwiseDatafit
from .level import LevelResult, LevelStep, level_method
from .losses import (
    LOSSES,
    NUMBA_CODES,
    HuberHinge,
    Logistic,
    Lorenz,
    MarginLoss,
    Squared,
    SquaredHinge,
    make_loss,
)
from .master import Master, MasterSolution, WarmStart, WeightedMaster
from .penalties import GroupLq, L1Squared, block_size, group_norms, prox_groups
from .prox import (
    l1_squared_block_scales,
    prox_group_l2,
    prox_group_lq,
    prox_l1_squared,
    soft_threshold,
)
from .stopping import (
    COARSE_GAP,
    COARSE_STALL,
    TINY,
    Stopping,
    coarse_stopping,
    relative_gap,
)

__all__ = [
    "COARSE_GAP", "COARSE_STALL", "LOSSES", "NUMBA_CODES", "TINY",
    "BlockCache", "CachedMaster", "Composite", "CuttingPlaneResult", "Datafit", "GroupLq",
    "HuberHinge", "L1Squared", "LevelResult", "LevelStep", "Logistic", "Lorenz", "MarginLoss",
    "Master", "MasterSolution", "OuterStep", "OuterStopping", "PairwiseDatafit", "SolverResult",
    "Squared", "SquaredHinge", "Stopping", "WarmStart", "WeightedMaster",
    "apg", "best_on_ray", "block_norms", "block_size", "candidate_norms", "coarse_stopping",
    "cutting_plane", "held_candidates",
    "group_norms", "l1_squared_block_scales", "level_method", "make_loss", "prox_group_l2",
    "prox_group_lq", "prox_groups", "prox_l1_squared", "relative_gap", "soft_threshold",
]
