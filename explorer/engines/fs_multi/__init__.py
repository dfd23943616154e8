"""FS-multi's engine: the bundle master over the multivariate-loss cuts (paper Alg. 2, eq. 9),
its cut problems, and the most violated labeling for each performance measure (Alg. 3)."""

from .bundle import BundleMaster, StructuredRisk
from .cut_problem import CutModel, solve_cut_problem
from .structured import MEASURES, allowed, default_k, delta, most_violated, most_violated_grid

__all__ = ["MEASURES", "BundleMaster", "CutModel", "StructuredRisk", "allowed", "default_k",
           "delta", "most_violated", "most_violated_grid", "solve_cut_problem"]
