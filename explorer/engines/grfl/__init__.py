"""GrFL's engine: the group-ℓq master over the learned features' blocks (paper eq. 7), solved
by FISTA with warm starts or by the ADMM of §4.1."""

from .group_master import (
    GroupMaster,
    GroupObjective,
    GroupProblem,
    admm_master,
    fista_master,
    loss_gradient,
)

__all__ = ["GroupMaster", "GroupObjective", "GroupProblem", "admm_master", "fista_master",
           "loss_gradient"]
