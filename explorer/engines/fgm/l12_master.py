"""FGM's restricted master (Tan et al., §4–5): the ℓ1² primal over the generated blocks,
solved by APG (:mod:`explorer.engines.fgm.l12`) or, when it is narrow, by proximal Newton
(:mod:`explorer.engines.fgm.prox_newton`), with its certified lower bound (eq. 31's dual on the ray
through the recovered α). It plugs into the shared outer loop
(:func:`~explorer.optim.cutting_plane.cutting_plane`) through the master protocol.
"""

from __future__ import annotations

import numpy as np

from ...optim import (
    BlockCache,
    CachedMaster,
    Datafit,
    MasterSolution,
    Stopping,
    best_on_ray,
    coarse_stopping,
)
from . import prox_newton
from .l12 import L12Problem, loss_dual, recover_alpha, solve_l12
from .problem import Restricted

APG_MIN = 20  # APG steps every narrow solve gets before proximal Newton may take over
APG_FIRST = 300  # ... and at most this many for a fine solve (the last master's polish)
NEWTON_STEPS = 8  # proximal Newton steps a master solve takes, for its cost estimate


class L12Master(CachedMaster):
    """FGM's restricted master in the primal (Theorem 4, eq. 31): minimise
    ``½(Σ_t‖ω_t‖)² + C Σ_i l(y_i f_i)`` over the selected blocks by APG (Alg. 3/4), warm
    started from the previous outer iteration, with the dual variables recovered from the
    margins (α_i = −C l′(z_i): squared hinge α = Cξ, logistic α = C e^ξ/(1+e^ξ)).

    With an intercept (unpenalised, not selectable) the dual requires Σ α_i y_i = 0; the
    recovered α satisfies it at the exact optimum, and the class with the larger α-mass is
    scaled down to satisfy it exactly, which keeps the lower bound certified when the master
    is solved inexactly.

    ``problem`` holds the data term, the inner stopping rule (``stopping.tol`` the master's
    certified gap, ``stopping.max_iter`` its steps) and the user's *Stop*; ``stop_flag`` is the
    same *Stop* for the compiled steps; ``coef0`` warm weights by (candidate, feature a,
    feature b).
    """

    def __init__(self, problem: Restricted, *, n_samples: int, sparse_cache: bool,
                 eta: float = 0.7, coef0: dict | None = None,
                 stop_flag: np.ndarray | None = None):
        self.y = np.asarray(problem.y, dtype=np.float64)
        self.interrupt = problem.interrupt
        self.stop_flag = stop_flag
        self.loss = problem.loss
        self.C = float(problem.C)
        self.fit_intercept = problem.fit_intercept
        self.inner_tol = problem.stopping.tol
        self.max_inner = problem.stopping.max_iter
        self._measure = np.inf
        self.eta = eta
        # with an intercept the master works on centred columns (b′ = b + μᵀω, same model)
        self.cache = BlockCache(n_samples, sparse_cache, center=self.fit_intercept)
        self.coef = np.zeros(0)
        self.intercept = 0.0
        self.tau = None
        self.columns = []
        self.coef0 = coef0 or {}
        self.total_inner = 0
        self.crawled = False  # APG crawled on a master of this fit: fine solves go to Newton

    # --------------------------------------------------------------- protocol
    def initial(self) -> MasterSolution:
        """The empty model (only the intercept): α from its margins; the paper's α = 1 when
        there is no intercept (any constant gives the same first block)."""
        b = Datafit(self.loss, self.y).best_constant() if self.fit_intercept else 0.0
        self.intercept = b
        z = self.y * b
        objective = self.C * float(self.loss.value(z).sum())
        return self._solution(objective, self.y * b, [objective], 0)

    def add_block(self, columns) -> None:
        self.cache.add(columns.matrix)
        self.columns.append(columns)
        start = np.zeros(columns.width)
        if self.coef0:
            for c in range(columns.width):
                start[c] = self.coef0.get((int(columns.candidate[c]),
                                           int(columns.feature_a[c]),
                                           int(columns.feature_b[c])), 0.0)
        self.coef = np.concatenate([self.coef, start])
        self._measure = np.inf  # the previous master's certificate says nothing of this one

    def solve(self, stopping: Stopping | None = None) -> MasterSolution:
        """Solve the current master: coarsely (``stopping=None``: to the 1 % gap that chooses
        the next block) or to ``stopping``. A narrow master (:func:`prox_newton.usable`) is
        solved by APG until its certificate, or until APG has spent about what a proximal
        Newton solve would cost (:meth:`_newton_cost`; a fine solve at most ``APG_FIRST``
        steps), and then by Newton: the ski-rental rule, at most about twice the cheaper
        solver's work, and certified where APG crawls (frequent words, raw pixels: its 1e-4
        stall rule stopped coarse masters there at gaps of 2 % to 2,000 %). Once APG has
        crawled in a fit (the same data, so the same scaling), fine solves go to Newton at
        once."""
        coarse = stopping is None
        stopping = stopping or self._stopping(coarse=True)
        if not prox_newton.usable(self.cache):
            return self._solve_apg(stopping)
        if not coarse and self.crawled:
            return self._solve_newton(stopping)
        cap = stopping.max_iter if coarse else min(stopping.max_iter, APG_FIRST)
        budget = int(min(cap, self._newton_cost()))
        first = self._solve_apg(Stopping(stopping.tol, budget, stall=stopping.stall))
        if first.info["converged"] or (coarse and first.inner_steps < budget):
            return first  # certified, or (a coarse solve) stopped by the stall rule
        self.crawled = True
        sol = self._solve_newton(stopping)
        sol.trace = list(first.trace) + list(sol.trace[1:])
        sol.inner_steps += first.inner_steps
        return sol

    def _newton_cost(self) -> float:
        """A proximal Newton solve of the current master in APG steps, from operation counts
        of the columns as given (so dense and sparse storage of the same data decide alike):
        an APG step is two products over the cached non-zeros; a Newton step a weighted Gram
        and a cone program in W variables; a solve about ``NEWTON_STEPS`` of them."""
        n, W, nnz = self.cache.n, self.cache.width, max(self.cache.nnz, 1)
        apg_step = 2.0 * nnz + 4.0 * n
        newton_step = min(n * W * W, nnz * W) + 10.0 * W ** 3
        return max(APG_MIN, NEWTON_STEPS * newton_step / apg_step)

    def _solve_apg(self, stopping: Stopping) -> MasterSolution:
        shift = float(self.cache.means @ self.coef) if self.coef.size else 0.0
        problem = L12Problem(self.cache, self.y, self.loss, self.C,
                             fit_intercept=self.fit_intercept, stop_flag=self.stop_flag)
        result = solve_l12(problem, coef0=self.coef, intercept0=self.intercept + shift,
                           L0=self.tau, eta=self.eta, stopping=stopping,
                           interrupt=self.interrupt)
        self.coef = result.x[0]
        self.intercept = float(result.x[1][0]) - float(self.cache.means @ self.coef)
        self.tau = self.eta ** 2 * result.step_constant  # warm Lipschitz guess: L_T = η² τ_k
        self.total_inner += result.n_iter
        sol = self._solution(result.objective, result.margins, result.trace, result.n_iter)
        sol.info["converged"] = result.converged
        sol.info["inner_gap"] = result.measure
        self._measure = result.measure
        return sol

    def polish(self) -> MasterSolution | None:
        """Re-solve the current master to the fine tolerance (None if it already is)."""
        final = self._stopping(coarse=False)
        if final.met(self._measure) or (self.interrupt is not None and self.interrupt()):
            return None
        return self.solve(final)

    def _solve_newton(self, stopping: Stopping) -> MasterSolution:
        """The master by proximal Newton (narrow masters: exact whatever the scaling)."""
        problem = L12Problem(self.cache, self.y, self.loss, self.C,
                             fit_intercept=self.fit_intercept, compiled=False)
        shift = float(self.cache.means @ self.coef) if self.coef.size else 0.0
        result = prox_newton.prox_newton_l12(problem, self.coef, self.intercept + shift,
                                             stopping=stopping, interrupt=self.interrupt)
        if result.measure <= self._measure:
            self.coef = result.x[0]
            self.intercept = float(result.x[1][0]) - float(self.cache.means @ self.coef)
            self._measure = result.measure
        if not result.converged:  # APG takes over from the better of the two points
            steps = result.n_iter
            sol = self._solve_apg(stopping)
            sol.inner_steps += steps
            return sol
        self.total_inner += result.n_iter
        sol = self._solution(result.objective, result.margins, result.trace, result.n_iter)
        sol.info["converged"] = result.converged
        sol.info["inner_gap"] = result.measure
        sol.info["solver"] = "proximal Newton"
        self._measure = result.measure
        return sol

    def final_tolerance(self) -> float:
        """The certified gap the last master is polished to."""
        return self._stopping(coarse=False).tol

    def _stopping(self, coarse: bool) -> Stopping:
        """The gap asked of a solve. With one block the master is 1-strongly convex and its
        gap is quadratic in the coefficient error, so ``inner_tol²`` gives coefficients to
        ``inner_tol`` relative (FGM with B ≥ #features is then an ℓ2 SVM / logistic regression
        to that accuracy); with several blocks the gap is linear in it (the dual's max over
        tied blocks), so ``inner_tol`` itself."""
        tol = self.inner_tol ** 2 if self.cache.n_blocks <= 1 else self.inner_tol
        if coarse:
            return coarse_stopping(tol, self.max_inner)
        return Stopping(tol, self.max_inner)

    def lower_bound(self, solution: MasterSolution, top_scores: np.ndarray) -> float | None:
        """The best dual value on the ray {tα : t ≥ 0} through the recovered α, with the
        worst-case block: a certified lower bound (eq. 31's dual; every balanced α in the
        loss's dual domain gives one).

        Along the ray the block scores scale by t² (the top block stays the top block), so
        D(t) = −C Σ l*(−tα_i/C) − ½t²·S with S = Σ top-B scores at α: concave in t, maximised
        over [0, t_max] (t_max: the edge of the loss's dual domain). D(0) = 0 is the
        objective's own floor, so the bound is never below it; t = 1 is the plain recovered
        α, so the bound is never worse than it (an inexact master's α can be far off scale:
        its bound was −10⁶ next to an objective of 200)."""
        if solution.dual_base is None:
            return None
        alpha = np.asarray(solution.signal, dtype=float) * self.y
        S = float(np.sum(top_scores))
        C = self.C

        def dual(t: float) -> float:
            return loss_dual(self.loss, C, t * alpha) - 0.5 * t * t * S

        return best_on_ray(dual, solution.dual_base - 0.5 * S,
                           t_max=self.loss.dual_domain()[1] * C / max(float(alpha.max()), 1e-300))

    # --------------------------------------------------------------- helpers
    def _solution(self, objective, margins, trace, steps) -> MasterSolution:
        alpha = recover_alpha(self.loss, self.C, self.y, margins, self.fit_intercept)
        dual_base = loss_dual(self.loss, self.C, alpha)
        norms = self.block_norms()
        return MasterSolution(objective=objective, signal=alpha * self.y, trace=list(trace),
                              inner_steps=steps, dual_base=dual_base, block_norms=norms,
                              info={"alpha_sum": float(alpha.sum())})

