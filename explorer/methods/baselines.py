"""Classic baselines in the same contract: ℓ1-SVM, ℓ1-logistic regression, RFE, Fisher filter.

Each declares its sparsity knob and can target a number of features ``k``: the ℓ1 models by
bisection on C (as the FSA paper did for its ℓ1 baseline), RFE and the Fisher filter directly.
The solvers are scikit-learn's (liblinear); convergence warnings are caught and reported as
``converged_`` and in each record's ``info`` instead of being printed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC, l1_min_c

from .._params import ParamSpec, cv_choice
from ..optim import make_loss
from .base import SWEEP_FEATURES, BaseSelector, Recorder, register
from .knowledge import scale_columns, top


def _k_spec(knob: str) -> ParamSpec:
    """The target number of features of an ℓ1 model whose strength is ``knob`` (C or α)."""
    return ParamSpec("k", "target #features", None, "int", 1, 100000, log=True, nullable=True,
                     help=f"bisect {knob} until exactly k features are non-zero "
                          f"(None: use {knob})",
                     bound="n_features", auto=f"use {knob}")


_K_SPEC = _k_spec("C")
_REFIT = ParamSpec("refit", "refit (de-bias)", False, "bool",
                   help="retrain an ℓ2 model of the same loss on the selected features")


def _fit_quietly(model, X, y):
    """Fit a scikit-learn model, returning whether it converged (no warning printed)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y)
    return not any(issubclass(w.category, ConvergenceWarning) for w in caught)


def _weights(coef, columns) -> np.ndarray:
    """Weights of the given columns (the largest |weight| over classes when multi-class)."""
    coef = np.atleast_2d(coef)
    sub = coef[:, columns]
    return sub[0] if coef.shape[0] == 1 else np.abs(sub).max(axis=0)


def _coef(model, multi: bool):
    coef = np.asarray(model.coef_, dtype=np.float64)
    intercept = np.asarray(model.intercept_, dtype=np.float64)
    if not multi:
        return coef.ravel(), float(intercept.ravel()[0])
    return coef, intercept


class _LinearL1(BaseSelector):
    """Shared machinery of the two ℓ1 baselines (C path, bisection to k, optional refit)."""

    sparsity_param = "C"
    multiclass = "native"
    loss_name = ""
    probe_max_iter: int | None = None  # solver iterations of sweep_values' probe fits
    # penalty factors by rescaling the columns; liblinear penalises every weight, so a factor
    # of 0 (always in) has no exact form here
    knowledge = frozenset({"exclude", "penalty_factor"})

    def _make(self, C: float, l1: bool = True):  # pragma: no cover - overridden
        raise NotImplementedError  # abstract

    @staticmethod
    def _intercept_scaling(X) -> float:
        """liblinear penalises the intercept like a weight on a constant column of this
        value (scikit-learn's ``intercept_scaling``). A feature of mean μ_j stands in for the
        intercept at a cost 1/|μ_j| per unit; at 1 (scikit-learn's default) raw breast-cancer
        kept b = 0 at one or two features and predicted the minority class (0.37 accuracy
        where the majority's rate is 0.63). 10·max|μ_j| makes the intercept ten times cheaper
        than any stand-in, as the objective stated (b free) wants; between 1 and 10⁴, where
        liblinear still converges in its usual steps."""
        mean = np.abs(np.asarray(X.mean(axis=0), dtype=np.float64)).ravel()
        biggest = float(mean.max()) if mean.size else 0.0
        return float(np.clip(10.0 * biggest, 1.0, 1e4)) if np.isfinite(biggest) else 1.0

    def _check_params(self) -> None:
        if self.C == "cv" and self.k is not None:
            # with k, C is bisected until k weights are non-zero: every C of a cross-validated
            # grid would give the same k-feature model (13 identical rows at 6-20x the cost)
            raise ValueError(f"{type(self).__name__}: C='cv' and k={self.k} cannot go "
                             "together: with k, C is the one that leaves k features, whatever "
                             "C a grid starts from. Pass k (C follows) or C='cv' with k=None "
                             "(the number of features follows C)")

    def _l1_min_c(self, X, y) -> float:
        return float(l1_min_c(X, y, loss=make_loss(self.loss_name).liblinear,
                              fit_intercept=True, intercept_scaling=self.intercept_scaling_))

    def _objective(self, X, y, coef, intercept, C) -> float:
        margins = X @ np.atleast_2d(coef).T + intercept
        if margins.shape[1] == 1:
            z = np.asarray(y).reshape(-1, 1) * margins
        else:
            classes = self.classes_
            Y = np.where(np.asarray(y)[:, None] == classes[None, :], 1.0, -1.0)
            z = Y * margins
        the_loss = make_loss(self.loss_name)  # liblinear's, without the table's ½
        loss = the_loss.unhalved * float(the_loss.value(z).sum())
        return float(np.abs(coef).sum() + C * loss)

    def _one(self, X, y, C, multi):
        model = self._make(C)
        converged = _fit_quietly(model, X, y)
        coef, intercept = _coef(model, multi)
        return coef, intercept, converged

    def _fit(self, X, y, recorder: Recorder, **_):
        multi = np.ndim(y) == 1 and len(getattr(self, "classes_", [])) > 2
        original = X
        X, factor = scale_columns(X, self._known())
        self.intercept_scaling_ = self._intercept_scaling(X)
        if self.k is None:
            coef, intercept, converged = self._one(X, y, self.C, multi)
            self._set(coef, intercept, multi, C=self.C, converged=converged)
            recorder.emit(objective=self._objective(X, y, coef, intercept, self.C),
                          n_selected=int(self.support_.sum()),
                          selected=np.flatnonzero(self.support_),
                          info={"C": self.C, "converged": converged,
                                "weights": _weights(coef, self.support_)})
        else:
            self._bisect(X, y, recorder, multi)
        if factor is not None:  # the weights of the original columns
            self.coef_ = self.coef_ / factor
        if self.refit and self.support_.any():
            self._refit(original, y, multi)

    def _set(self, coef, intercept, multi, *, C, converged):
        self.coef_ = coef
        self.intercept_ = intercept
        self.support_ = np.any(np.atleast_2d(coef) != 0, axis=0)
        self.C_ = float(C)
        self.converged_ = bool(converged)

    def _bisect(self, X, y, recorder, multi, max_steps: int = 40):
        """Find C with exactly k non-zero features by bisection on log C (keeps the best)."""
        k = int(self.k)
        lo = self._l1_min_c(X, y)  # below it every weight is zero
        hi = lo * 4.0
        best = None  # (|nnz - k|, prefer >= k, C, coef, intercept, converged)

        def attempt(C):
            nonlocal best
            coef, intercept, converged = self._one(X, y, C, multi)
            nnz = int(np.any(np.atleast_2d(coef) != 0, axis=0).sum())
            key = (abs(nnz - k), nnz < k)
            if best is None or key < best[0]:
                best = (key, C, coef, intercept, converged)
            self._set(*best[2:4], multi, C=best[1], converged=best[4])
            support = np.any(np.atleast_2d(coef) != 0, axis=0)
            go_on = recorder.emit(objective=self._objective(X, y, coef, intercept, C),
                                  n_selected=nnz, selected=np.flatnonzero(support),
                                  info={"C": C, "target_k": k, "converged": converged,
                                        "weights": _weights(coef, support)})
            return nnz, go_on

        # grow the upper end until it selects at least k features
        for _ in range(30):
            nnz, go_on = attempt(hi)
            if not go_on or nnz >= k:
                break
            lo, hi = hi, hi * 4.0
        else:
            return
        if not go_on or nnz == k:
            return
        for _ in range(max_steps):
            mid = math.sqrt(lo * hi)
            nnz, go_on = attempt(mid)
            if not go_on or nnz == k:
                return
            if nnz < k:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1 + 1e-6:
                return

    def _refit(self, X, y, multi):
        cols = np.flatnonzero(self.support_)
        model = self._make(self.refit_C, l1=False)
        _fit_quietly(model, X[:, cols], y)
        coef, intercept = _coef(model, multi)
        full = np.zeros(np.atleast_2d(self.coef_).shape)
        full[:, cols] = np.atleast_2d(coef)
        self.coef_ = full if multi else full.ravel()
        self.intercept_ = intercept

    @classmethod
    def sweep_values(cls, X, y, n_points: int = 10):
        """C from where the first feature enters to where min(p, n, ``SWEEP_FEATURES``) have
        (or where the count stops growing, or C's upper limit), geometric, found by probe fits
        on this data: a fixed multiple of
        ``l1_min_c`` fits no data (on breast cancer's raw units that is 8e-6; on tf-idf text
        300·l1_min_c keeps one word), and a point without a feature says nothing. The probes
        only count features, in at most ``probe_max_iter`` of the solver's iterations when
        the class sets it (see :class:`L1LogReg`)."""
        spec = next(s for s in cls.param_specs if s.name == "C")
        probe = cls() if cls.probe_max_iter is None else cls(max_iter=cls.probe_max_iter)
        probe.intercept_scaling_ = probe._intercept_scaling(X)
        y = np.asarray(y)
        labels, counts = np.unique(y, return_counts=True)
        multi = labels.size > 2
        if multi and cls.multiclass == "ovr":  # probed on its largest class against the rest
            y, multi = np.where(y == labels[np.argmax(counts)], 1, -1), False
        try:
            low = max(probe._l1_min_c(X, y), spec.low)
        except ValueError:  # one class: the sweep's fit says so
            return [float(c) for c in np.geomspace(spec.low, spec.high, n_points)]

        def count(C):
            coef = probe._one(X, y, C, multi)[0]
            return int(np.any(np.atleast_2d(coef) != 0, axis=0).sum())

        for _ in range(40):  # the first C with a feature, in steps of 1.25
            if low >= spec.high or count(low) >= 1:
                break
            low = min(low * 1.25, spec.high)
        # then by half decades until the target count (an ℓ1 model keeps at most about n
        # features) or until the count has not grown over two decades (on breast cancer's raw
        # units liblinear holds 3 features from C = 2e-4 to 1e-3 and 27 at C = 100: a stop
        # after one flat decade left the sweep at 1–3 features)
        high, target = low, min(X.shape[1], X.shape[0], SWEEP_FEATURES)
        counts = []
        for _ in range(24):
            if high >= spec.high:
                break
            high = min(high * np.sqrt(10.0), spec.high)
            counts.append(count(high))
            if counts[-1] >= target or len(counts) >= 5 and counts[-1] <= counts[-5]:
                break
        return [float(c) for c in np.geomspace(low, high, n_points)]


@register("l1-svm")
class L1SVM(_LinearL1):
    """ℓ1-regularised squared-hinge linear SVM (scikit-learn's LinearSVC, liblinear).

    Objective ``‖w‖₁ + C Σ max(0, 1 − y_i(wᵀx_i + b))²``. With ``k`` set, C is bisected until
    exactly k weights are non-zero (or the closest count, preferring at least k). ``refit``
    retrains an ℓ2 squared-hinge SVM (C = ``refit_C``) on the selected features — the
    "ℓ1-SVM-retrained" de-bias control of FGM's Fig. 4. The intercept is nearly free
    (``intercept_scaling_``, see :meth:`_LinearL1._intercept_scaling`).
    """

    display_name = "ℓ1-SVM"
    record_keys = frozenset({"C", "converged", "target_k"})  # its records' info keys
    loss_name = "squared_hinge"
    param_specs = (
        ParamSpec("C", "C", 0.05, "float", 1e-8, 1e3, log=True,
                  help="inverse ℓ1 strength: larger C keeps more features; 'cv': "
                       "cross-validated", extra=cv_choice()),
        _K_SPEC, _REFIT,
        ParamSpec("refit_C", "refit C", 1.0, "float", 1e-4, 1e4, log=True, live=False,
                  when={"refit": (True,)}),
        ParamSpec("max_iter", "max iterations", 2000, "int", 10, 100000, live=False),
    )

    def __init__(self, C: float = 0.05, k: int | None = None, refit: bool = False,
                 refit_C: float = 1.0, max_iter: int = 2000, tol: float = 1e-4, Cs=None,
                 cv: int = 3,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.C = C
        self.Cs = Cs
        self.cv = cv
        self.k = k
        self.refit = refit
        self.refit_C = refit_C
        self.max_iter = max_iter
        self.tol = tol

    def _make(self, C, l1=True):
        return LinearSVC(penalty="l1" if l1 else "l2", loss="squared_hinge", dual=False, C=C,
                         intercept_scaling=self.intercept_scaling_, max_iter=self.max_iter,
                         tol=self.tol, random_state=0)


@register("l1-logreg")
class L1LogReg(_LinearL1):
    """ℓ1-regularised logistic regression (scikit-learn's LogisticRegression, liblinear).

    Objective ``‖w‖₁ + C Σ log(1 + exp(−y_i(wᵀx_i + b)))``; ``k`` bisects C as for
    :class:`L1SVM`; ``refit`` retrains ℓ2 logistic regression on the selected features.
    """

    display_name = "ℓ1-LogReg"
    record_keys = frozenset({"C", "converged", "target_k"})  # its records' info keys
    loss_name = "logistic"
    multiclass = "ovr"  # liblinear is binary-only; k: the classes' shared cut (base)
    # a probe of sweep_values counts features in 100 iterations: on pd-speech's raw columns
    # (1e-20 to 4e10) a converged fit at C = 3e-5 … 3e-4 took 6–25 s, one stopped at 100
    # counts within a few features of it (38 against 35) and the grid is the same (50 → 9 s)
    probe_max_iter = 100
    param_specs = (
        ParamSpec("C", "C", 0.1, "float", 1e-8, 1e3, log=True,
                  help="inverse ℓ1 strength: larger C keeps more features; 'cv': "
                       "cross-validated", extra=cv_choice()),
        _K_SPEC, _REFIT,
        ParamSpec("refit_C", "refit C", 1.0, "float", 1e-4, 1e4, log=True, live=False,
                  when={"refit": (True,)}),
        ParamSpec("max_iter", "max iterations", 1000, "int", 10, 100000, live=False),
    )

    def __init__(self, C: float = 0.1, k: int | None = None, refit: bool = False,
                 refit_C: float = 1.0, max_iter: int = 1000, tol: float = 1e-4, Cs=None,
                 cv: int = 3,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.C = C
        self.Cs = Cs
        self.cv = cv
        self.k = k
        self.refit = refit
        self.refit_C = refit_C
        self.max_iter = max_iter
        self.tol = tol

    def _make(self, C, l1=True):
        return _logistic(C, l1, max_iter=self.max_iter, tol=self.tol,
                         intercept_scaling=self.intercept_scaling_)


def _logistic(C, l1: bool, **kwargs) -> LogisticRegression:
    """liblinear's logistic regression with the ℓ1 (or ℓ2) penalty on every scikit-learn the
    package accepts: up to 1.7 ``penalty`` chooses and ``l1_ratio`` is ignored (so passing only
    ``l1_ratio=1`` silently fitted an ℓ2 model); from 1.8 ``penalty`` is deprecated and
    ``l1_ratio`` chooses."""
    if LogisticRegression().get_params().get("penalty") == "deprecated":
        return LogisticRegression(l1_ratio=1.0 if l1 else 0.0, C=C, solver="liblinear",
                                  random_state=0, **kwargs)
    return LogisticRegression(penalty="l1" if l1 else "l2", C=C, solver="liblinear",
                              random_state=0, **kwargs)


_SVM_C = ParamSpec("C", "C", 1.0, "float", 1e-4, 1e4, log=True,
                   help="SVM trade-off; 'cv': cross-validated", extra=cv_choice())


def _linear_svc(C, max_iter=2000):
    return LinearSVC(C=C, loss="squared_hinge", dual="auto", max_iter=max_iter, random_state=0)


@register("rfe")
class RFESelector(BaseSelector):
    """Recursive feature elimination with a linear SVM (Guyon et al., as scikit-learn's RFE).

    Repeatedly fits an ℓ2 squared-hinge LinearSVC on the surviving features and drops the
    ``step`` share (a fraction) or count with the smallest squared weights, until ``k`` remain;
    one record per elimination round (the RFE habit of keeping a score per step).
    """

    display_name = "RFE (linear SVM)"
    record_keys = frozenset({"converged", "removed"})  # its records' info keys
    sparsity_param = "k"
    multiclass = "native"
    knowledge = frozenset({"exclude", "always_include", "penalty_factor"})
    param_specs = (
        ParamSpec("k", "#features", 10, "int", 1, 100000, log=True,
                  help="number of features to keep", bound="n_features"),
        ParamSpec("step", "step", 0.2, "float", 1e-3, 1e5, log=True,
                  help="fraction (<1) or number (>=1) of features removed per round"),
        _SVM_C,
    )

    def __init__(self, k: int = 10, step: float = 0.2, C: float = 1.0, Cs=None, cv: int = 3,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.k = k
        self.step = step
        self.C = C
        self.Cs = Cs
        self.cv = cv

    def _fit(self, X, y, recorder: Recorder, **_):
        m = X.shape[1]
        k = min(int(self.k), m)
        alive = np.arange(m)
        multi = np.ndim(y) == 1 and len(getattr(self, "classes_", [])) > 2
        while True:
            model = _linear_svc(self.C)
            converged = _fit_quietly(model, X[:, alive], y)
            coef, intercept = _coef(model, multi)
            self._store(alive, coef, intercept, m, multi)
            if alive.size <= k:
                recorder.emit(objective=float(np.square(coef).sum()), n_selected=alive.size,
                              selected=alive, info={"converged": converged,
                                                    "weights": _weights(self.coef_, alive)})
                return
            step = int(max(1, self.step * alive.size)) if self.step < 1 else int(self.step)
            drop = min(step, alive.size - k)
            ranking = np.square(np.atleast_2d(coef)).sum(0)
            know = self._known()
            if know is not None:  # the pinned last to go, the others by weight² / factor
                ranking = ranking * know.priority[alive]
            order = np.argsort(ranking, kind="stable")
            removed = alive[order[:drop]]
            alive = np.sort(alive[order[drop:]])
            if not recorder.emit(objective=float(ranking.sum()), n_selected=alive.size,
                                 selected=alive,
                                 info={"removed": removed, "converged": converged,
                                       "weights": _weights(self.coef_, alive)}):
                model = _linear_svc(self.C)
                _fit_quietly(model, X[:, alive], y)
                self._store(alive, *_coef(model, multi), m, multi)
                return

    def _store(self, alive, coef, intercept, m, multi):
        full = np.zeros((np.atleast_2d(coef).shape[0], m))
        full[:, alive] = np.atleast_2d(coef)
        self.coef_ = full if multi else full.ravel()
        self.intercept_ = intercept
        self.support_ = np.zeros(m, dtype=bool)
        self.support_[alive] = True


def fisher_scores(X, y) -> np.ndarray:
    """Fisher score per feature: Σ_c n_c (μ_cj − μ_j)² / Σ_c n_c σ²_cj (sparse-friendly)."""
    classes = np.unique(y)
    m = X.shape[1]
    mean = np.asarray(X.mean(axis=0)).ravel()
    between = np.zeros(m)
    within = np.zeros(m)
    for c in classes:
        rows = np.flatnonzero(y == c)
        Xc = X[rows]
        mu = np.asarray(Xc.mean(axis=0)).ravel()
        sq = Xc.multiply(Xc) if sp.issparse(Xc) else Xc * Xc
        var = np.asarray(sq.mean(axis=0)).ravel() - mu**2
        between += rows.size * (mu - mean) ** 2
        within += rows.size * np.maximum(var, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(within > 0, between / within, np.where(between > 0, np.inf, 0.0))
    return score


@register("fisher")
class FisherSVM(BaseSelector):
    """Fisher-score filter followed by a linear SVM on the ``k`` best-scored features."""

    display_name = "Fisher + SVM"
    record_keys = frozenset({"converged"})  # its records' info keys
    sparsity_param = "k"
    multiclass = "native"
    knowledge = frozenset({"exclude", "always_include", "penalty_factor"})
    param_specs = (
        ParamSpec("k", "#features", 10, "int", 1, 100000, log=True,
                  help="number of features with the largest Fisher score", bound="n_features"),
        _SVM_C,
    )

    def __init__(self, k: int = 10, C: float = 1.0, Cs=None, cv: int = 3,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.k = k
        self.C = C
        self.Cs = Cs
        self.cv = cv

    def _columns(self, X, y, k: int) -> tuple[np.ndarray, float]:
        """The ``k`` columns the SVM is fitted on, and the objective recorded for them."""
        self.scores_ = fisher_scores(X, y)
        keep = top(self.scores_, k, self._known())  # the pinned, then score / factor
        return keep, float(self.scores_[keep].sum())

    def _fit(self, X, y, recorder: Recorder, **_):
        m = X.shape[1]
        keep, objective = self._columns(X, y, min(int(self.k), m))
        multi = np.ndim(y) == 1 and len(getattr(self, "classes_", [])) > 2
        model = _linear_svc(self.C)
        converged = _fit_quietly(model, X[:, keep], y)
        coef, intercept = _coef(model, multi)
        full = np.zeros((np.atleast_2d(coef).shape[0], m))
        full[:, keep] = np.atleast_2d(coef)
        self.coef_ = full if multi else full.ravel()
        self.intercept_ = intercept
        self.support_ = np.zeros(m, dtype=bool)
        self.support_[keep] = True
        recorder.emit(objective=objective, n_selected=keep.size, selected=keep,
                      info={"converged": converged, "weights": _weights(self.coef_, keep)})


@register("lasso")
class LassoSelector(BaseSelector):
    """ℓ1-regularised least squares (scikit-learn's Lasso) for regression targets.

    Objective ``(1/2N)‖y − Xw − b‖² + α‖w‖₁``; with ``k`` set, α is bisected (on a log scale)
    until exactly k weights are non-zero; ``refit`` re-estimates the selected weights by
    ridge-stabilised least squares (``refit_alpha``), the refit the FSA paper used for its
    ℓ1 baselines.
    """

    display_name = "Lasso"
    record_keys = frozenset({"alpha", "converged", "target_k"})  # its records' info keys
    sparsity_param = "alpha"
    more_features_when = "smaller"
    multiclass = "native"
    knowledge = frozenset({"exclude", "penalty_factor", "positive"})
    param_specs = (
        ParamSpec("alpha", "α", 0.1, "float", 1e-6, 1e3, log=True,
                  help="ℓ1 strength: larger α keeps fewer features"),
        _k_spec("α"), _REFIT,
        ParamSpec("refit_alpha", "refit ridge", 1e-2, "float", 0.0, 1e3, live=False,
                  when={"refit": (True,)}),
    )

    def __init__(self, alpha: float = 0.1, k: int | None = None, refit: bool = False,
                 refit_alpha: float = 1e-2,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.alpha = alpha
        self.k = k
        self.refit = refit
        self.refit_alpha = refit_alpha

    @property
    def _task(self) -> str:
        return "regression"

    def _one(self, X, y, alpha):
        from sklearn.linear_model import Lasso

        know = self._known()
        model = Lasso(alpha=alpha, max_iter=5000, tol=1e-4,
                      positive=bool(know is not None and know.positive))
        converged = _fit_quietly(model, X, y)
        return np.asarray(model.coef_, dtype=float), float(model.intercept_), converged

    def _fit(self, X, y, recorder: Recorder, **_):
        original = X
        X, factor = scale_columns(X, self._known())

        def record(alpha, coef, intercept, converged):
            self.coef_, self.intercept_ = coef, intercept
            self.support_ = coef != 0
            self.alpha_ = float(alpha)
            resid = y - (np.asarray(X @ coef).ravel() + intercept)
            objective = float(resid @ resid / (2 * len(y)) + alpha * np.abs(coef).sum())
            return recorder.emit(objective=objective, n_selected=int(self.support_.sum()),
                                 selected=np.flatnonzero(self.support_),
                                 info={"alpha": float(alpha), "converged": converged,
                                       "weights": coef[self.support_]})

        if self.k is None:
            record(self.alpha, *self._one(X, y, self.alpha))
        else:
            k = int(self.k)
            yc = y - y.mean()
            xty = np.abs(np.asarray(X.T @ yc).ravel()) / len(y)
            hi = float(xty.max())  # at α_max every weight is zero
            lo = hi / 1e4
            best = None
            for _ in range(40):
                mid = np.sqrt(lo * hi)
                coef, intercept, converged = self._one(X, y, mid)
                nnz = int(np.count_nonzero(coef))
                key = (abs(nnz - k), nnz < k)
                if best is None or key < best[0]:
                    best = (key, mid, coef, intercept, converged)
                if not record(*best[1:]) or nnz == k:
                    break
                if nnz > k:
                    lo = mid
                else:
                    hi = mid
            record(*best[1:])
        X = original
        if factor is not None:  # the weights of the original columns
            self.coef_ = self.coef_ / factor
        if self.refit and self.support_.any():
            cols = np.flatnonzero(self.support_)
            from sklearn.linear_model import Ridge

            ridge = Ridge(alpha=self.refit_alpha, positive=bool(self._known() is not None
                                                               and self._known().positive))
            ridge.fit(X[:, cols], y)
            coef = np.zeros(X.shape[1])
            coef[cols] = ridge.coef_
            self.coef_, self.intercept_ = coef, float(ridge.intercept_)

    @classmethod
    def sweep_values(cls, X, y, n_points: int = 10):
        yc = np.asarray(y, float) - np.mean(y)
        hi = float(np.abs(np.asarray(X.T @ yc).ravel()).max()) / len(yc)
        return [float(a) for a in hi * np.geomspace(0.9, 1e-3, n_points)]


@register("random")
class RandomSubset(FisherSVM):
    """The chance baseline: the linear SVM of :class:`FisherSVM` on ``k`` columns drawn at
    random — is a method's choice better than choosing blindly? The draw is seeded by
    ``seed`` and the training rows themselves, so that each fold of a cross-validation draws
    its own columns (the band of a sweep covers the draws) while one setting on one dataset
    gives one model. The objective recorded is the drawn columns' total Fisher score, beside
    the largest one Fisher + SVM records."""

    display_name = "random columns + SVM"
    knowledge = frozenset({"exclude", "always_include"})  # the others drawn at random
    param_specs = (
        ParamSpec("k", "#features", 10, "int", 1, 100000, log=True,
                  help="number of columns drawn at random", bound="n_features"),
        _SVM_C,
        ParamSpec("seed", "seed", 0, "int", 0, 2**31 - 1, help="random draw", live=False),
    )

    def __init__(self, k: int = 10, C: float = 1.0, Cs=None, cv: int = 3, seed: int = 0,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        super().__init__(k=k, C=C, Cs=Cs, cv=cv, always_include=always_include,
                         exclude=exclude, penalty_factor=penalty_factor, positive=positive)
        self.seed = seed

    def _columns(self, X, y, k: int) -> tuple[np.ndarray, float]:
        import zlib

        _, codes = np.unique(np.asarray(y), return_inverse=True)
        rows = zlib.crc32(np.ascontiguousarray(codes, dtype=np.int64).tobytes())
        rng = np.random.default_rng([int(self.seed), int(X.shape[0]), rows])
        know = self._known()
        pinned = know.pinned if know is not None else np.zeros(0, np.int64)
        rest = np.setdiff1d(np.arange(X.shape[1]), pinned)
        keep = np.union1d(pinned, rng.choice(rest, size=k - pinned.size, replace=False))
        # recorded as Fisher + SVM records its choice: the drawn columns' total Fisher score
        self.scores_ = fisher_scores(X, y)
        return keep, float(self.scores_[keep].sum())
