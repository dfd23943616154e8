"""Reusable numerics with no method knowledge: losses, prox operators, APG over column blocks,
the cutting-plane outer loop and its ℓ1² master (more solvers join as methods land)."""

from .apg import APGResult, BlockCache, apg_blocks, l1_squared_penalty
from .cutting_plane import CuttingPlaneResult, L12Master, MasterSolution, OuterStep, cutting_plane
from .losses import LOSSES, HuberHinge, Logistic, Lorenz, MarginLoss, SquaredHinge
from .prox import (
    l1_squared_block_scales,
    prox_group_l2,
    prox_group_lq,
    prox_l1_squared,
    soft_threshold,
)

__all__ = [
    "APGResult", "BlockCache", "CuttingPlaneResult", "HuberHinge", "L12Master", "LOSSES",
    "Logistic", "Lorenz", "MarginLoss", "MasterSolution", "OuterStep", "SquaredHinge",
    "apg_blocks", "cutting_plane", "l1_squared_block_scales", "l1_squared_penalty",
    "prox_group_l2", "prox_group_lq", "prox_l1_squared", "soft_threshold",
]
