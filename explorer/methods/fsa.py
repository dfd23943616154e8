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

The loop itself — the shrinking working matrix, the compiled steps, the dask working set,
the divergence guard — is :mod:`explorer.engines.fsa.annealing`; this module declares the
parameters and wires the loss and the fitted attributes.
"""

from __future__ import annotations

import numpy as np

from .._params import ParamSpec
from ..data import DataError, check_finite
from ..engines.fsa import (
    GRAM_PASSES,
    GRAM_ROWS,
    Annealing,
    AnnealingRun,
    RunHooks,
    anneal,
    first_pass,
    fsa_schedule,
    gram_norm,
)
from ..optim import LOSSES, Datafit, PairwiseDatafit, WarmStart, make_loss
from .base import BaseSelector, Recorder, register
from .refit import MODELS, kernel_refit, refit_scores, refit_summary, selected_columns

SETTLED = 1e-4  # relative change of the objective in the last step of a converged run
RANKING = "ranking"  # FSA's pairwise datafit (eq. 9), beside the losses of the table
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
        piecewise-linear basis (unstandardised responses), where it is capped at 1.8/L,
        L = l''·λ_max(DᵀD/N) of the design the gradient sees, estimated by power iteration on
        up to 2,000 rows (η = 20 diverged on hat responses). η is an upper bound: a step
        whose model does not lie under the data term's quadratic majoriser is retried at the
        halving of η its direction's curvature bound allows (so no step diverges or
        oscillates, on any input: the squared loss's η = 1, which diverged on the paper's
        own regression design, is cut at its first step), and η doubles back after steps
        accepted at once; each record's ``info["eta"]`` is its step, ``eta_`` the last.
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
    model : {"own", "rbf_svm"}
        What ``predict`` uses. "own": FSA's model, additive in the kept variables (a weight,
        or with the piecewise-linear basis a response curve, per variable), which cannot
        express an interaction such as a product or an XOR of two variables. "rbf_svm": an
        RBF-kernel SVM refitted on the kept variables (standardised; C and γ by 3-fold CV,
        :func:`~explorer.methods.refit.kernel_refit`), which can. The selection is the same.
    always_include, exclude, penalty_factor, positive
        What the user knows, keyword-only (:mod:`explorer.methods.knowledge`): features
        always in, never in, a factor per feature, non-negative weights. FSA honours
        ``always_include``, ``exclude``, ``penalty_factor``, ``positive``; it refuses the
        others with a message that names the methods that can.

    Attributes
    ----------
    selected_features_ : ndarray of int
        The k kept variables.
    coef_, intercept_ : ndarray, float
        The model in the input's units.
    history_ : list of IterationRecord
        One record per iteration; ``info["M_e"]`` is the schedule, ``info["eta"]`` the step.
    converged_ : bool
        The last step moved the objective by at most 1e-4 (else a ``ConvergenceWarning``).
    n_passes_ : float
        The fit's work in passes over X: the matrix cells its products read (stored values of
        a sparse X) over X's, the pass that took the columns' moments, the power iteration's
        and the shrinking working copies included (a dask X: its own pass counter).
    n_rejected_ : int
        Trial steps the majoriser test rejected (each cost one product over the alive
        columns).
    refit_, refit_params_ : sklearn estimator or None, dict or None
        With ``model="rbf_svm"``: the kernel SVM ``predict`` uses, and its chosen C, γ and
        cross-validated score (None with FSA's own model).

    See Also
    --------
    FGM : convex relaxation with certified bounds.
    explorer.methods.Abess : best-subset selection at the same k.

    References
    ----------
    .. [1] A. Barbu, Y. She, L. Ding and G. Gramajo, "Feature selection with annealing for
       computer vision and big data learning", IEEE TPAMI, 2017.

    Examples
    --------
    >>> from explorer import FSA, load
    >>> data = load("breast-cancer").split(test_size=0.3, seed=0)
    >>> fsa = FSA(k=5).fit(data.X, data.y)
    >>> fsa.selected_features_.tolist()
    [6, 20, 22, 23, 27]
    >>> fsa.transform(data.X_test).shape
    (171, 5)
    >>> [r.info["M_e"] for r in fsa.history_][-1]
    5
    """

    display_name = "FSA"
    record_keys = frozenset({  # its records' info keys
        "M_e", "before", "bytes_read", "eta", "killed", "passes", "values",
        "work_columns", "working_set"
    })
    sparsity_param = "k"
    multiclass = "ovr"  # one binary fit per class, then k shared by them (the base's cut)
    supports_warm_start = True
    accepts_chunked = True
    has_schedule = True
    # the kill ranks |β_j| / penalty factor, never the always-included; positive: projected
    knowledge = frozenset({"exclude", "always_include", "penalty_factor", "positive"})
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
        ParamSpec("warm_start", "warm start", False, "bool", live=False,
                  help="start from the previous β"),
        ParamSpec("model", "model", "own", "choice", choices=MODELS, live=False,
                  help="what predict uses: FSA's own additive model, or an RBF-kernel SVM "
                       "refitted on the kept variables (interactions)"),
    )

    def __init__(self, k: int = 10, loss: str = "logistic", mu: float = 300.0,
                 n_iter: int = 500, eta: float | None = None, ridge: float = 1e-3,
                 huber_h: float = 0.1, basis: str | None = None, bins: int = 10,
                 smoothness: float = 0.1, standardize: bool = True, fit_intercept: bool = True,
                 warm_start: bool = False, model: str = "own",
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
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
        self.model = model

    @property
    def _task(self) -> str:
        if self.loss == RANKING:
            return "ranking"
        return LOSSES[self.loss].task if self.loss in LOSSES else "classification"

    # ------------------------------------------------------------------ fit
    def _datafit(self, y, query):
        if self.loss == RANKING:  # the pairwise datafit, not a loss of the table
            return PairwiseDatafit(y, query)
        loss = make_loss(self.loss, **{p: getattr(self, f"huber_{p}")
                                       for p in LOSSES[self.loss].params})
        # as the paper writes each loss: (1/N) Σ (y − f)² (eq. 4) is twice the table's ½r²
        return Datafit(loss, y, scale=loss.unhalved)

    def _fit_checks_finite(self, X) -> bool:
        """A dense in-memory X with standardised columns is read first by its column moments,
        whose sums are not finite where an entry is not: that pass is the finiteness check."""
        return bool(self.standardize) and self.basis is None and isinstance(X, np.ndarray)

    def _fit(self, X, y, recorder: Recorder, query=None, **_):
        m = X.shape[1]
        if int(self.k) > m:
            raise ValueError(f"k={self.k} is larger than the number of features "
                             f"(n_features={m})")
        if query is not None and self.loss != RANKING:
            raise ValueError("query ids are only used by loss='ranking'")
        piecewise = self.basis is not None
        if getattr(X, "is_chunked", False) and piecewise:
            raise ValueError("basis='piecewise_linear' needs X in memory: a dask X is fitted "
                             "with the linear basis")
        datafit = self._datafit(y, query)
        moments = first = None
        passes = 0.0
        if self._fit_checks_finite(X):
            passes += 1.0  # the moments, the finiteness check and the first Xᵀr
            # one pass: the moments, the finiteness check and the first step's Xᵀr
            with np.errstate(invalid="ignore", over="ignore"):  # a NaN or inf: raised below
                moments, first = first_pass(X, datafit)
            finite = np.isfinite(moments[0]) & np.isfinite(moments[1])
            if not finite.all():
                check_finite(X)  # names the first NaN or inf
                raise DataError(f"X's column {int(np.argmin(finite)) + 1} cannot be "
                                "standardised: its sums overflow float64 (values up to "
                                f"{float(np.abs(X).max()):.3g}); rescale X")
        config = Annealing(k=int(self.k), n_iter=int(self.n_iter), mu=float(self.mu),
                           ridge=float(self.ridge), fit_intercept=bool(self.fit_intercept),
                           standardize=bool(self.standardize),
                           bins=int(self.bins) if piecewise else None,
                           smoothness=float(self.smoothness), **self._knowledge_config())
        eta = float(self.eta) if self.eta is not None else _PAPER_ETA[self.loss]
        if self.eta is None and piecewise:
            eta = min(eta, 1.8 / (datafit.curvature * gram_norm(X, config)))
            passes += GRAM_PASSES * min(X.shape[0], GRAM_ROWS) / X.shape[0]
        hooks = RunHooks(recorder.emit_many, emit_deferred=recorder.emit_deferred,
                         reset=recorder.reset, on_state=self._publish,
                         interrupt=recorder.interrupted, stop_flag=recorder.stop_flag())
        run, self.eta_, outcome = anneal(
            X, datafit, config, eta, hooks,
            warm=self._warm_for(n_features=m, piecewise=piecewise), moments=moments,
            first_product=first)
        if outcome == "stopped":
            recorder.stop()
        chunked = getattr(X, "is_chunked", False)
        if not chunked and moments is None and not piecewise and self.standardize:
            passes += 1.0  # the moments' own pass
        self.n_passes_ = float(X.passes) if chunked else passes + run.passes
        self.n_rejected_ = int(run.rejected)
        self._publish(run)
        self._certify(run, outcome, recorder)
        self._warm = WarmStart(key=self._warm_key(n_features=m, piecewise=piecewise),
                               support=run.alive.copy(), coef=run.beta.copy(),
                               intercept=run.b)

    def _knowledge_config(self) -> dict:
        """The kill ranking's priorities and the sign constraint (``Annealing``'s fields)."""
        know = self._known()
        if know is None:
            return {}
        if know.positive and self.basis is not None:
            raise ValueError("FSA: positive=True constrains the weights of the linear basis; "
                             "a piecewise-linear response has no sign (use basis=None)")
        return {"priority": know.priority if know.used() - {"positive"} else None,
                "positive": know.positive}

    def _certify(self, run: AnnealingRun, outcome: str, recorder: Recorder) -> None:
        """``objective_``: the objective of the returned model (the last iterate: with the
        step rule of :class:`~explorer.engines.fsa.annealing.StepRule` the objective only decreases
        once the schedule stops killing, so it is also the best iterate with k variables);
        ``converged_``: whether the last step changed it by at most ``SETTLED`` relatively.
        A schedule that ends before that warns: more iterations would change the model."""
        self.objective_ = float(run.final_loss)
        # the last record's objective, from the run: reading the records would build the
        # hundreds a fit without a callback defers (2.5 of 10 ms on Table 2's design)
        before = run.last_before
        change = abs(before - self.objective_) / max(abs(self.objective_), 1e-12)
        self.converged_ = bool(outcome == "done" and change <= SETTLED)
        if outcome == "done" and not self.converged_:
            recorder.warn(
                f"FSA's schedule ended before the loss settled: its last step still changed the "
                f"objective by {change:.2g} (relative; settled is {SETTLED:g}). The model is "
                f"the last iterate; raise n_iter (now {int(self.n_iter)}) to let it converge.")

    def _publish(self, run: AnnealingRun) -> None:
        """The run's current model as this estimator's fitted attributes (in original units)."""
        m, design = run.m, run.design
        coef, self.intercept_ = design.model(run.alive, run.beta, run.b)
        if design.grouped:  # the responses: a group of coefficients per variable
            self.basis_ = design.basis
            self.beta_groups_ = run.beta.copy()
        self.coef_ = coef
        self.kept_ = run.alive.copy()
        support = np.zeros(m, dtype=bool)
        support[run.alive] = True
        if self.positive and not design.grouped:  # held at 0 by the sign: not used …
            used = coef != 0
            know = self._known()
            if know is not None:  # … unless the user pinned it: in the model at any weight
                used[know.pinned] = True
            support &= used
        self.support_ = support

    def _fit_task(self, X, y, recorder: Recorder, fit_params) -> None:
        """The selection (one fit, or one per class), then with ``model="rbf_svm"`` the kernel
        SVM on the kept columns (:func:`~explorer.methods.refit.kernel_refit`) that
        ``predict`` uses from then on; ``refit_`` is None with FSA's own model."""
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.model != "own" and self._task == "ranking":
            raise ValueError("model='rbf_svm' refits a classifier or a regressor; a ranking "
                             "(loss='ranking') keeps FSA's own scoring function")
        self.refit_ = self.refit_params_ = None
        super()._fit_task(X, y, recorder, fit_params)
        if self.model == "rbf_svm" and self.support_.any() and not recorder.stopped:
            self.refit_ = kernel_refit(selected_columns(X, self.support_), np.asarray(y),
                                       self._task)
            self.refit_params_ = refit_summary(self.refit_)

    # ------------------------------------------------------------------ predict
    def _raw_scores(self, X) -> np.ndarray:
        refit = self.__dict__.get("refit_")
        if refit is None or "submodel_" in self.__dict__:  # own model, or the submodel's
            return super()._raw_scores(X)
        X = self._validate_X(X, reset=False)
        return refit_scores(refit, selected_columns(X, self.support_), self._task)

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

    def score(self, X, y, sample_weight=None, query=None):
        """Accuracy (classification), R² (regression), or for a ranking the share of pairs
        of different relevance inside each query (``query``: the rows' query ids, as in
        ``fit``; None: all rows are one query) that the scores order right."""
        if self._task == "ranking":
            from ..metrics import pairwise_accuracy

            if sample_weight is not None:
                raise ValueError("FSA's ranking score does not take sample weights")
            return pairwise_accuracy(y, self.predict(X), query)
        if query is not None:
            raise ValueError(f"query applies to a ranking; this FSA's loss is {self.loss!r}")
        return super().score(X, y, sample_weight)

    @staticmethod
    def planned_schedule(n_features: int, k: int, n_iter: int, mu: float) -> np.ndarray:
        """M_e for e = 1 … n_iter (eq. 3): how many features each iteration keeps."""
        return fsa_schedule(int(n_features), int(k), int(n_iter), float(mu))
