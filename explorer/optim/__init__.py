"""Reusable numerics with no method knowledge: the loss table, datafits, penalties, the one APG,
the certified stopping rule, the cutting-plane outer loop and the restricted masters.
``docs/architecture.md`` shows how they compose into the methods."""

from .apg import Composite, SolverResult, apg
from .cache import BlockCache, block_norms
from .cutting_plane import CuttingPlaneResult, OuterStep, cutting_plane
from .l12 import L12Problem, solve_l12
from .l12_master import L12Master
from .losses import (
    LOSSES,
    HuberHinge,
    Logistic,
    Lorenz,
    MarginLoss,
    Squared,
    SquaredHinge,
    make_loss,
)
from .master import MasterSolution, WarmStart
from .penalties import GroupLq, L1Squared
from .prox import (
    l1_squared_block_scales,
    prox_group_l2,
    prox_group_lq,
    prox_l1_squared,
    soft_threshold,
)
from .stopping import COARSE_GAP, COARSE_STALL, Stopping, coarse_stopping, relative_gap

__all__ = [
    "BlockCache", "COARSE_GAP", "COARSE_STALL", "Composite", "CuttingPlaneResult", "GroupLq",
    "HuberHinge", "L12Master",
    "L12Problem", "L1Squared", "LOSSES", "Logistic", "Lorenz", "MarginLoss", "MasterSolution",
    "OuterStep", "SolverResult", "Squared", "SquaredHinge", "Stopping", "WarmStart", "apg",
    "block_norms", "coarse_stopping",
    "cutting_plane", "l1_squared_block_scales", "make_loss", "prox_group_l2", "prox_group_lq",
    "prox_l1_squared", "relative_gap", "soft_threshold", "solve_l12",
]
