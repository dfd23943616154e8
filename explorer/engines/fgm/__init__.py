"""FGM's engine: the ℓ1²-regularised restricted master (paper eq. 14, §5) solved by APG and
finished by proximal Newton, and the refinement that prunes, refits and exchanges the path's
features to exactly k."""

from .l12 import L12Problem, loss_dual, recover_alpha, solve_l12
from .l12_master import L12Master
from .problem import Restricted
from .refine import (
    OVERSELECT,
    Candidates,
    Fitted,
    Refinement,
    Refit,
    fill_to_k,
    refine_path,
    restricted_fit,
    splice,
)

__all__ = ["OVERSELECT", "Candidates", "Fitted", "L12Master", "L12Problem", "Refinement",
           "Refit", "Restricted", "fill_to_k", "loss_dual", "recover_alpha", "refine_path",
           "restricted_fit", "solve_l12", "splice"]
