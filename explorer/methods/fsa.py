"""FSA — feature selection with annealing (Barbu, She, Ding & Gramajo, TPAMI).

Algorithm 1: β ← 0; for e = 1 … N_iter: one gradient step ``β ← β − η ∂L/∂β``, then keep only
the M_e coefficients of largest |β_j| (eq. 3's inverse schedule), dropping the other columns for
good. ``L(β) = (1/N) Σ ℓ + ρ(β)`` with the data term as a *mean* (this is the rescaling that
makes the paper's η = 20 / 1 sensible on standardised columns) and ρ(β) = ``ridge``·β².
The quadratic prior is applied by its exact proximal step β ← (I + ηP)⁻¹(β − η∇ℓ), equal to
the paper's gradient step to first order in η and stable when η times the prior's curvature
is large (the smoothness prior (13) with η = 20).

Losses: logistic (6), Huber-smoothed hinge (7, width ``huber_h``), Lorenz (8), squared error
(4/10, a regressor) and the pairwise ranking loss (9, over pairs with different relevance inside
a query). ``basis="piecewise_linear"`` expands each variable into B+1 hat responses over its
training range (§2.5.1) kept or killed as a group by its norm, with the smoothness prior (13).

The working matrix physically shrinks: killed columns are dropped from a compacted copy once
they are 10% of its width, so the cost follows the area under the schedule (Table 1).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from .._params import ParamSpec
from ..features import PiecewiseLinearBasis, second_difference
from ..kernels import xts
from ..optim.datafits import Datafit, PairwiseDatafit
from ..optim.losses import make_loss
from ..optim.master import WarmStart
from ..optim.schedules import fsa_schedule
from .base import BaseSelector, Recorder, register

COMPILED_CELLS = 4_000_000  # n × working columns up to which the compiled steps run
CHUNK_CELLS = 20_000_000    # cells a compiled chunk may touch before its records stream
MAX_CHUNK = 64
LOCAL_BYTES = 512 * 2**20   # a dask working set this small is pulled into memory
PERSIST_SHARE = 0.25        # … and persisted on the workers below this share of their memory
_PAPER_ETA = {"logistic": 20.0, "huber_svm": 1.0, "lorenz": 1.0, "squared": 1.0, "ranking": 1.0}


@register("fsa")
class FSA(BaseSelector):
    """Feature selection with annealing: exactly k variables, chosen by a shrinking schedule.

    Parameters
    ----------
    k : int
        Number of variables kept at the end.
    loss : {"logistic", "huber_svm", "lorenz", "squared", "ranking"}
        Per-example loss; "squared" makes a regressor and "ranking" a scoring function.
    mu : float
        Annealing rate μ of the schedule (3) (paper: 300).
    n_iter : int
        N_iter (paper: 500). M_e reaches k at e = N_iter/2.
    eta : float or None
        Learning rate; None is the paper's (20 for logistic, 1 otherwise), except for the
        squared loss (unbounded gradient) and the piecewise-linear basis (unstandardised
        responses), where it is capped at 1.8/L, L = l''·λ_max(DᵀD/N) of the design the gradient
        sees, estimated by power iteration on up to 2,000 rows: η = 1 diverges on the paper's
        own regression design (λ_max ≈ 19 for δ = 0.9) and η = 20 on hat responses. If the loss
        still blows up the step is halved and the fit restarts; ``eta_`` is the rate used.
    ridge : float
        s in the prior ρ(β) = sβ² (λ in eq. 13).
    huber_h : float
        Half-width of the Huber-smoothed hinge.
    basis : {None, "piecewise_linear"}
        Linear in each variable, or a piecewise-linear response with ``bins`` bins.
    bins : int
        B, the number of bins of the piecewise-linear basis (B+1 coefficients per variable).
    smoothness : float
        c of the second-order prior (13).
    standardize : bool
        Work on standardised columns (sparse input is scaled without being densified; the
        centring is applied implicitly). Ignored by the piecewise-linear basis, which is
        scale-free. ``coef_``/``intercept_`` are reported in the original units.
    fit_intercept : bool
        Unpenalised intercept updated by the same gradient steps.
    warm_start : bool
        Start from the previous β (on its kept variables) instead of 0.
    """

    display_name = "FSA"
    sparsity_param = "k"
    multiclass = "binary"
    supports_warm_start = True
    accepts_chunked = True
    has_schedule = True
    _fit_params = ("query",)
    param_specs = (
        ParamSpec("k", "k (features kept)", 10, "int", 1, 100000, log=True,
                  help="number of variables selected", bound="n_features"),
        ParamSpec("loss", "loss", "logistic", "choice",
                  choices=("logistic", "huber_svm", "lorenz", "squared", "ranking"),
                  help="logistic (6), Huber SVM (7), Lorenz (8), squared (4), ranking (9)"),
        ParamSpec("mu", "annealing μ", 300.0, "float", 0.0, 1e5,
                  help="schedule steepness (eq. 3); larger kills faster",
                  extra={"options": (0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0,
                                     10000.0)}),
        ParamSpec("n_iter", "iterations", 500, "int", 2, 100000, log=True,
                  help="N_iter; k is reached at N_iter/2"),
        ParamSpec("eta", "learning rate η", None, "float", 1e-6, 1e4, log=True, nullable=True,
                  help="None: the paper's (20 logistic, 1 otherwise)"),
        ParamSpec("ridge", "ridge s", 1e-3, "float", 0.0, 1e3, help="prior sβ²"),
        ParamSpec("huber_h", "Huber h", 0.1, "float", 1e-4, 10.0, log=True, live=False,
                  when={"loss": ("huber_svm",)}),
        ParamSpec("basis", "basis", None, "choice", choices=(None, "piecewise_linear"),
                  nullable=True, help="piecewise-linear responses (§2.5)"),
        ParamSpec("bins", "bins B", 10, "int", 1, 1000, live=False,
                  when={"basis": ("piecewise_linear",)}),
        ParamSpec("smoothness", "smoothness c", 0.1, "float", 0.0, 1e4, live=False,
                  help="second-order prior (13)", when={"basis": ("piecewise_linear",)}),
        ParamSpec("standardize", "standardize", True, "bool"),
        ParamSpec("fit_intercept", "intercept", True, "bool"),
        ParamSpec("warm_start", "warm start", False, "bool", help="start from the previous β"),
    )

    def __init__(self, k: int = 10, loss: str = "logistic", mu: float = 300.0,
                 n_iter: int = 500, eta: float | None = None, ridge: float = 1e-3,
                 huber_h: float = 0.1, basis: str | None = None, bins: int = 10,
                 smoothness: float = 0.1, standardize: bool = True, fit_intercept: bool = True,
                 warm_start: bool = False):
        self.k = k
        self.loss = loss
        self.mu = mu
        self.n_iter = n_iter
        self.eta = eta
        self.ridge = ridge
        self.huber_h = huber_h
        self.basis = basis
        self.bins = bins
        self.smoothness = smoothness
        self.standardize = standardize
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start

    @property
    def _task(self) -> str:
        return {"squared": "regression", "ranking": "ranking"}.get(self.loss, "classification")

    # ------------------------------------------------------------------ fit
    def _datafit(self, y, query):
        if self.loss == "ranking":
            return PairwiseDatafit(y, query)
        if self.loss == "squared":  # the paper's (1/N) Σ (y − f)² (eq. 4): twice the table's ½r²
            return Datafit(make_loss("squared"), y, scale=2.0)
        params = {"h": self.huber_h} if self.loss == "huber_svm" else {}
        return Datafit(make_loss(self.loss, **params), y)

    def _fit(self, X, y, recorder: Recorder, query=None, **_):
        m = X.shape[1]
        if int(self.k) > m:
            raise ValueError(f"k={self.k} is larger than the number of features "
                             f"(n_features={m})")
        if query is not None and self.loss != "ranking":
            raise ValueError("query ids are only used by loss='ranking'")
        if getattr(X, "is_chunked", False) and self.basis is not None:
            raise ValueError("basis='piecewise_linear' needs X in memory: a dask X is fitted "
                             "with the linear basis")
        datafit = self._datafit(y, query)
        eta = float(self.eta) if self.eta is not None else _PAPER_ETA[self.loss]
        if self.eta is None and (self.loss == "squared" or self.basis is not None):
            eta = min(eta, 1.8 / (datafit.curvature * self._gram_norm(X)))
        for _attempt in range(30):
            state = _Run(self, X, datafit, eta)
            outcome = state.run(recorder)
            if outcome != "diverged":
                break
            eta /= 2.0
            recorder.reset()  # the next record restarts at iteration 0
        self.eta_ = eta
        state.finish()

    def _gram_norm(self, X, rows: int = 2000, n_power: int = 20, seed: int = 0) -> float:
        """1.1·λ_max(DᵀD/N) of the design D the gradient sees (standardised X, or the
        piecewise-linear responses), by power iteration on up to ``rows`` rows."""
        rng = np.random.default_rng(seed)
        n = X.shape[0]
        take = X.rows if getattr(X, "is_chunked", False) else X.__getitem__
        sample = take(np.sort(rng.choice(n, rows, replace=False))) if n > rows else \
            (X.to_memory() if getattr(X, "is_chunked", False) else X)
        if self.basis is not None:
            basis = PiecewiseLinearBasis(self.bins).fit(X)
            bins, frac = basis.encode(sample)

            def gram(v):
                u = basis.forward(bins, frac, v.reshape(-1, basis.n_basis))
                return basis.gradient(bins, frac, u).ravel() / sample.shape[0]

            size = X.shape[1] * basis.n_basis
        else:
            mean, scale = _moments(sample) if self.standardize else \
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

    # ------------------------------------------------------------------ predict
    def _decision_binary(self, X) -> np.ndarray:
        if self.basis is None:
            return super()._decision_binary(X)
        kept = self.kept_
        bins, frac = self.basis_.encode(X, kept)
        return self.basis_.forward(bins, frac, self.beta_groups_) + self.intercept_

    def response(self, feature: int, x: np.ndarray) -> np.ndarray:
        """Learned response curve of an input variable (piecewise-linear basis only)."""
        if self.basis is None:
            return self.coef_[feature] * np.asarray(x, dtype=float)
        pos = np.flatnonzero(self.kept_ == feature)
        if pos.size == 0:
            return np.zeros_like(np.asarray(x, dtype=float))
        return self.basis_.response(feature, self.beta_groups_[pos[0]], np.asarray(x, float))

    def score(self, X, y, sample_weight=None):
        if self._task == "ranking":
            from ..metrics import pairwise_accuracy

            return pairwise_accuracy(y, self.predict(X))
        return super().score(X, y, sample_weight)

    @staticmethod
    def planned_schedule(n_features: int, k: int, n_iter: int, mu: float) -> np.ndarray:
        """M_e for e = 1 … n_iter (eq. 3): how many features each iteration keeps."""
        return fsa_schedule(int(n_features), int(k), int(n_iter), float(mu))


class _Run:
    """One pass of Algorithm 1 over a shrinking working matrix."""

    def __init__(self, est: FSA, X, datafit, eta: float):
        self.est = est
        self.X = X
        self.datafit = datafit
        self.eta = eta
        self.n, self.m = X.shape
        self.pl = est.basis == "piecewise_linear"
        self.schedule = fsa_schedule(self.m, int(est.k), int(est.n_iter), float(est.mu))
        self.alive = np.arange(self.m)  # original indices of the surviving variables
        if self.pl:
            self.basis = PiecewiseLinearBasis(est.bins).fit(X)
            self.bins, self.frac = self.basis.encode(X)
            nb = self.basis.n_basis
            self.beta = np.zeros((self.m, nb))
            D = second_difference(nb)
            self.prior = 2.0 * est.ridge * np.eye(nb) + 2.0 * est.smoothness * (D.T @ D)
            self.prior_prox = np.linalg.inv(np.eye(nb) + eta * self.prior)  # symmetric
            self.mean = self.scale = None
        else:
            self.basis = None
            self.beta = np.zeros(self.m)
            if est.standardize:
                self.mean, self.scale = _moments(X)
            else:
                self.mean, self.scale = np.zeros(self.m), np.ones(self.m)
            self.work = X  # compacted copy of the surviving columns
            self.work_cols = np.arange(self.m)  # work's columns → positions in alive-space
        self.chunked = X if getattr(X, "is_chunked", False) else None  # its pass counters
        self.b = 0.0
        previous = est._warm_for(n_features=self.m, piecewise=self.pl)
        if previous is not None:
            self.beta[previous.support] = previous.coef
            self.b = previous.intercept

    # --------------------------------------------------------------- model pieces
    def _outputs(self):
        if self.pl:
            return self.basis.forward(self.bins, self.frac, self.beta) + self.b
        if not self.beta.any():  # β = 0 (the first step): no pass over X needed
            return np.full(self.n, float(self.b))
        w = np.zeros(self.work_orig.size)
        alive = self.work_pos >= 0
        w[alive] = self.beta[self.work_pos[alive]] / self.scale_work[alive]
        f = np.asarray(self.work @ w.astype(self.work.dtype, copy=False)).ravel()
        return f.astype(np.float64) + (self.b - float(self.mean_work @ w))

    def _gradient(self, r):
        """Gradient of the data term only (the prior is applied by its proximal step)."""
        if self.pl:
            return self.basis.gradient(self.bins, self.frac, r)
        g = xts(self.work, r)
        g = (g - self.mean_work * r.sum()) / self.scale_work
        alive = self.work_pos >= 0
        full = np.zeros(self.alive.size)
        full[self.work_pos[alive]] = g[alive]
        return full

    def _prior_step(self, beta):
        """(I + ηP)⁻¹β: the exact prox of the quadratic prior ρ (first-order equal to the
        paper's gradient step, and stable whatever η·c)."""
        if self.pl:
            return beta @ self.prior_prox
        return beta / (1.0 + 2.0 * self.eta * self.est.ridge)

    def _prior_value(self):
        if self.pl:
            return float(np.einsum("jk,kl,jl->", self.beta, self.prior, self.beta) / 2.0)
        return float(self.est.ridge * self.beta @ self.beta)

    def _compact(self, keep_fraction: float = 0.9):
        """Drop dead columns from the working data once they are more than ``1 −
        keep_fraction`` of it. Dense copies are Fortran-ordered: the compiled steps then skip
        dead columns and can compact less often."""
        if self.pl:
            return
        if self.alive.size > keep_fraction * self.work.shape[1]:
            self._index_work()
            return
        keep_orig = self.alive
        pos_in_work = np.searchsorted(self.work_orig, keep_orig)
        if getattr(self.work, "is_chunked", False):
            self.work = _shrink_chunked(self.work, pos_in_work)
        elif sp.issparse(self.work):
            self.work = self.work[:, pos_in_work]
        else:
            self.work = np.asfortranarray(self.work[:, pos_in_work])
        self.work_orig = keep_orig.copy()
        self._index_work()

    def _index_work(self):
        # which of the work's columns are alive, and where their β lives
        alive_mask = np.isin(self.work_orig, self.alive, assume_unique=True)
        self.work_pos = np.full(self.work_orig.size, -1)
        self.work_pos[alive_mask] = np.searchsorted(self.alive, self.work_orig[alive_mask])
        # dead columns stay in place until compaction but contribute zero
        self.mean_work = np.where(alive_mask, self.mean[self.work_orig], 0.0)
        self.scale_work = np.where(alive_mask, self.scale[self.work_orig], 1.0)

    # --------------------------------------------------------------- the loop
    def run(self, recorder: Recorder) -> str:
        """Algorithm 1, a chunk of iterations at a time (one iteration on the Python path,
        several in the compiled kernel), one record per iteration."""
        est = self.est
        if not self.pl:
            self.work_orig = np.arange(self.m)
            self._index_work()
        self.first = np.nan
        self.stop_flag = recorder.stop_flag()
        e = 1
        while e <= int(est.n_iter):
            steps, status = self._compiled_chunk(e) if self._compiled() else self._step(e)
            self._store()
            for step in steps:
                if not recorder.emit(objective=step["loss"], n_selected=step["alive"].size,
                                     selected=step["alive"], inner_steps=1, info=step["info"]):
                    if step is not steps[-1]:
                        self._restore(*step["state"])  # the model of the last record
                    return "stopped"
            if status != "ok":
                return status
            e += len(steps)
        return "done"

    def _restore(self, alive, beta, b):
        """Go back to an earlier step of a compiled chunk (a stop in its middle)."""
        self.alive, self.beta, self.b = alive.copy(), beta.copy(), b
        self._store()

    def _record(self, loss, e, before, killed, alive, values, weights):
        info = {"M_e": int(self.schedule[e - 1]), "before": before, "killed": killed,
                "weights": weights, "values": values, "eta": self.eta,
                "work_columns": int(self.bins.shape[1] if self.pl else self.work.shape[1])}
        if self.chunked is not None:
            lazy = getattr(self.work, "is_chunked", False)
            info.update({"passes": int(self.chunked.passes),
                         "bytes_read": int(self.chunked.bytes_read),
                         "working_set": ("persisted" if self.work.persisted else "lazy")
                         if lazy else "in memory"})
        return {"loss": loss, "alive": alive, "info": info}

    def _step(self, e):
        """One iteration e (1-based) in numpy: ([its record], status)."""
        f = self._outputs()
        loss = self.datafit.value(f) + self._prior_value()
        if np.isnan(self.first):
            self.first = loss
        if not np.isfinite(loss) or loss > 1e3 * max(self.first, 1e-12):
            return [], "diverged"
        r = self.datafit.gradient(f)
        grad = self._gradient(r)
        self.beta = self._prior_step(self.beta - self.eta * grad)
        if self.est.fit_intercept:
            self.b -= self.eta * float(r.sum())
        before = self.alive.size
        M_e = int(self.schedule[e - 1])
        killed = np.zeros(0, dtype=np.int64)
        if self.alive.size > M_e:
            size = np.linalg.norm(self.beta, axis=1) if self.pl else np.abs(self.beta)
            order = np.argsort(-size, kind="stable")
            keep = np.sort(order[:M_e])
            killed = self.alive[np.sort(order[M_e:])]
            self.alive = self.alive[keep]
            self.beta = self.beta[keep]
            if self.pl:
                self.bins = np.asfortranarray(self.bins[:, keep])
                self.frac = np.asfortranarray(self.frac[:, keep])
            else:
                self._compact()
        if not np.all(np.isfinite(self.beta)) or np.abs(self.beta).max(initial=0) > 1e150:
            return [], "diverged"
        values = np.linalg.norm(self.beta, axis=1) if self.pl else self.beta.copy()
        if self.pl:
            self._store()
        weights = self.est.coef_[self.alive] if self.pl else values / self.scale[self.alive]
        return [self._record(loss, e, before, killed, self.alive.copy(), values, weights)], "ok"

    def _compiled(self) -> bool:
        """The compiled kernel runs the linear model on dense data once the working matrix
        is small enough that BLAS threads and per-call overhead cost more than they give."""
        return (not self.pl and not sp.issparse(self.work)
                and not getattr(self.work, "is_chunked", False)
                and getattr(self.datafit, "loss", None) is not None
                and self.datafit.loss.code >= 0
                and self.n * self.work.shape[1] <= COMPILED_CELLS)

    def _compiled_chunk(self, e):
        """Up to a chunk of iterations from e in :func:`explorer.kernels._numba.fsa_dense_steps`
        (until a tenth of the working columns are dead and it must be compacted)."""
        from ..kernels._numba import fsa_dense_steps

        W = self.work.shape[1]
        budget = int(min(int(self.est.n_iter) - e + 1,
                         max(1, CHUNK_CELLS // max(1, self.n * W)), MAX_CHUNK))
        alive = self.work_pos >= 0
        beta = np.zeros(W)
        beta[alive] = self.beta[self.work_pos[alive]]
        X = self.work
        row_major = bool(X.flags.c_contiguous) and not X.flags.f_contiguous
        keep = 0.9 if row_major else 0.5  # column-major steps skip dead columns
        if not (row_major or X.flags.f_contiguous):
            X = np.asfortranarray(X)
        loss, betas = np.empty(budget), np.empty((budget, W))
        masks = np.empty((budget, W), dtype=np.bool_)
        intercepts = np.empty(budget)
        stop = self.stop_flag if self.stop_flag is not None else np.zeros(1, dtype=np.int8)
        loss_fn = self.datafit.loss
        b, steps, status, self.first = fsa_dense_steps(
            X, row_major, self.datafit.y, loss_fn.code, loss_fn.numba_param,
            self.datafit.weight, self.mean_work, self.scale_work, beta, alive, self.b,
            self.eta, float(self.est.ridge), bool(self.est.fit_intercept), self.schedule,
            e - 1, budget, self.first, W - int(np.ceil(keep * W)) + 1, stop, loss, betas, masks,
            intercepts)
        out = []
        previous = self.work_pos >= 0
        alive_ids = self.work_orig[previous]
        counts = masks[:steps].sum(axis=1)
        scale = self.scale[alive_ids]
        none = np.zeros(0, dtype=np.int64)
        for k in range(steps):
            mask = masks[k]
            before = alive_ids.size
            killed = none
            if counts[k] != before:  # this step killed columns
                killed = self.work_orig[previous & ~mask]
                alive_ids = self.work_orig[mask]
                alive_ids.setflags(write=False)  # the records share it
                scale = self.scale[alive_ids]
                previous = mask
            values = betas[k][previous]
            out.append(self._record(float(loss[k]), e + k, before, killed, alive_ids, values,
                                    values / scale))
            out[-1]["state"] = (alive_ids, values, float(intercepts[k]))
        if steps:
            self.b = float(b)
            self.alive = alive_ids
            self.beta = betas[steps - 1][previous].copy()
            self._compact(0.5 if self.work.flags.f_contiguous else 0.9)
        status = {0: "ok", 1: "diverged", 2: "stopped"}[int(status)]
        return out, status

    def _store(self):
        est = self.est
        m = self.m
        if self.pl:
            est.basis_ = self.basis
            est.kept_ = self.alive.copy()
            est.beta_groups_ = self.beta.copy()
            coef = np.zeros(m)
            coef[self.alive] = np.linalg.norm(self.beta, axis=1)
            est.coef_ = coef
            est.intercept_ = float(self.b)
        else:
            coef = np.zeros(m)
            coef[self.alive] = self.beta / self.scale[self.alive]
            est.coef_ = coef
            est.intercept_ = float(self.b - self.mean[self.alive] @ coef[self.alive])
            est.kept_ = self.alive.copy()
        support = np.zeros(m, dtype=bool)
        support[self.alive] = True
        est.support_ = support

    def finish(self):
        self._store()
        self.est._warm = WarmStart(key=self.est._warm_key(n_features=self.m, piecewise=self.pl),
                                   support=self.alive.copy(), coef=self.beta.copy(),
                                   intercept=self.b)


def _shrink_chunked(work, cols):
    """The surviving columns of a dask working set: kept lazy while large, persisted (on
    the workers, or here without a distributed client) once they fit a share of that memory,
    pulled into this process once small (the rest of the run is then the in-memory one).
    Pass counters carry over."""
    sub = work.subset(cols)
    size = sub.memory_bytes
    if size <= LOCAL_BYTES:
        return sub.to_memory()
    if work.persisted:  # slice the persisted chunks once, not on every pass
        return sub.persist()
    budget = _cluster_memory()
    if budget and size <= PERSIST_SHARE * budget:
        return sub.persist()
    return sub


def _cluster_memory() -> int:
    """Memory the working set may be persisted into: the total memory limit of the active
    dask.distributed client's workers, or this machine's physical memory when dask runs
    here (threaded scheduler)."""
    try:
        from distributed import default_client

        info = default_client().scheduler_info()
    except (ImportError, ValueError):
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    return int(sum(w.get("memory_limit", 0) or 0 for w in info.get("workers", {}).values()))


def _moments(X):
    """Column means and standard deviations (sparse-safe); zero-variance columns get 1."""
    if getattr(X, "is_chunked", False):
        total, sq = X.column_moments()
        mean, sq = total / X.shape[0], sq / X.shape[0]
    elif sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
    else:
        mean = X.mean(axis=0, dtype=np.float64)
        sq = np.einsum("ij,ij->j", X, X, dtype=np.float64) / X.shape[0]
    std = np.sqrt(np.maximum(sq - mean**2, 0.0))
    return mean, np.where(std > 0, std, 1.0)
