"""FSA's engine: the annealing loop of Algorithm 1 (gradient steps on the penalised loss, then
keep the M_e largest |w|), its step rule that cannot oscillate, and the schedule M_e (eq. 4)."""

from .annealing import (
    GRAM_PASSES,
    GRAM_ROWS,
    Annealing,
    AnnealingRun,
    RunHooks,
    StepRule,
    anneal,
    first_pass,
    gram_norm,
)
from .schedules import fsa_schedule, schedule_cost

__all__ = ["Annealing", "AnnealingRun", "GRAM_PASSES", "GRAM_ROWS", "RunHooks", "StepRule",
           "anneal", "first_pass", "fsa_schedule", "gram_norm", "schedule_cost"]
