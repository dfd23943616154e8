"""FSA's annealing loop (Barbu, She, Ding & Gramajo, TPAMI, Algorithm 1) as an optim/ part:
β ← 0; for e = 1 … N_iter one gradient step β ← (I + ηP)⁻¹(β − η∇ℓ) (the quadratic prior's
exact proximal step), then keep the M_e coefficients of largest |β_j| (the schedule (3),
:func:`explorer.engines.fsa.schedules.fsa_schedule`), dropping the other columns for good.

The data term is any :class:`~explorer.optim.datafits.Datafit` (or the pairwise one); the
design (:mod:`explorer.engines.fsa.designs`) is X standardised implicitly (sparse stays
sparse; its working matrix physically shrinks as columns die, so the cost follows the area
under the schedule, Table 1) or the piecewise-linear responses of §2.5.1 (``bins``), kept or
killed per variable by the norm of its group: both have the same methods, and the loop
never asks which it has. Small dense working sets run in the compiled kernel
:func:`~explorer.engines.fsa._compiled.fsa_compiled_steps`, a chunk of iterations per call.

:func:`anneal` adds the divergence guard: a run whose loss blows up restarts at half the step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ...features import PiecewiseLinearBasis
from ...kernels import column_moments_and_xts, xts
from ...kernels.chunked import PassInterrupted, interruptible
from ._compiled import (
    AFTER_CUTS,
    AT_ONCE,
    REJECTED,
    ROW_MAJOR,
    ChunkOut,
    ChunkPlan,
    DataTerm,
    Knobs,
    StepState,
    fsa_compiled_steps,
    fsa_next_eta,
)
from .designs import _unit_if_constant, make_design, standard_moments
from .schedules import fsa_schedule

COMPILED_CELLS = 4_000_000  # n × working columns up to which the compiled steps run
CHUNK_CELLS = 20_000_000    # cells a compiled chunk may touch before its records stream
RECORD_CELLS = 2_000_000    # … and values of β over the working columns it may write
MAX_CHUNK = 512
KEEP_COLUMN_MAJOR = 0.25    # a column-major working copy is compacted below this alive share
MAX_RESTARTS = 30           # halvings of η before a diverging fit gives up
MAX_HALVINGS = 60           # halvings of η inside one step before the fit counts as diverged
_NO_PRODUCT = np.zeros(0)  # no first Xᵀr to hand the compiled steps
_NO_COLUMNS = np.zeros(0, dtype=np.int64)
_NO_COLUMNS.setflags(write=False)
_STEP_KEYS = frozenset(("M_e", "before", "killed", "weights", "values", "eta", "work_columns"))


class Steps(NamedTuple):
    """The records of consecutive iterations, as parallel lists: the loss before each step,
    the survivors after it (read-only arrays, shared between steps that killed nothing), the
    record's ``info``, and the model after it (β of the survivors, intercept) to go back to."""

    loss: list
    alive: list
    info: list
    values: list
    intercept: list

    def emit(self, emit_many, emit_deferred=None):
        """Write the records (see :meth:`AnnealingRun.run`)."""
        return emit_many(objective=self.loss, selected=self.alive, info=self.info,
                         inner_steps=1)

    def model(self, index: int):
        """(survivors, their β, intercept) after step ``index`` of these."""
        return self.alive[index], self.values[index], self.intercept[index]


class ChunkSteps:
    """The steps of one compiled chunk as the kernel wrote them (β and alive mask over the
    working columns, one row per step), from which its records are built: at once for a
    callback, else when first read (``emit_deferred``). ``before``: the alive mask over the
    working columns before the chunk, ``work_orig`` their original indices, ``scale`` the
    columns' scales, ``schedule`` M_e of each step, ``info``/``extra`` the records' common
    and a dask X's keys."""

    def __init__(self, out: ChunkOut, steps: int, before, work_orig, scale, schedule, info,
                 extra):
        self.loss, self.intercept = out.loss[:steps].tolist(), out.b[:steps].tolist()
        self.betas, self.masks = out.beta[:steps], out.alive[:steps]
        self.before, self.work_orig, self.scale = before, work_orig, scale
        self.schedule, self.info, self.extra = schedule, info, extra

    def __len__(self) -> int:
        return len(self.loss)

    def emit(self, emit_many, emit_deferred=None):
        """Write the records (see :meth:`AnnealingRun.run`)."""
        if emit_deferred is not None:
            return emit_deferred(len(self.loss), self.build, inner_steps=1)
        objective, selected, info = self.build()
        return emit_many(objective=objective, selected=selected, info=info, inner_steps=1)

    def model(self, index: int):
        """(survivors, their β, intercept) after step ``index`` of the chunk."""
        mask = self.masks[index]
        return self.work_orig[mask], self.betas[index][mask], float(self.intercept[index])

    def build(self):
        """(losses, survivors, infos) of the records, one per step. The alive sets, β, weights
        and killed columns of all steps are gathered at once into flat arrays that the
        records slice (a record costs microseconds; FSA writes hundreds per fit, most of the
        early ones killing columns)."""
        masks, steps = self.masks, len(self.loss)
        ends = np.cumsum(masks.sum(axis=1)).tolist()
        flat_ids = self.work_orig[np.nonzero(masks)[1]]  # row by row, as betas[masks] is
        flat_values = self.betas[masks]
        flat_weights = flat_values / self.scale[flat_ids]
        before_masks = np.vstack([self.before[None], masks[:-1]])
        dead_rows, dead_positions = np.nonzero(before_masks & ~masks)
        flat_killed = self.work_orig[dead_positions]
        killed_ends = np.cumsum(np.bincount(dead_rows, minlength=steps)).tolist()
        alive_ids = self.work_orig[self.before]
        for flat in (flat_values, flat_weights, flat_killed, alive_ids):
            flat.setflags(write=False)  # the records share them
        etas, work_columns = self.info["eta"], self.info["work_columns"]
        extra = self.extra
        alive_out, info_out = [], []
        start = killed_start = 0
        for m_e, end, killed_end, eta in zip(self.schedule, ends, killed_ends, etas):
            before = alive_ids.size
            killed = _NO_COLUMNS
            if killed_end > killed_start:  # this step killed columns
                killed = flat_killed[killed_start:killed_end]
                alive_ids = flat_ids[start:end].copy()  # its own array, shared by the next
                alive_ids.setflags(write=False)
            alive_out.append(alive_ids)
            info = {"M_e": m_e, "before": before, "killed": killed,
                    "weights": flat_weights[start:end], "values": flat_values[start:end],
                    "eta": eta, "work_columns": work_columns}
            if extra:
                info.update(extra)
            info_out.append(info)
            start, killed_start = end, killed_end
        return self.loss, alive_out, info_out


class StepRule:
    """The step size of the annealing loop: at most η_max (the paper's η, or the user's),
    cut until the step's model — after the kill — lies under the data term's quadratic
    majoriser at the current model (:func:`majorised`, the backtracking test of proximal
    gradient methods, Beck & Teboulle 2009, applied to the hard-thresholded step), each cut
    to a step the rejected direction certainly allows, and doubled again after steps
    accepted at once, waiting longer after a doubling that failed
    (:func:`explorer.kernels.fsa_next_eta`). Such a step cannot diverge, and
    once the schedule stops killing (e > N_iter/2) the objective decreases monotonically: the
    loop cannot oscillate, whatever η_max."""

    def __init__(self, eta_max: float):
        self.eta_max = float(eta_max)
        self.state = np.array([0.0, 1.0, 0.0])  # the compiled steps share it

    def reject(self, eta: float, bound: float) -> float:
        """The η to try after a step of ``eta`` was rejected (``bound``: the curvature bound
        along its direction)."""
        return float(fsa_next_eta(eta, self.eta_max, REJECTED, bound, self.state))

    def accept(self, eta: float, at_once: bool) -> float:
        """The next step's η after a step of ``eta`` was accepted."""
        return float(fsa_next_eta(eta, self.eta_max, AT_ONCE if at_once else AFTER_CUTS, 0.0,
                                  self.state))


def majorised(value_new, value, grad, grad_b, d, d_b, eta, slack=1e-12) -> bool:
    """ℓ(β + d, b + d_b) ≤ ℓ(β, b) + ⟨∇ℓ, (d, d_b)⟩ + ‖(d, d_b)‖²/(2η): the step of size η
    stays under the quadratic majoriser of the data term (true for any η ≤ 1/L, L the
    gradient's Lipschitz constant), up to rounding: ``slack`` relative to the values
    (:func:`rounding_slack` of X's precision)."""
    bound = value + float(np.sum(grad * d)) + grad_b * d_b + \
        (float(np.sum(d * d)) + d_b * d_b) / (2.0 * eta)
    return value_new <= bound + slack * max(abs(value), abs(value_new)) + 1e-300


def rounding_slack(X) -> float:
    """How far apart two evaluations of the data term may be by rounding alone: outputs are
    products in X's precision, so a float32 X's steps that decrease the loss by less than
    its rounding must not count as failing the majoriser test (η would collapse)."""
    dtype = getattr(X, "dtype", np.float64)
    eps = np.finfo(dtype).eps if np.issubdtype(dtype, np.floating) else np.finfo(float).eps
    return max(1e-12, 64.0 * float(eps))


@dataclass(frozen=True)
class Annealing:
    """The knobs of Algorithm 1: keep ``k`` of the variables after ``n_iter`` steps on the
    schedule with rate ``mu``; prior ``ridge``·β² (and, for the piecewise-linear basis with
    ``bins`` bins, the second-order ``smoothness`` prior (13))."""

    k: int
    n_iter: int
    mu: float
    ridge: float
    fit_intercept: bool = True
    standardize: bool = True
    bins: int | None = None
    smoothness: float = 0.0
    # what the user knows: per variable, what multiplies its size in the kill ranking
    # (1 / penalty factor; inf: never killed), and β ≥ 0 (linear basis)
    priority: np.ndarray | None = None
    positive: bool = False


@dataclass(frozen=True)
class RunHooks:
    """How a run of Algorithm 1 talks to its caller: ``emit_many`` writes a chunk's records
    (the protocol of :meth:`explorer.methods.base.Recorder.emit_many`), ``emit_deferred`` a
    compiled chunk's when given (that of :meth:`~explorer.methods.base.Recorder.emit_deferred`,
    which may build them later); ``reset()`` is told that the records start over (a
    diverged run restarted); ``on_state(run)`` sees every new model before its records;
    ``interrupt()`` is polled inside passes over a chunked X and ``stop_flag`` (a one-element
    int8 array) by the compiled steps: a user's *Stop*."""

    emit_many: Callable
    emit_deferred: Callable | None = None
    reset: Callable[[], None] | None = None
    on_state: Callable | None = None
    interrupt: Callable[[], bool] | None = None
    stop_flag: np.ndarray | None = None


def anneal(X, datafit, config: Annealing, eta: float, hooks: RunHooks, *, warm=None,
           moments=None, first_product=None):
    """Run Algorithm 1, its records written through ``hooks`` (:class:`RunHooks`); a run
    whose loss diverges restarts from the start at η/2 (``hooks.reset()`` tells the caller
    its records start over). Returns (the finished run, the last step's η, its outcome:
    "done", "stopped" or "diverged" after ``MAX_RESTARTS`` halvings). ``warm``: the model to
    start from; ``moments``: X's :func:`standard_moments` when the caller has them (computed
    once for every restart); ``first_product``: Xᵀr of the first step (:func:`first_pass`),
    which then reads no X."""
    outcome = "diverged"
    for _attempt in range(MAX_RESTARTS):
        run = AnnealingRun(config, X, datafit, eta, warm=warm, on_state=hooks.on_state,
                           moments=moments, first_product=first_product)
        outcome = run.run(hooks.emit_many, hooks.stop_flag, hooks.interrupt,
                          hooks.emit_deferred)
        if outcome != "diverged":
            break
        eta /= 2.0
        if hooks.reset is not None:
            hooks.reset()
    return run, run.step_eta, outcome


GRAM_ROWS, GRAM_POWER = 2000, 20  # gram_norm's rows and power iterations
GRAM_PASSES = 2 * GRAM_POWER  # … two products each, over the rows taken


def gram_norm(X, config: Annealing, rows: int = GRAM_ROWS, n_power: int = GRAM_POWER,
              seed: int = 0) -> float:
    """1.1·λ_max(DᵀD/N) of the design D the gradient sees (standardised X, or the
    piecewise-linear responses), by power iteration on up to ``rows`` rows."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    take = X.rows if getattr(X, "is_chunked", False) else X.__getitem__
    sample = take(np.sort(rng.choice(n, rows, replace=False))) if n > rows else \
        (X.to_memory() if getattr(X, "is_chunked", False) else X)
    if config.bins is not None:
        basis = PiecewiseLinearBasis(config.bins).fit(X)
        bins, frac = basis.encode(sample)

        def gram(v):
            u = basis.forward(bins, frac, v.reshape(-1, basis.n_basis))
            return basis.gradient(bins, frac, u).ravel() / sample.shape[0]

        size = X.shape[1] * basis.n_basis
    else:
        mean, scale = standard_moments(sample) if config.standardize else \
            (np.zeros(X.shape[1]), np.ones(X.shape[1]))

        def gram(v):
            w = v / scale
            u = np.asarray(sample @ w).ravel() - mean @ w
            return (xts(sample, u) - mean * u.sum()) / scale / sample.shape[0]

        size = X.shape[1]
    v = rng.normal(size=size)
    lam = 0.0
    for _ in range(n_power):
        v = gram(v / np.linalg.norm(v))
        lam = float(np.linalg.norm(v))
    return 1.1 * max(lam, 1e-12)


class AnnealingRun:
    """One run of Algorithm 1 at a fixed η over a shrinking working matrix. ``on_state(run)``
    is called whenever the model (``alive``, ``beta``, ``b``) has moved, before its records
    are emitted, so a caller can publish it."""

    def __init__(self, config: Annealing, X, datafit, eta: float, warm=None, on_state=None,
                 moments=None, first_product=None):
        self.config = config
        self.on_state = on_state
        self.X = X
        self.datafit = datafit
        self.eta = eta  # the next step's
        self.step_eta = eta  # the last step's
        self.rule = StepRule(eta)
        self.slack = rounding_slack(X)
        self._carried = None  # (outputs, data term) of the current model, when known
        self.final_loss = np.nan  # the objective of the current model, once a step is taken
        self.last_before = np.nan  # … and of the model before the last step recorded
        self.n, self.m = X.shape
        self.schedule = fsa_schedule(self.m, config.k, config.n_iter, config.mu)
        self.alive = np.arange(self.m)  # original indices of the surviving variables
        self.design = make_design(X, config, eta, moments, first_product, warm)
        self.beta = self.design.zeros()
        self.chunked = X if getattr(X, "is_chunked", False) else None  # its pass counters
        # the trial steps the majoriser test rejected
        self.rejected = 0
        self.b = 0.0
        if warm is not None:
            self.beta[warm.support] = warm.coef
            self.b = warm.intercept

    @property
    def cells(self) -> float:
        """Matrix cells the run's products read (stored values of a sparse matrix)."""
        return self.design.cells

    @cells.setter
    def cells(self, value: float) -> None:
        self.design.cells = value

    # --------------------------------------------------------------- model pieces
    def _outputs(self, beta=None, b=None):
        """X's outputs at the model (``beta`` over the alive variables, zeros for those a
        candidate step kills, and intercept ``b``; by default the current model)."""
        return self.design.outputs(self.beta if beta is None else beta,
                                   self.b if b is None else b)

    def _gradient(self, r):
        """Gradient of the data term only (the prior is applied by its proximal step)."""
        return self.design.gradient(r, self.alive)

    @property
    def passes(self) -> float:
        """The run's products as passes over the whole X (cells read / X's cells; a sparse
        X's stored values), the compaction copies included."""
        unit = float(self.X.nnz) if sp.issparse(self.X) else float(self.n) * float(self.m)
        return self.cells / max(unit, 1.0)

    def _prior_value(self, beta=None):
        return self.design.prior_value(self.beta if beta is None else beta, self.config)

    # --------------------------------------------------------------- the loop
    def run(self, emit_many, stop_flag=None, interrupt=None, emit_deferred=None) -> str:
        """Algorithm 1, a chunk of iterations at a time (one iteration on the Python path,
        several in the compiled kernel), one ``emit_many`` per chunk, one record per iteration
        (it returns the index of the record to stop at, None to go on).
        ``stop_flag`` is a one-element int8 array the compiled steps poll; ``interrupt()``
        is polled between the tasks of a pass over a chunked X, and a step it cuts short
        leaves the model of the step before it. ``emit_deferred``, when given, writes the
        compiled chunks' records (see :func:`anneal`)."""
        with interruptible(self.X, interrupt):
            return self._run(emit_many, stop_flag, emit_deferred)

    def _run(self, emit_many, stop_flag, emit_deferred) -> str:
        n_iter = self.config.n_iter
        self.design.start(self.alive)
        self.first = np.nan
        self.stop_flag = stop_flag
        e = 1
        while e <= n_iter:
            before = self.alive, self.beta, self.b
            try:
                steps, status = self._compiled_chunk(e) if self._compiled() else self._step(e)
            except PassInterrupted:
                self._restore(*before)
                return "stopped"
            self._store()
            stop_at = steps.emit(emit_many, emit_deferred) if len(steps.loss) else None
            if len(steps.loss):
                self.last_before = float(steps.loss[-1 if stop_at is None else stop_at])
            if stop_at is not None:
                if stop_at < len(steps.loss) - 1:  # go back to the model of the last record
                    self._restore(*steps.model(stop_at))
                return "stopped"
            if status != "ok":
                return status
            e += len(steps.loss)
        return "done"

    def _restore(self, alive, beta, b):
        """Go back to an earlier step of a compiled chunk (a stop in its middle)."""
        self.alive, self.beta, self.b = alive.copy(), beta.copy(), b
        self._carried = None
        self._store()

    def _info(self, e, before, killed, values, weights, eta=None):
        info = {"M_e": int(self.schedule[e - 1]), "before": before, "killed": killed,
                "weights": weights, "values": values, "eta": self.eta if eta is None else eta,
                "work_columns": self.design.work_columns}
        if self.chunked is not None:
            work = self.design.work
            lazy = getattr(work, "is_chunked", False)
            info.update({"passes": int(self.chunked.passes),
                         "bytes_read": int(self.chunked.bytes_read),
                         "working_set": ("persisted" if work.persisted else "lazy")
                         if lazy else "in memory"})
        return info

    def _step(self, e):
        """One iteration e (1-based) in numpy: (its record as :class:`Steps`, status).
        The step is η's largest value (see :func:`step_rule`) whose model, after the kill,
        lies under the data term's quadratic majoriser at the current model; its outputs and
        data term are carried to the next iteration, which then needs no pass for them."""
        f, data = self._carried if self._carried is not None else (None, None)
        if f is None:
            f = self._outputs()
            data = self.datafit.value(f)
        loss = data + self._prior_value()
        if np.isnan(self.first):
            self.first = loss
        if not np.isfinite(loss) or loss > 1e3 * max(self.first, 1e-12):
            return Steps([], [], [], [], []), "diverged"
        r = self.datafit.gradient(f)
        grad = self._gradient(r)
        rsum = float(r.sum()) if self.config.fit_intercept else 0.0
        M_e = int(self.schedule[e - 1])
        cuts = 0
        for _halving in range(MAX_HALVINGS):
            beta = self.design.prior_step(self.beta - self.eta * grad, self.eta, self.config)
            if self.config.positive:
                beta = np.maximum(beta, 0.0)
            b = self.b - self.eta * rsum
            keep = None
            if self.alive.size > M_e:
                size = self.design.size(beta)
                if self.config.priority is not None:
                    rank = self.config.priority[self.alive]
                    size = np.where(np.isinf(rank), np.inf, size * rank)
                keep = np.sort(np.argsort(-size, kind="stable")[:M_e])
                beta[np.setdiff1d(np.arange(beta.shape[0]), keep)] = 0.0
            if not np.all(np.isfinite(beta)) or np.abs(beta).max(initial=0) > 1e150:
                return Steps([], [], [], [], []), "diverged"
            f_new = self._outputs(beta, b)
            data_new = self.datafit.value(f_new)
            if majorised(data_new, data, grad, rsum, beta - self.beta, b - self.b, self.eta,
                         self.slack):
                break
            norm2 = float(np.sum(np.square(beta - self.beta))) + (b - self.b) ** 2
            moved = float(np.sum(np.square(f_new - f)))
            self.eta = self.rule.reject(self.eta, self.datafit.point_curvature * moved / norm2
                                        if norm2 > 0 else 0.0)
            self.rejected += 1
            cuts += 1
        else:
            return Steps([], [], [], [], []), "diverged"
        self.step_eta = step_eta = self.eta
        self.eta = self.rule.accept(self.eta, at_once=cuts == 0)
        self._carried = (f_new, data_new)
        self.b = b
        before = self.alive.size
        killed = np.zeros(0, dtype=np.int64)
        if keep is not None:
            killed = np.delete(self.alive, keep)
            self.alive = self.alive[keep]
            self.beta = beta[keep]
            self.design.kill(keep, self.alive)
        else:
            self.beta = beta
        values = self.design.values(self.beta)
        weights = self.design.weights(values, self.alive)
        alive = self.alive.copy()
        alive.setflags(write=False)
        self.final_loss = data_new + self._prior_value()
        return Steps([loss], [alive], [self._info(e, before, killed, values, weights, step_eta)],
                     [values], [self.b]), "ok"

    def _compiled(self) -> bool:
        """The compiled kernel runs the linear model on an in-memory working matrix that is
        CSC, or dense and small enough that BLAS threads and per-call overhead cost more
        than they give (a CSR X becomes CSC at its first compaction)."""
        work = getattr(self.design, "work", None)  # the linear design's
        if work is None or getattr(work, "is_chunked", False) or \
                getattr(self.datafit, "loss", None) is None or self.datafit.loss.code < 0:
            return False
        if sp.issparse(work):
            return work.format == "csc"
        return self.n * work.shape[1] <= COMPILED_CELLS

    def _compiled_chunk(self, e):
        """Up to a chunk of iterations from e in the compiled steps
        (:func:`~explorer.engines.fsa._compiled.fsa_compiled_steps`), until enough working
        columns are dead that it must be compacted: a tenth of a row-major copy,
        ``1 − KEEP_COLUMN_MAJOR`` of a column-major or CSC one."""
        design = self.design  # linear, in memory, dense or CSC
        W = design.work.shape[1]
        alive = design.work_pos >= 0
        beta = np.zeros(W)
        beta[alive] = self.beta[design.work_pos[alive]]
        working, touched = design.compiled_form(alive)
        # column-major steps skip the dead columns: their work is the alive columns' (a bound
        # for the whole chunk, as columns only die), and compacting can wait until few are left
        keep = 0.9 if working.layout == ROW_MAJOR else KEEP_COLUMN_MAJOR
        budget = int(min(self.config.n_iter - e + 1, MAX_CHUNK,
                         max(1, CHUNK_CELLS // max(1, touched)),
                         max(1, RECORD_CELLS // W)))
        written = ChunkOut(np.empty(budget), np.empty((budget, W)),
                           np.empty((budget, W), dtype=np.bool_), np.empty(budget),
                           np.empty(budget), np.zeros(2))
        stop = self.stop_flag if self.stop_flag is not None else np.zeros(1, dtype=np.int8)
        loss_fn = self.datafit.loss
        first = _NO_PRODUCT
        if design.first_product is not None:  # the first step's Xᵀr, from the first pass
            first, design.first_product = design.first_product[design.work_orig], None
        priority = np.ones(W) if self.config.priority is None else \
            np.ascontiguousarray(self.config.priority[design.work_orig])
        b, steps, status, self.first, self.eta, final = fsa_compiled_steps(
            working,
            DataTerm(self.datafit.y, loss_fn.code, loss_fn.numba_param, self.datafit.weight,
                     self.datafit.point_curvature),
            StepState(beta, alive, self.b, self.eta, self.rule.state, self.first),
            Knobs(self.config.ridge, self.config.fit_intercept, self.schedule, priority,
                  bool(self.config.positive)),
            ChunkPlan(e - 1, budget, W - int(np.ceil(keep * W)) + 1, self.rule.eta_max,
                      MAX_HALVINGS, self.slack),
            written, first, stop)
        self.cells += float(written.work[0])
        self.rejected += int(written.work[1])
        self._carried = None
        out = self._chunk_steps(e, steps, written)
        if steps:
            self.step_eta = float(written.eta[steps - 1])
        if steps:
            self.b = float(b)
            self.final_loss = float(final)
            self.alive, self.beta, _ = out.model(steps - 1)  # new arrays (fancy indexing)
            design.compact(self.alive, keep)
        status = {0: "ok", 1: "diverged", 2: "stopped"}[int(status)]
        return out, status

    def _chunk_steps(self, e, steps, written: ChunkOut) -> ChunkSteps:
        """A compiled chunk's ``steps`` iterations from e (their records built later)."""
        info = self._info(e, 0, None, None, None)
        info["eta"] = written.eta[:steps].tolist()
        extra = {key: info[key] for key in info.keys() - _STEP_KEYS}  # a dask X's counters
        design = self.design
        return ChunkSteps(written, steps, design.work_pos >= 0, design.work_orig, design.scale,
                          self.schedule[e - 1:e - 1 + steps].tolist(), info, extra)

    def _store(self):
        if self.on_state is not None:
            self.on_state(self)


def first_pass(X: np.ndarray, datafit) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """(:func:`standard_moments`, Xᵀr) of a dense in-memory X in one pass over it, r the data
    term's gradient at β = 0 and a zero intercept (Algorithm 1's start): the first step's
    product, which :class:`AnnealingRun` then takes instead of reading X again."""
    r = datafit.gradient(np.zeros(X.shape[0]))
    mean, std, product = column_moments_and_xts(X, r)
    return (mean, _unit_if_constant(std)), product
