"""FS-multi's inner layer: the bundle method on ``½(Σ_t‖w_t‖)² + C·R_emp(w, b)`` over the
generated blocks (OCAS's line search and cut point, coarse masters, certified stops), its cuts
kept as labelings with their coefficients in a :class:`CutMatrix`, each cut problem solved by
:func:`explorer.engines.fs_multi.cut_problem.solve_cut_problem`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from ...optim import COARSE_GAP, BlockCache, CachedMaster, MasterSolution, Stopping
from .cut_problem import CutModel, negligible_blocks, solve_cut_problem
from .structured import allowed, delta, most_violated

EMPTY_FLOOR = 1e-9  # progress over J(0) below this fraction of it counts as none
CUT_POINT = 0.1  # OCAS's μ: the next cut lies this far from the best point towards the minimiser
LINE_SEARCH_XTOL = 1e-2  # step accuracy of the line search on [0, 1]
INNER = Stopping(1e-3, 200)  # the bundle's default certified gap and steps per solve


class CutMatrix:
    """The cuts' coefficients over the cached columns: W × K, column k is p_k, in a
    Fortran-ordered buffer grown by doubling (a cut is one column written, not the matrix
    copied: 20 MB a cut for an all-features model of 10,000 columns), with its Gram PᵀP kept
    up to date for the one-block cut QP."""

    def __init__(self):
        self._buffer = np.empty((0, 0), order="F")
        self.width = 0    # W, the cached columns
        self.count = 0    # K, the cuts
        self.gram = np.zeros((0, 0))

    @property
    def matrix(self) -> np.ndarray:
        return self._buffer[:self.width, :self.count]

    def append(self, p: np.ndarray) -> None:
        K = self.count
        if K == self._buffer.shape[1]:
            grown = np.empty((self.width, max(2 * K, 8)), order="F")
            grown[:, :K] = self.matrix
            self._buffer = grown
        cross = self.matrix.T @ p
        gram = np.empty((K + 1, K + 1))
        gram[:K, :K] = self.gram
        gram[K, :K] = gram[:K, K] = cross
        gram[K, K] = p @ p
        self._buffer[:, K] = p
        self.gram = gram
        self.count = K + 1

    def keep(self, cuts: np.ndarray) -> None:
        """Keep only the given cuts (sorted indices), in place."""
        for new, old in enumerate(cuts.tolist()):
            if new != old:
                self._buffer[:self.width, new] = self._buffer[:self.width, old]
        self.gram = self.gram[np.ix_(cuts, cuts)]
        self.count = int(cuts.size)

    def add_rows(self, rows: np.ndarray) -> None:
        """The cuts' coefficients over a new block's columns (rows × K)."""
        grown = np.empty((self.width + rows.shape[0], self._buffer.shape[1]), order="F")
        grown[:self.width, :self.count] = self.matrix
        grown[self.width:, :self.count] = rows
        self._buffer = grown
        self.width += rows.shape[0]
        self.gram = self.gram + rows.T @ rows


@dataclass(frozen=True)
class StructuredRisk:
    """The data term of FS-multi's master (eq. 9): C·R_emp(w, b), the multivariate loss
    Δ(y, ȳ) of ``measure`` (at ``k`` predicted positives for the ranking measures) on the
    labels ``y`` ±1, with an unpenalised intercept in |b| ≤ ``intercept_bound`` when
    ``fit_intercept``."""

    y: np.ndarray
    measure: str
    C: float
    k: int | None = None
    fit_intercept: bool = True
    intercept_bound: float = 1e3


class BundleMaster(CachedMaster):
    """FS-multi's restricted master for the shared cutting-plane loop: the bundle method over
    the blocks generated so far, with every cut kept across outer iterations (each cut is
    stored as its labeling ȳᵏ, so it extends to a new block's columns exactly).

    The signal handed back for the next worst-case analysis is
    s_i = (1/n) Σ_k α_k (y_i − ȳᵏ_i); before any block exists the only cut is ȳ⁰ = −y (for PRBEP
    and Rec@k, whose labelings fix the number of predicted positives, the most violated labeling
    at w = 0)
    (α = C on it: FGM's α = 1 analogue).

    A cut whose weight stayed zero for ``prune_after`` consecutive cut problems is dropped
    (a smaller cut model is still a valid lower bound; its labeling may be found again): the
    cut problem's cost grows with the number of cuts, which otherwise reaches hundreds.

    ``stopping``: the bundle's certified relative gap and its most steps per solve;
    ``interrupt()`` is polled between steps (a user's *Stop*).
    """

    prune_after = 5

    def __init__(self, risk: StructuredRisk, *, n_samples: int, sparse_cache: bool,
                 stopping: Stopping = INNER, interrupt=None):
        self.interrupt = interrupt
        self.y = np.asarray(risk.y, dtype=np.float64)
        self.n = self.y.size
        self.measure = risk.measure
        self.C = float(risk.C)
        self.k = risk.k
        self.fit_intercept = risk.fit_intercept
        self.stopping = stopping
        self.coarse = Stopping(max(stopping.tol, COARSE_GAP), stopping.max_iter)
        self.max_inner = stopping.max_iter
        self.R = float(risk.intercept_bound)
        self.cache = BlockCache(n_samples, sparse_cache)
        self.columns = []
        self.labelings: list[np.ndarray] = []
        self._keys: set[bytes] = set()  # the labelings' bytes, to skip a repeated cut
        self.q: list[float] = []
        self.beta: list[float] = []
        self.cuts = CutMatrix()
        self.coef = np.zeros(0)
        self.intercept = 0.0
        self.total_inner = 0
        self.last_alpha = None
        self._alpha_sum = None
        self._idle = np.zeros(0, dtype=np.int64)
        self.empty_objective = None

    # --------------------------------------------------------------- cuts
    @property
    def Pmat(self) -> np.ndarray:  # noqa: N802  (the P of the module's formulas)
        return self.cuts.matrix

    def _add_cut(self, yb: np.ndarray, dlt: float) -> bool:
        key = yb.astype(np.int8)
        if key.tobytes() in self._keys:
            return False
        self._keys.add(key.tobytes())
        self.labelings.append(key)
        self._idle = np.append(self._idle, 0)
        diff = self._diff(yb)
        self.q.append(float(dlt))
        self.beta.append(float(-diff.sum() / self.n))
        p = -self.cache.rmatvec(diff) / self.n if self.cache.width else np.zeros(0)
        self.cuts.append(p)
        return True

    def _diff(self, yb: np.ndarray) -> np.ndarray:
        """y − ȳ (a column per labeling), centred for the ranking measures. Rec@k's labelings
        have k ≠ #positives predicted positives, so Σ_i (y_i − ȳ_i) f_i rewards a common
        shift of every score, which features that are on everywhere provide: the risk then
        falls to zero with no ranking learnt. Centring removes the shift (as the free
        intercept does for F1/Hamming) and changes neither the most violated labeling (all
        have k positives) nor PRBEP (k = #positives, already centred)."""
        y = self.y if yb.ndim == 1 else self.y[:, None]
        diff = y - yb
        if self.measure in ("prbep", "rec@k"):
            diff = diff - diff.mean(axis=0)
        return diff

    def _prune(self) -> None:
        keep = np.flatnonzero(self._idle < self.prune_after)
        if keep.size == len(self.labelings):
            return
        self.labelings = [self.labelings[i] for i in keep]
        self._keys = {lab.tobytes() for lab in self.labelings}
        self.q = [self.q[i] for i in keep]
        self.beta = [self.beta[i] for i in keep]
        self._idle = self._idle[keep]
        self.cuts.keep(keep)

    def _objective(self, f: np.ndarray, coef: np.ndarray):
        yb, dlt = most_violated(self.y, f, self.measure, self.k)
        risk = max(0.0, dlt - float(self._diff(yb) @ f) / self.n)
        norms = self.block_norms(coef)
        return 0.5 * float(norms.sum()) ** 2 + self.C * risk, yb, dlt


    # --------------------------------------------------------------- protocol
    def initial(self):
        first = -self.y
        if not allowed(self.y, first, self.measure, self.k):
            # PRBEP / Rec@k fix the number of predicted positives: −y is then not a labeling of
            # the measure, and a cut on it would certify a wrong optimum; the most violated
            # labeling at w = 0 is one
            first, _ = most_violated(self.y, np.zeros(self.n), self.measure, self.k)
        self._add_cut(first, delta(self.y, first, self.measure, self.k))
        f = np.zeros(self.n)
        J, _, _ = self._objective(f, np.zeros(0))
        self.empty_objective = J
        alpha = np.array([self.C])
        self.last_alpha = alpha
        return MasterSolution(objective=J, signal=self._signal(alpha), trace=[J],
                              inner_steps=0, dual_base=self._dual_base(alpha),
                              block_norms=np.zeros(0), info={"K": 1})

    def add_block(self, columns) -> None:
        self.cache.add(columns.matrix)
        self.columns.append(columns)
        diffs = self._diff(np.array(self.labelings, dtype=np.float64).T)  # n × K
        A = columns.matrix
        self.cuts.add_rows(-np.asarray(A.T @ diffs) / self.n)
        self.coef = np.concatenate([self.coef, np.zeros(columns.width)])

    def _scores(self, coef: np.ndarray, b: float) -> np.ndarray:
        A = self.cache
        return A.block_products(coef).sum(axis=1) + b if A.n_blocks else np.full(self.n, b)

    def _line_search(self, best, model):
        """Minimise J on the segment from the best point to the cut model's minimiser
        (OCAS, Franc & Sonnenburg, JMLR 2009, the line-search step): J is convex there and
        ``f`` is affine in the step, so each evaluation is one most-violated-labeling search.
        Returns the point reached as (J, coef, b, f), and the most violated labeling at the
        model's minimiser with its Δ."""
        J0, c0, b0, f0 = best
        c1, b1, f1 = model
        dc, db, df = c1 - c0, b1 - b0, f1 - f0
        J1, yb1, dlt1 = self._objective(f1, c1)
        res = minimize_scalar(lambda t: self._objective(f0 + t * df, c0 + t * dc)[0],
                              bounds=(0.0, 1.0), method="bounded",
                              options={"xatol": LINE_SEARCH_XTOL, "maxiter": 40})
        t, Jt = (float(res.x), float(res.fun)) if res.fun < J1 else (1.0, J1)
        if Jt < J0:
            best = (Jt, c0 + t * dc, b0 + t * db, f0 + t * df)
        return best, (yb1, dlt1)

    def solve(self):
        """A master that only chooses the next block: solved to ``COARSE_GAP``."""
        self._coarse_solution = self._solve(self.coarse)
        return self._coarse_solution

    def polish(self) -> MasterSolution | None:
        """The last master, solved on to ``inner_tol`` from where the coarse solve stopped
        (its cuts and best point are kept); None when the coarse solve was already that.
        Its gaps and cut counts continue the coarse solve's, one entry per step."""
        if self.coarse.tol <= self.stopping.tol:
            return None
        coarse, polished = self._coarse_solution, self._solve(self.stopping)
        # the loop joins the traces dropping the polish's first entry (its starting point)
        polished.trace = coarse.trace[-1:] + list(polished.trace)
        for key in ("inner_gaps", "cuts"):
            polished.info[key] = np.concatenate([coarse.info[key], polished.info[key]])
        return polished

    def _solve(self, stopping: Stopping):
        """The bundle method with OCAS's two changes to where cuts are taken: a line search
        from the best point towards the cut model's minimiser (the best point never gets
        worse), and the next cut at a point just past the best one towards the minimiser
        (μ = ``CUT_POINT``), instead of the minimiser itself. The cut model's minimum is still
        a lower bound, so the certificate is unchanged; iterations fall several-fold when C is
        large, where plain cutting planes (BMRM) zig-zag. The minimiser's cut is added too, so
        the model is never worse than BMRM's."""
        coef, b = self.coef.copy(), self.intercept
        f = self._scores(coef, b)
        J, yb, dlt = self._objective(f, coef)
        best = (J, coef, b, f)
        trace, gaps, cuts = [], [], []
        steps = 0
        measure = np.inf
        sol = None
        while steps < self.max_inner:
            if steps and self.interrupt is not None and self.interrupt():
                break
            steps += 1
            self._prune()
            self._add_cut(yb, dlt)
            model = CutModel(self.Pmat, np.array(self.q), np.array(self.beta),
                             self.cache.bounds, self.C, self.R if self.fit_intercept else 0.0)
            sol = solve_cut_problem(model, scale_hint=self._alpha_sum, gram=self.cuts.gram)
            gap = max(best[0] - sol.value, 0.0)  # the solver may overshoot by its tolerance
            trace.append(best[0])
            gaps.append(gap)
            cuts.append(len(self.q))
            self._alpha_sum = float(sol.alpha.sum())
            active = sol.alpha > 1e-6 * max(self._alpha_sum, 1e-300)
            self._idle = np.where(active, 0, self._idle + 1)
            # certified gap relative to the smaller of the objective and the progress over the
            # empty model (J(0) − model min): F1's objective is dominated by C·Δ, so relative
            # to it alone the bundle would stop at once; Hamming's J(0) = 2C dwarfs its
            # optimum, so relative to the progress alone it stops 10–20 % above it
            scale = max(min(best[0], self.empty_objective - sol.value),
                        EMPTY_FLOOR * abs(self.empty_objective))
            # a measure every labeling scores alike (Rec@k with k ≥ n: every ranking recalls
            # every positive) leaves nothing to gain: objective and model minimum both 0
            measure = gap / scale if scale > 0 else (0.0 if gap <= 0 else np.inf)
            if stopping.met(measure) or steps >= self.max_inner:
                break
            model = (sol.coef, sol.intercept, self._scores(sol.coef, sol.intercept))
            best, at_model = self._line_search(best, model)
            # the minimiser's own cut as well (BMRM's): without it a repeated labeling at the
            # OCAS point leaves the model, and the loop, unchanged
            self._prune()
            self._add_cut(*at_model)
            J_b, c_b, b_b, f_b = best
            coef = (1.0 - CUT_POINT) * c_b + CUT_POINT * model[0]
            b = (1.0 - CUT_POINT) * b_b + CUT_POINT * model[1]
            f = (1.0 - CUT_POINT) * f_b + CUT_POINT * model[2]
            J, yb, dlt = self._objective(f, coef)
            if J < best[0]:
                best = (J, coef, b, f)
        J_best, self.coef, self.intercept, _ = best
        tiny = negligible_blocks(self.coef, self.cache.bounds, self.Pmat, self.C, J_best) \
            if self.cache.n_blocks else []
        if len(tiny):
            # a line-search step of 1 − 1e-15 leaves a dropped block at 1e-15, not at zero
            self.coef = self.coef.copy()
            for t in tiny:
                a, b_ = self.cache.bounds[t]
                self.coef[a:b_] = 0.0
            J_best = self._objective(self._scores(self.coef, self.intercept), self.coef)[0]
        self.total_inner += steps
        _, violated, violated_loss = self._objective(self._scores(self.coef, self.intercept),
                                                     self.coef)
        alpha = sol.alpha if sol is not None else self.last_alpha
        self.last_alpha = alpha
        return MasterSolution(
            objective=J_best, signal=self._signal(alpha), trace=trace, inner_steps=steps,
            dual_base=self._dual_base(alpha), block_norms=self.block_norms(self.coef),
            info={"inner_gaps": np.asarray(gaps), "K": len(self.q), "cuts": np.asarray(cuts),
                  "inner_measure": measure,
                  "violated": self._table(violated, violated_loss),
                  "bundle_gap": gaps[-1] if gaps else np.nan,
                  "intercept_at_bound": bool(abs(self.intercept) >= 0.999 * self.R
                                             and self.fit_intercept)})

    def lower_bound(self, solution, top_scores):
        """Dual value with the worst-case block (Theorem 2's β_T) at the best multiple tα of
        the cut weights: g(tα) = t·(αᵀq − R|αᵀβ|) − ½t²·S with S the top-B scores at α, and
        any 0 ≤ t ≤ C/Σα is dual feasible. At t = 1 the bound is useless (−1e8 against an
        objective of 1e4 on raw pixels) because the restricted problem's α overshoots the
        scores of the features not yet in the model."""
        a = float(solution.dual_base)
        S = float(np.sum(top_scores))
        total = float(np.sum(self.last_alpha)) if self.last_alpha is not None else 0.0
        t_max = self.C / total if total > 0 else 1.0
        if a <= 0.0:
            return 0.0  # t = 0: the dual's value at α = 0
        t = t_max if S <= 0.0 else min(a / S, t_max)
        return a * t - 0.5 * t * t * S

    # --------------------------------------------------------------- helpers
    def _table(self, yb: np.ndarray, loss: float) -> dict:
        """The most violated labeling ȳ at the master's point (Alg. 3) against y: its
        confusion counts and its loss Δ(y, ȳ)."""
        pos, pred = self.y > 0, np.asarray(yb) > 0
        return {"tp": int(np.sum(pos & pred)), "fp": int(np.sum(~pos & pred)),
                "fn": int(np.sum(pos & ~pred)), "tn": int(np.sum(~pos & ~pred)),
                "delta": float(loss)}

    def _signal(self, alpha: np.ndarray) -> np.ndarray:
        Yb = np.array(self.labelings, dtype=np.float64)  # K × n
        return (alpha[:, None] * self._diff(Yb.T).T).sum(axis=0) / self.n

    def _dual_base(self, alpha: np.ndarray) -> float:
        q = np.array(self.q[:alpha.size])
        beta = np.array(self.beta[:alpha.size])
        R = self.R if self.fit_intercept else 0.0
        return float(alpha @ q - R * abs(alpha @ beta))

