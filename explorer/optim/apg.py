"""The one accelerated proximal gradient (FISTA with backtracking and adaptive restart; Alg. 4 of
Tan et al., FGM; Beck & Teboulle) behind every smooth + separable master, and the result type
every inner solver returns.

A problem is a :class:`Composite`: a point is a tuple of arrays whose first ``n_parts`` are the
variables and the rest caches that are linear in them (FGM keeps the n×T block products
``A_t ω_t`` so a line-search trial costs O(nT), not a pass: §5.3). Extrapolation acts on every
part, so caches follow the variables for free. The loop stops on the problem's certified
measure (:mod:`explorer.optim.stopping`): evaluated every ``check_every`` steps and as soon as
the objective stops moving. A problem may offer ``compiled_steps``, a numba loop running the
same iterations (FGM's small dense masters, where Python's per-step overhead would dominate).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .stopping import TINY, Stopping

MAX_BACKTRACKS = 100  # each multiplies L by 1/η: only non-finite data get to the bound
# rounding allowance of the sufficient-decrease test (relative to the model's value): a larger
# one lets iterates wander where f changes by less than it, a floor of ~√(2·L·SLACK·|f|) on the
# gradient that no certificate below it can pass (same constant in the compiled kernel)
SLACK = 4e-16


@dataclass
class SolverResult:
    """What every inner solver returns (APG, ADMM, the bundle method).

    ``measure`` is the certified optimality measure at ``x`` (relative duality gap, or relative
    KKT residual for problems without a cheap dual); ``step_constant`` is APG's last Lipschitz
    estimate, a warm start for the next solve."""

    x: tuple
    objective: float
    trace: list[float] = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    measure: float = math.inf
    step_constant: float | None = None
    margins: np.ndarray | None = None


class Composite(ABC):
    """``min_x smooth(x) + penalty(x)``: the protocol :func:`apg` runs.

    Subclasses define ``smooth(x) -> (value, grad)`` (``grad`` has an entry per part; for
    caches, the image of the variables' gradient), ``prox_step(v, grad, step) -> (x, smooth
    value at x)``, ``penalty(x)`` and ``measure(x, last)`` (``last`` = (v, x, L) of the latest
    step, or None before the first). ``refresh(x)`` recomputes caches (undoes drift)."""

    n_parts = 1
    compiled_steps = None

    @abstractmethod
    def smooth(self, x):
        """(value, gradient) of the smooth part at x."""

    @abstractmethod
    def prox_step(self, v, grad, step):
        """(prox_{step·penalty}(v − step·grad), smooth value there)."""

    @abstractmethod
    def penalty(self, x) -> float:
        """The non-smooth part at x."""

    @abstractmethod
    def measure(self, x, last) -> float:
        """The certified optimality measure at x (0 exactly at the optimum)."""

    def objective(self, x) -> float:
        return self.smooth(x)[0] + self.penalty(x)

    def refresh(self, x):
        return x


@dataclass
class _Momentum:
    x: tuple
    x_prev: tuple
    t: float
    L: float
    F: float
    last: tuple | None = None


@dataclass(frozen=True)
class Chunk:
    """One call's share of an APG run: up to ``budget`` steps, returning early (after
    ``min_steps``) once the relative objective change is at most ``tol``; ``eta`` the line
    search's factor, ``interrupt`` polled between steps, the caches refreshed every
    ``refresh`` steps counted from ``offset`` (the steps taken before this chunk)."""

    budget: int
    min_steps: int
    tol: float
    eta: float
    interrupt: Callable[[], bool] | None
    refresh: int
    offset: int


def apg(problem: Composite, x0: tuple, *, L0: float, stopping: Stopping, eta: float = 0.7,
        interrupt: Callable[[], bool] | None = None, refresh: int = 100) -> SolverResult:
    """Minimise ``problem`` from ``x0`` by APG; stop when ``problem.measure ≤ stopping.tol``.

    Momentum restarts when the objective goes up (adaptive restart), which keeps the trace
    monotone in practice without changing the fixed point.

    Parameters
    ----------
    problem : Composite
        The smooth part, the proximal map and the certified measure (:class:`Composite`).
    x0 : tuple
        The starting point (the problem's blocks of variables).
    L0 : float
        First guess of the Lipschitz constant (a warm start passes the last solve's).
    stopping : Stopping
        The measure's tolerance and the most steps.
    eta : float
        Each step first tries ``η L`` and multiplies by ``1/η`` until the quadratic model
        majorises (Alg. 4); in (0, 1).
    interrupt : callable, optional
        Polled between steps; True returns the current iterate (a user's *Stop*).
    refresh : int
        Steps between recomputations of the problem's caches (``problem.refresh``: undoes
        the drift of updated margins).
    """
    if not 0.0 < eta < 1.0:
        raise ValueError(f"eta must lie in (0, 1), got {eta!r}")
    if not (math.isfinite(L0) and L0 > 0):
        raise ValueError(f"L0 must be a positive finite number, got {L0!r}")
    x = problem.refresh(tuple(x0))
    F = problem.objective(x)
    trace = [F]
    measure = problem.measure(x, None)
    state = _Momentum(x, x, 1.0, float(L0), F)
    it = 0
    converged = stopping.met(measure)
    spacing = 1
    while not converged and it < stopping.max_iter:
        if interrupt is not None and interrupt():
            break
        budget = min(stopping.check_every, stopping.max_iter - it)
        runner = problem.compiled_steps or _python_steps
        done, chunk, triggered = runner(problem, state, Chunk(
            budget, min(spacing, budget), stopping.tol, eta, interrupt, refresh, it))
        it += done
        trace.extend(chunk)
        if done == 0:
            break
        measure = problem.measure(state.x, state.last)
        converged = stopping.met(measure)
        if not converged and len(trace) >= 2 and stopping.stalled(trace[-2], trace[-1]):
            break
        # the objective stalls before the certificate closes: space the checks out
        spacing = min(2 * spacing, stopping.check_every) if triggered else 1
    x = problem.refresh(state.x)
    F = problem.objective(x)
    if trace:
        trace[-1] = F
    return SolverResult(x=x, objective=F, trace=trace, n_iter=it, converged=bool(converged),
                        measure=float(measure), step_constant=state.L,
                        margins=getattr(problem, "margins", lambda _x: None)(x))


def _python_steps(problem: Composite, state: _Momentum, chunk: Chunk):
    """Up to ``chunk.budget`` APG steps; returns early (after ``chunk.min_steps``) once the
    relative objective change is at most ``chunk.tol``. Returns (steps, objective trace,
    stalled)."""
    budget, min_steps, tol, eta = chunk.budget, chunk.min_steps, chunk.tol, chunk.eta
    interrupt, refresh, offset = chunk.interrupt, chunk.refresh, chunk.offset
    k = problem.n_parts
    trace = []
    for step in range(1, budget + 1):
        if step > 1 and interrupt is not None and interrupt():
            return step - 1, trace, False
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * state.t * state.t))
        beta = (state.t - 1.0) / t_next
        x, x_prev = state.x, state.x_prev
        v = x if beta == 0.0 else tuple(a + beta * (a - p) for a, p in zip(x, x_prev))
        fv, grad = problem.smooth(v)
        trial = eta * state.L
        for _ in range(MAX_BACKTRACKS):
            new, f_new = problem.prox_step(v, grad, 1.0 / trial)
            lin = quad = 0.0
            for j in range(k):
                d = new[j] - v[j]
                lin += float(np.vdot(grad[j], d))
                quad += float(np.vdot(d, d))
            model = fv + lin + 0.5 * trial * quad
            if f_new <= model + SLACK * max(1.0, abs(model)):
                break
            trial /= eta
        else:
            raise FloatingPointError("APG's line search found no step: the loss or its gradient "
                                     "is not finite (check the data and the parameters)")
        F_new = f_new + problem.penalty(new)
        if (offset + step) % refresh == 0:
            new = problem.refresh(new)
        state.t = 1.0 if F_new > state.F else t_next  # adaptive restart
        change = abs(state.F - F_new)
        state.x_prev, state.x, state.L, state.F = x, new, trial, F_new
        state.last = (v, new, trial)
        trace.append(F_new)
        if step >= min_steps and change <= tol * max(abs(F_new), TINY):
            return step, trace, True
    return budget, trace, False
