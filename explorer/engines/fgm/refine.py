"""Prune-and-refit: from an over-complete selection to the k features a best-subset method
would keep, then the restricted model on exactly those k.

Two published pieces, composed:

* backward elimination by *Optimal Brain Surgeon* (Hassibi & Stork, NIPS 1992):
  dropping feature q from a fitted model and letting the others adjust raises the objective
  ½‖w‖² + C Σ l by about ``w_q² / (2 [H⁻¹]_qq)``, H the objective's Hessian over the selection
  (and the intercept); the cheapest feature goes, the others move by ``−w_q H⁻¹e_q / [H⁻¹]_qq``,
  and so on — half of the excess at a time, refit between the stages — down to k. abess's
  *backward sacrifice* ``½ h_j w_j²`` (Zhu et al., PNAS 2020,
  eq. 5; h_j = 1 + C Σ_i l″(z_i) x_ij², H's diagonal) is the same estimate with the other
  features held fixed: among correlated words it dropped the one the others could not replace
  (fine-foods, k = 5: abess's selection, of lower loss, was one swap away in 7 of 10 splits and
  the surgeon's order finds it). The diagonal rule is kept for selections too wide for H;
* the de-biasing retrain of Tan et al.'s Fig. 4: the kept features get the restricted ℓ2 model
  (FGM's master with one block, certified like every master);
* when the path ended (converged) with fewer than k features, abess's *forward sacrifice*
  ½g_j²/h_j fills the set up to k, from a shortlist of the path's worst-case scores.

FGM grows its ℓ1² path past k (blocks of ⌈1.5·B⌉) and hands the result here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...kernels import dense_gram, dense_take_rows, one_blas_thread, take_columns
from ...optim import BlockCache, MarginLoss, SolverResult, Stopping
from ._newton import (
    COMPILED_CELLS,
    COMPILED_COLUMNS,
    NarrowFit,
    Start,
    newton_l2_compiled,
    surgeon_compiled,
    surgeon_loop,
)
from .l12 import L12Problem, solve_l12
from .problem import Restricted

OVERSELECT = 1.5  # blocks of ⌈1.5·B⌉: the selection pruned back to the paper's size


@dataclass(frozen=True)
class Fitted:
    """A model on some ``columns``: their ``coef``, its ``margins`` (decision values; None
    where the reader computes them) and the ``intercept``."""

    columns: np.ndarray
    coef: np.ndarray
    margins: np.ndarray | None
    intercept: float = 0.0


@dataclass(frozen=True)
class Candidates:
    """Where the features outside a model come from: ``columns(ids)`` reads columns of X (as
    the model sees them), ``top(signal, m)`` gives the m best-scored ids (FGM's Xᵀs scorer),
    of ``n_features``."""

    columns: Callable
    top: Callable
    n_features: int


def curvature_weights(loss: MarginLoss, y: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """l″(y_i f_i) per example, from the loss table (the squared hinge's generalised second
    derivative: 1 where the margin is violated)."""
    return loss.second_derivative(y * margins)


def forward_sacrifices(problem: Restricted, X, columns: np.ndarray,
                       margins: np.ndarray) -> np.ndarray:
    """``½ g_j² / h_j`` for columns outside the model: the objective's fall when each alone
    enters it (second-order estimate: the forward sacrifice of abess, Zhu et al. 2020), with
    g_j = C Σ_i l′(z_i) y_i x_ij the objective's slope along w_j at 0 and h_j as in
    :func:`sacrifices`."""
    y, loss, C = np.asarray(problem.y, dtype=np.float64), problem.loss, problem.C
    z = y * margins
    curv = curvature_weights(loss, y, margins)
    sub = X[:, columns]
    g = C * np.asarray(sub.T @ (loss.derivative(z) * y)).ravel()
    sq = sub.multiply(sub) if sp.issparse(sub) else np.square(sub, dtype=np.float64)
    h = 1.0 + C * np.asarray(sq.T @ curv).ravel()
    return 0.5 * np.square(g) / h


def sacrifices(problem: Restricted, X, model: Fitted) -> np.ndarray:
    """``½ h_j w_j²`` for the model's columns: the objective's rise when each alone is dropped
    (second-order estimate), h_j = 1 + C Σ_i l″(z_i) x_ij²."""
    curv = curvature_weights(problem.loss, problem.y, model.margins)
    sub = X[:, model.columns]
    sq = sub.multiply(sub) if sp.issparse(sub) else np.square(sub, dtype=np.float64)
    h = 1.0 + problem.C * np.asarray(sq.T @ curv).ravel()
    return 0.5 * h * np.square(model.coef)


def surgeon_order(problem: Restricted, X, model: Fitted, *, keep: int = 0,
                  pinned=None) -> np.ndarray:
    """Greedy backward elimination of the model's columns by Optimal Brain Surgeon (Hassibi &
    Stork 1992): one score per column, higher = eliminated later (the ``keep`` survivors
    share the top score).

    H = I + Aᵀ diag(C l″(z)) A over the columns A (bordered by the unpenalised intercept's
    row when ``fit_intercept``; the intercept is never eliminated). Each step drops the q of
    least saliency ``w_q² / (2 [H⁻¹]_qq)``, moves the others by ``−w_q H⁻¹e_q / [H⁻¹]_qq``
    and takes q out of H⁻¹ by the matching rank-one downdate (on one BLAS thread:
    :func:`~explorer.kernels.one_blas_thread`; narrow models in one compiled call,
    :func:`~explorer.engines.fgm._newton.surgeon_compiled`). ``pinned`` (a mask over
    ``columns``) are never eliminated: they keep the top score and count among the ``keep``."""
    with one_blas_thread():
        return _surgeon_order(problem, X, model, keep, pinned)


def _surgeon_order(problem: Restricted, X, model: Fitted, keep: int, pinned):
    m = len(model.columns)
    fit_intercept = problem.fit_intercept
    A = X[:, model.columns]
    A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    d2 = float(problem.C) * curvature_weights(problem.loss, problem.y, model.margins)
    size = m + 1 if fit_intercept else m
    w = np.zeros(size)
    w[:m] = model.coef
    score = np.full(m, float(m))
    alive = np.ones(m, dtype=np.bool_) if pinned is None else ~np.asarray(pinned, dtype=bool)
    keep = max(int(keep), m - int(alive.sum()))
    if m <= COMPILED_COLUMNS and A.shape[0] * m <= COMPILED_CELLS:
        surgeon_compiled(np.ascontiguousarray(A), np.ascontiguousarray(d2, dtype=np.float64),
                         bool(fit_intercept), w, keep, score, alive)
        return score
    H = np.empty((size, size))
    # d2 ≥ 0 (the losses are convex): AᵀDA as the Gram of the rows times √d2
    H[:m, :m] = dense_gram(np.asfortranarray(A * np.sqrt(d2)[:, None]))
    H[np.diag_indices(m)] += 1.0
    if fit_intercept:
        H[:m, m] = H[m, :m] = A.T @ d2
        H[m, m] = d2.sum() + 1e-12 * max(1.0, float(d2.sum()))
    try:
        Hinv = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        Hinv = np.linalg.pinv(H)
    surgeon_loop(np.ascontiguousarray(Hinv), w, m, keep, score, alive)
    return score


def eliminate(problem: Restricted, X, model: Fitted, k: int, *, pinned=()) -> np.ndarray:
    """The k of the model's columns that backward elimination keeps: :func:`surgeon_order`
    drops half of the excess at a time, and the restricted model is refit between the
    stages. The surgeon's quadratic model holds for a few removals, not
    for a third of the model at once: on the paper's 4,096 × 4,096 designs one-shot
    elimination lost up to 1.2 points of population accuracy (Type III, B = 8) that the
    stages recover. The ``pinned`` columns (ids as in the model's) are kept. Returns the kept
    columns, sorted."""
    cols = np.asarray(model.columns, dtype=np.int64)
    w, b = np.asarray(model.coef, dtype=np.float64), float(model.intercept)
    margins = model.margins
    while cols.size > k:
        keep = cols.size - max(1, int(np.ceil((cols.size - k) / 2)))
        order = surgeon_order(problem, X, Fitted(cols, w, margins), keep=keep,
                              pinned=np.isin(cols, pinned))
        stay = np.sort(np.argsort(-order, kind="stable")[:keep])
        cols, w = cols[stay], w[stay]
        if cols.size > k:
            w, b, res = restricted_fit(problem, X, cols, coef0=w, intercept0=b,
                                       interruptible=False)
            margins = res.margins
    return np.sort(cols)


NEWTON_MAX_CELLS = 20_000_000  # n·k up to which the refit is solved by Newton's method
NEWTON_MAX_COLUMNS = 1_500


def restricted_fit(problem: Restricted, X, columns: np.ndarray, *, coef0=None,
                   intercept0: float = 0.0, interruptible: bool = True):
    """The ℓ2 model ½‖w‖² + C Σ l(y_i (x_iᵀw + b)) on the given columns (FGM's master with one
    block, centred when it has an intercept); returns (coef, intercept, result) with the
    result's ``measure`` the master's certified duality gap at the returned point.

    ``coef0``/``intercept0`` (the model on the original columns) start the solver when they
    are better than zero: the minimiser is unique, so only the number of steps changes — and
    the trace then starts at the pruned model's objective, not at the empty model's C·Σ l(0).

    Small restricted problems are solved by Newton's method (:func:`newton_l2`: a handful of
    k × k solves whatever the features' scales, where first-order steps can need thousands on
    raw pixels), larger ones by the APG master (polling the problem's ``interrupt`` unless
    not ``interruptible``)."""
    y, loss, C = np.asarray(problem.y, dtype=np.float64), problem.loss, problem.C
    fit_intercept, stopping = problem.fit_intercept, problem.stopping
    interrupt = problem.interrupt if interruptible else None
    cache = BlockCache(X.shape[0], sp.issparse(X), center=fit_intercept)
    sub = X[:, columns]
    cache.add(sub if sp.issparse(sub) else np.asarray(sub, dtype=np.float64))
    n, k = X.shape[0], len(columns)
    w0 = np.zeros(k) if coef0 is None else np.asarray(coef0, dtype=np.float64)
    b0 = float(intercept0) + float(cache.means @ w0) if fit_intercept else 0.0  # centred
    if n * k <= NEWTON_MAX_CELLS and k <= NEWTON_MAX_COLUMNS:
        A = cache.matrix()
        A = A.toarray() - cache.means if sp.issparse(A) else A
        # the gap is first-order in the decrement: ask a thousand times less of it (one
        # more step of a quadratically convergent method)
        w, b, steps, trace = newton_l2(problem, A, tol=1e-3 * stopping.tol, w0=w0, b0=b0)
        problem = L12Problem(cache, y, loss, C, fit_intercept=fit_intercept)
        point = problem.point(w, b)
        result = CertifiedOnRead(problem, point, stopping, trace=trace, n_iter=steps)
    else:
        problem = L12Problem(cache, y, loss, C, fit_intercept=fit_intercept)
        if problem.objective(problem.point(w0, b0)) > problem.objective(problem.point(
                np.zeros(k), 0.0)):
            w0, b0 = np.zeros(k), 0.0
        result = solve_l12(problem, coef0=w0, intercept0=b0, stopping=stopping,
                           interrupt=interrupt)
    coef = result.x[0]
    intercept = float(result.x[1][0]) - float(cache.means @ coef)
    return coef, intercept, result


class CertifiedOnRead(SolverResult):
    """A Newton refit's result whose certificate — the master's duality gap at the point,
    and whether it meets ``stopping`` — is computed when first read: the exchange rounds
    refit dozens of candidate sets and read only their objective and margins (on small
    dense data the gaps were a fifth of a refinement's time)."""

    def __init__(self, problem: L12Problem, point, stopping: Stopping, *, trace, n_iter):
        margins = problem.margins(point)
        super().__init__(x=point, objective=problem._loss_sum(margins) + problem.penalty(point),
                         trace=trace, n_iter=n_iter, margins=margins)
        self.__dict__.pop("measure", None)
        self.__dict__.pop("converged", None)
        self._certify = (problem, stopping)

    @property
    def measure(self) -> float:
        if "_measure" not in self.__dict__:
            problem, _ = self._certify
            self._measure = problem.measure(self.x)
        return self._measure

    @measure.setter
    def measure(self, value) -> None:  # the dataclass's __init__ sets the default
        if value is not math.inf:
            self._measure = value

    @property
    def converged(self) -> bool:
        return self._certify[1].met(self.measure)

    @converged.setter
    def converged(self, value) -> None:  # the dataclass's __init__ sets the default
        pass


def newton_l2(problem: Restricted, A: np.ndarray, *, tol: float, max_iter: int = 100,
              w0=None, b0: float = 0.0):
    """min ½‖w‖² + C Σ_i l(y_i (a_iᵀw + b)) by Newton's method with a backtracking (Armijo)
    line search — the finite Newton method of Keerthi & DeCoste (JMLR 2005) for the squared
    hinge (its generalised Hessian), plain Newton for the logistic loss. Starts at (w0, b0)
    when that is below the objective at zero. Stops when the Newton decrement is at most
    ``tol`` relative to the objective. Returns (w, b, steps, trace). Narrow problems run
    compiled (:func:`~explorer.engines.fgm._newton.newton_l2_compiled`, the same steps), the
    others on one BLAS thread (:func:`~explorer.kernels.one_blas_thread`)."""
    n, k = A.shape
    y, loss, C, fit_intercept = problem.y, problem.loss, problem.C, problem.fit_intercept
    if k <= COMPILED_COLUMNS and n * k <= COMPILED_CELLS and loss.code in (0, 1):
        trace = np.empty(max_iter + 1)
        start = np.zeros(k) if w0 is None else np.asarray(w0, dtype=np.float64)
        fit = NarrowFit(np.ascontiguousarray(A, dtype=np.float64),
                        np.asarray(y, dtype=np.float64), loss.code, float(loss.numba_param),
                        float(C), bool(fit_intercept))
        w, b, steps = newton_l2_compiled(fit, Start(start, float(b0), w0 is not None),
                                         float(tol), int(max_iter), trace)
        return w, float(b), int(steps), trace[:steps + 1].tolist()
    with one_blas_thread():
        return _newton_l2(problem, A, tol=tol, max_iter=max_iter, w0=w0, b0=b0)


def _newton_l2(problem: Restricted, A, *, tol, max_iter, w0, b0):
    k = A.shape[1]
    y, loss, C, fit_intercept = problem.y, problem.loss, problem.C, problem.fit_intercept

    def value(w, b):
        return 0.5 * float(w @ w) + C * float(loss.value(y * (A @ w + b)).sum())

    w, b = np.zeros(k), 0.0
    F = value(w, b)
    if w0 is not None:
        b0 = float(b0) if fit_intercept else 0.0
        F0 = value(np.asarray(w0, dtype=np.float64), b0)
        if F0 < F:
            w, b, F = np.array(w0, dtype=np.float64), b0, F0
    trace = [F]
    gram = curved = None  # Σ_i d2_i a_i a_iᵀ and the d2 it was summed with
    for _ in range(max_iter):
        f = A @ w + b
        r = C * y * loss.derivative(y * f)
        g = np.concatenate([w + A.T @ r, [r.sum() if fit_intercept else 0.0]])
        d2 = C * curvature_weights(loss, y, f)
        gram = _curvature_gram(A, d2, gram, curved)
        curved = d2
        H = np.empty((k + 1, k + 1))
        H[:k, :k] = gram
        H[:k, :k][np.diag_indices(k)] += 1.0
        H[:k, k] = H[k, :k] = A.T @ d2
        H[k, k] = d2.sum() + 1e-12 * max(1.0, float(d2.sum()))
        if not fit_intercept:
            H[:k, k] = H[k, :k] = 0.0
            H[k, k] = 1.0
        try:
            direction = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            direction = -np.linalg.lstsq(H, g, rcond=None)[0]
        decrement = -float(g @ direction)
        if decrement <= tol * max(abs(F), 1e-300):
            break
        t = 1.0
        for _ in range(60):
            w_new, b_new = w + t * direction[:k], b + t * direction[k]
            F_new = value(w_new, b_new)
            if F_new <= F - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            break  # no decrease left at machine precision
        w, b, F = w_new, b_new, F_new
        trace.append(F)
    return w, b, len(trace) - 1, trace


def _curvature_gram(A: np.ndarray, d2: np.ndarray, gram, previous) -> np.ndarray:
    """Aᵀ diag(d2) A, updated from the previous step's (``gram``, summed with ``previous``)
    by the rows whose curvature changed when they are few: the squared hinge's d2 is C on the
    margin-violating rows and 0 elsewhere, and after Newton's first steps only the rows that
    cross the margin change (10–150 of 4,096 on the synthetic designs)."""
    rows = np.flatnonzero(d2)  # the squared hinge's curvature is 0 off the margin
    if gram is not None:
        changed = np.flatnonzero(d2 != previous)
        if changed.size <= rows.size // 2:  # cheaper than summing over the curved rows
            Ac = A[changed]
            return gram + (Ac.T * (d2 - previous)[changed]) @ Ac
    # the curved rows times √d2 (d2 ≥ 0: the losses are convex); numpy computes SᵀS by
    # BLAS's symmetric rank-k product, half a general product's work
    scaled = np.empty((rows.size, A.shape[1]), order="F")
    dense_take_rows(A, rows, np.sqrt(d2[rows]), scaled)
    return dense_gram(scaled)


def prune_and_refit(problem: Restricted, X, model: Fitted, k: int, *, score=None,
                    pinned=()):
    """Keep the k of the model's columns that backward elimination keeps (:func:`eliminate`;
    abess's diagonal :func:`sacrifices` for selections too wide for the Hessian) — or those of
    largest ``score``, one per column — and refit on them, starting from the model without
    the pruned features. The ``pinned`` (ids as in the model's columns) are always kept.

    Returns (kept columns, their coefficients, intercept, solver result)."""
    support = np.asarray(model.columns, dtype=np.int64)
    k = int(min(k, support.size))
    if score is None and support.size > k:
        if X.shape[0] * support.size <= NEWTON_MAX_CELLS and support.size <= NEWTON_MAX_COLUMNS:
            kept = eliminate(problem, X, model, k, pinned=pinned)
            score = np.isin(support, kept).astype(float)
        else:
            score = sacrifices(problem, X, model)
    elif score is None:
        score = np.ones(support.size)
    score = np.where(np.isin(support, pinned), np.inf, score)
    chosen = np.argsort(-score, kind="stable")[:k]
    chosen = chosen[np.argsort(support[chosen], kind="stable")]
    kept = support[chosen]
    weights, intercept, result = restricted_fit(problem, X, kept, coef0=model.coef[chosen],
                                                intercept0=model.intercept)
    return kept, weights, intercept, result


SPLICE_ROUNDS = 8  # bound on the exchange rounds of :func:`splice`


def splice_threshold(C: float, swapped: int, n_features: int, n_samples: int) -> float:
    """abess's acceptance threshold for an exchange of s features (Zhu et al., PNAS 2020:
    τ_s = 0.01·s·log p·log log n on the mean loss), on FGM's summed loss C Σ l: a round must
    lower the loss by more than C·n·τ_s, so that it is not fitting noise."""
    return float(C) * 0.01 * swapped * np.log(max(n_features, 2)) * \
        max(0.0, float(np.log(np.log(max(n_samples, 2)))))


def _dense(cols) -> np.ndarray:
    """A column block as a float64 array (Fortran order: columns are what is taken)."""
    return np.asfortranarray(cols.toarray() if sp.issparse(cols) else cols, dtype=np.float64)


def _side_by_side(a, b):
    """[a b]: CSC if either is sparse, else a float64 array."""
    if sp.issparse(a) or sp.issparse(b):
        return sp.hstack([a, b], format="csc", dtype=np.float64)
    return np.hstack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)])


@dataclass(frozen=True)
class Refit:
    """A refit selection: the ``kept`` columns (sorted), their ``weights``, the ``intercept``,
    the solver ``result`` (its margins) and, when read, the kept columns' data ``cols``."""

    kept: np.ndarray
    weights: np.ndarray
    intercept: float
    result: SolverResult
    cols: object = None


def splice(problem: Restricted, candidates: Candidates, refit: Refit, k: int, *,
           max_rounds: int = SPLICE_ROUNDS, pinned=()):
    """Exchange rounds on a refit selection of k features, kept while each lowers the
    restricted loss C Σ l by more than abess's threshold (:func:`splice_threshold`) — the
    acceptance rule of abess's splicing (Zhu et al., PNAS 2020, Alg. 2) — with the exchange
    set chosen by FGM's own two steps restarted from the refit model:

    1. grow: the ⌈k/2⌉ features outside of largest worst-case score (Xᵀs at the refit's
       dual, FGM's scorer: one pass) join the k;
    2. prune: the ℓ2 model on the 1.5·k (started from the refit's weights), eliminated back
       to k by :func:`surgeon_order` and refit (:func:`prune_and_refit`).

    When that exchange is rejected, the round — and every later one — tries one-for-one
    swaps instead (:func:`_swap_exchange`): a block exchange moves the features best alone,
    while among correlated words a single swap of a feature the others partly replace is
    what lowers the loss (fine-foods, k = 10, logistic loss: in 3 splits examined no block
    exchange was accepted, abess's selection had a restricted objective lower by 560–780;
    the swaps reached it in two and went below it in the third).

    The ``candidates`` give the columns outside (``refit.cols``, when given, are those of
    ``refit.kept``: only the candidates are then read). The ``pinned`` features never leave.
    A round whose exchange and swaps do not lower the loss enough ends the exchange (its
    result is not kept); at most ``max_rounds`` rounds. Returns (the last accepted
    :class:`Refit`, rounds, loss before, loss after); its ``kept`` sorted."""
    start = current = problem.data_loss(refit.result.margins)
    refit = Refit(np.asarray(refit.kept, dtype=np.int64), refit.weights, refit.intercept,
                  refit.result, refit.cols)
    rounds, blocks = 0, True
    for _ in range(int(max_rounds)):
        if problem.stopped():
            break
        found = None
        if blocks:
            found = _block_exchange(problem, candidates, refit, current, k, pinned)
            blocks = found is not None  # rejected once, it is not tried again
        if found is None:
            if refit.cols is None:
                refit = Refit(refit.kept, refit.weights, refit.intercept, refit.result,
                              candidates.columns(refit.kept))
            found = _swap_exchange(problem, candidates, refit, current, pinned)
        if found is None:
            break
        refit, current = found
        rounds += 1
    return refit, rounds, start, current


def _block_exchange(problem: Restricted, candidates: Candidates, refit: Refit, current: float,
                    k: int, pinned):
    """The ⌈k/2⌉ features outside of largest worst-case score join the k, the model on the
    union is refit, eliminated back to k and refit; returned as (:class:`Refit`, loss) when
    it lowers the restricted loss by more than abess's threshold for the features swapped,
    else None."""
    y, C = problem.y, problem.C
    kept = refit.kept
    extra = int(np.ceil(k / 2))
    signal = -float(C) * problem.loss.derivative(y * refit.result.margins) * y
    ids, _ = candidates.top(signal, kept.size + extra)
    newcomers = ids[~np.isin(ids, kept)][:extra]
    if newcomers.size == 0:
        return None
    union = np.union1d(kept, newcomers)
    kept_cols = candidates.columns(kept) if refit.cols is None else refit.cols
    # the kept columns from the last round, only the newcomers read from X
    cols = take_columns(_side_by_side(kept_cols, candidates.columns(newcomers)),
                        np.argsort(np.concatenate([kept, newcomers])))
    w0 = np.zeros(union.size)
    w0[np.searchsorted(union, kept)] = refit.weights
    local = np.arange(union.size)
    grown, b, res = restricted_fit(problem, cols, local, coef0=w0, intercept0=refit.intercept)
    chosen, new_weights, new_intercept, new_result = prune_and_refit(
        problem, cols, Fitted(local, grown, res.margins, b), k,
        pinned=np.flatnonzero(np.isin(union, pinned)))
    after = problem.data_loss(new_result.margins)
    swapped = int(np.setdiff1d(union[chosen], kept).size)
    if swapped == 0 or not after < current - splice_threshold(C, swapped, candidates.n_features,
                                                              y.size):
        return None
    return Refit(union[chosen], new_weights, new_intercept, new_result,
                 take_columns(cols, chosen)), after


SHORTLIST = 128  # features outside the model scored by forward sacrifice (abess's important_search)
SWAP_TRIES = 5  # entering candidates tried per swap round
SWAP_OUT = 3  # leaving candidates (the surgeon's first) tried per entering one


def _swap_exchange(problem: Restricted, candidates: Candidates, refit: Refit, current: float,
                   pinned):
    """One-for-one exchange: each of the ``SWAP_TRIES`` features outside of largest forward
    sacrifice (abess's ½g_j²/h_j, from a shortlist of ``SHORTLIST`` by FGM's worst-case
    scores, abess's ``important_search``) in turn joins the model, the (k+1)-feature model is
    refit, and each of the ``SWAP_OUT`` features :func:`surgeon_order` would drop first leaves
    in turn (Optimal Brain Surgeon sees the correlations abess's diagonal sacrifice misses:
    a word with a large sacrifice that a newcomer replaces), the k refit. The first swap
    that lowers the restricted loss by more than abess's threshold for one swapped feature
    is returned — (:class:`Refit`, loss) — else None.
    A newcomer whose k + 1 model does not lower the restricted objective by the threshold
    is not swapped in: removing a feature never lowers the optimum, so that model bounds
    every swap with it from below (on the objective; acceptance is on its loss part). A
    ``pinned`` feature never leaves."""
    y, C = problem.y, problem.C
    kept, weights, result = refit.kept, refit.weights, refit.result
    k = kept.size
    signal = -float(C) * problem.loss.derivative(y * result.margins) * y
    ids, _ = candidates.top(signal, min(candidates.n_features, k + SHORTLIST))
    outside = ids[~np.isin(ids, kept)]
    if outside.size == 0:
        return None
    out_cols = candidates.columns(outside)
    gain = forward_sacrifices(problem, out_cols, np.arange(outside.size), result.margins)
    entering = np.argsort(-gain, kind="stable")[:SWAP_TRIES]
    threshold = splice_threshold(C, 1, candidates.n_features, y.size)
    kept_cols = refit.cols
    if y.size * (k + entering.size) <= NEWTON_MAX_CELLS:  # small: column work on arrays
        kept_cols = _dense(kept_cols)
        out_cols = _dense(take_columns(out_cols, entering))
        entering_cols = [out_cols[:, [t]] for t in range(entering.size)]
    else:
        entering_cols = [take_columns(out_cols, [j]) for j in entering]
    for j, new_col in zip(entering, entering_cols):
        if problem.stopped():
            return None
        grown_cols = _side_by_side(kept_cols, new_col)
        w, b, res = restricted_fit(problem, grown_cols, np.arange(k + 1),
                                   coef0=np.append(weights, 0.0), intercept0=refit.intercept)
        if not res.objective < result.objective - threshold:
            # the k + 1 bound every swap with j from below: none can fall far enough
            continue
        # only the first few the surgeon would drop are tried: stop eliminating after them
        stays = np.append(np.isin(kept, pinned), False)
        saliency = surgeon_order(problem, grown_cols, Fitted(np.arange(k + 1), w, res.margins),
                                 keep=max(0, k - SWAP_OUT), pinned=stays)
        leave = [q for q in np.argsort(saliency, kind="stable") if q != k and not stays[q]]
        for q in leave[:SWAP_OUT]:
            stay = np.delete(np.arange(k + 1), q)
            union = np.append(np.delete(kept, q), outside[j])
            order = np.argsort(union)
            cols = take_columns(grown_cols, stay[order])
            w2, b2, res2 = restricted_fit(problem, cols, np.arange(k), coef0=w[stay][order],
                                          intercept0=b)
            after = problem.data_loss(res2.margins)
            if after < current - threshold:
                return Refit(union[order], w2, b2, res2, cols), after
    return None


@dataclass
class Refinement:
    """What :func:`refine_path` made of a path: the ``kept`` features, their ``weights`` (in
    the columns ``take`` reads), the ``intercept``, the last refit's solver ``result``, the
    features ``added`` to a short path, and the exchange ``rounds`` with the restricted loss
    before and after them."""

    kept: np.ndarray
    weights: np.ndarray
    intercept: float
    result: SolverResult
    added: np.ndarray
    support: np.ndarray
    rounds: int
    loss_before: float
    loss_after: float


def fill_to_k(problem: Restricted, candidates: Candidates, before: np.ndarray,
              margins: np.ndarray, missing: int, signal, *, ask_past: int) -> np.ndarray:
    """The ``missing`` features outside ``before`` of largest forward sacrifice ½g_j²/h_j
    (:func:`forward_sacrifices`), from a shortlist of the path's worst-case scores at its last
    model (``candidates.top(signal, n)``, FGM's Xᵀs scorer: one pass)."""
    none = np.zeros(0, dtype=np.int64)
    n_features = candidates.n_features
    if missing <= 0 or n_features - before.size <= 0 or signal is None:
        return none
    # the model's own features score highest (tied at the optimum): ask past them
    want = min(n_features, before.size + missing + max(missing, ask_past))
    ids, _ = candidates.top(signal, want)
    ids = np.setdiff1d(ids, before)
    if ids.size == 0:
        return none
    gain = forward_sacrifices(problem, candidates.columns(ids), np.arange(ids.size), margins)
    best = np.argsort(-gain, kind="stable")[:missing]
    return np.sort(ids[best[gain[best] > 0]])  # a feature with no slope adds nothing


def refine_path(problem: Restricted, candidates: Candidates, path: Fitted, k: int, *,
                signal, paper: bool, ask_past: int, pinned=()) -> Refinement:
    """A grown path (its ``columns`` with weights ``coef`` on the columns the candidates read,
    and ``intercept``) to exactly k features: filled by forward sacrifice when short
    (:func:`fill_to_k`), cut to k — by |w| for the paper's algorithm (``paper``), else by
    backward elimination — and refit (:func:`prune_and_refit`); then, unless ``paper``, the
    exchange rounds of :func:`splice`. The ``pinned`` features (in the path: FGM's blocks
    hold them) are kept throughout."""
    before, w_before, intercept = path.columns, path.coef, path.intercept
    before_cols = candidates.columns(before)
    margins = np.asarray(before_cols @ w_before).ravel() + intercept
    added = fill_to_k(problem, candidates, before, margins, k - before.size, signal,
                      ask_past=ask_past)
    support = np.union1d(before, added)
    cols = before_cols if added.size == 0 else candidates.columns(support)
    w_support = np.zeros(support.size)
    w_support[np.searchsorted(support, before)] = w_before
    kept_local, weights, intercept, res = prune_and_refit(
        problem, cols, Fitted(np.arange(support.size), w_support, margins, intercept), k,
        score=np.abs(w_support) if paper else None,
        pinned=np.flatnonzero(np.isin(support, pinned)))
    kept = support[kept_local]
    rounds, loss_before, loss_after = 0, res.objective, res.objective
    if not paper:
        refit, rounds, loss_before, loss_after = splice(
            problem, candidates, Refit(kept, weights, intercept, res,
                                       take_columns(cols, kept_local)), k, pinned=pinned)
        kept, weights, intercept, res = refit.kept, refit.weights, refit.intercept, \
            refit.result
    return Refinement(kept=kept, weights=weights, intercept=intercept, result=res, added=added,
                      support=support, rounds=rounds, loss_before=loss_before,
                      loss_after=loss_after)
