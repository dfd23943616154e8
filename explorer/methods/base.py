"""The estimator contract shared by every method and baseline (DESIGN.md, "The estimator
contract").

* :class:`BaseSelector` — scikit-learn compatible base: validation, label encoding, one-vs-rest
  for methods without a multi-class form, ``predict``/``decision_function``/``score`` and the
  selector mask all derived from ``coef_``/``support_``.

The records and the recorder are in :mod:`.records`, the registry in :mod:`.registry`
(both re-exported here).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._params import ParamSpec, specs_by_name  # noqa: F401  (re-exported)
from ..data import (
    DataError,
    as_matrix,
    check_binary,
    check_finite,
    check_labels,
    check_rows,
    load_unlabeled,
)
from ..kernels.chunked import as_chunked, is_dask
from ..optim import WarmStart
from . import knowledge as _knowledge
from .multiclass import fit_one_vs_rest
from .records import Callback, IterationRecord, Recorder, built
from .registry import REGISTRY, get_method, multiclass_methods, register

__all__ = ["REGISTRY", "SWEEP_FEATURES", "BaseSelector", "Callback", "IterationRecord",
           "Recorder", "built", "get_method", "register"]

# a sweep's default grid ends at min(p, 256) features: the range where a selection is read
# (a k of thousands grows thousands of columns into a cutting-plane master)
SWEEP_FEATURES = 256


# ----------------------------------------------------------------------------- base class
def _equal(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        try:
            return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
        except ValueError:  # ragged index lists
            return len(a) == len(b) and all(_equal(x, z) for x, z in zip(a, b))
    return bool(a == b)


class BaseSelector(SelectorMixin, BaseEstimator):
    """Base of every method: fit/predict/transform/score and the selected-feature mask.

    Subclasses implement ``_fit(X, y, recorder, **fit_params)`` which receives validated X
    (float ndarray or CSR/CSC) and, for binary classification, ``y`` in {−1, +1}; it sets
    ``coef_`` (n_features,), ``intercept_`` (float) and ``support_`` (bool mask), calls
    ``recorder.emit`` once per iteration and returns early (with a usable model) when emit
    returns ``False``.

    Class attributes describe the method to the rest of the explorer:

    * ``param_specs`` — the tunable parameters (the app builds widgets from them);
    * ``sparsity_param`` — the knob that sets the number of features (sweeps move it);
    * ``more_features_when`` — ``"larger"`` if a larger knob value selects more features;
    * ``multiclass`` — ``"ovr"`` (one-vs-rest by the base), ``"native"`` or ``"binary"``;
    * ``supports_warm_start`` — a refit after a small change starts from the last solution.
    * ``has_bounds``, ``has_inner_trace``, ``has_schedule`` — what the records carry (lower
      and upper bounds, the inner solver's objective trace, FSA's M_e), so views draw only
      what exists.
    """

    registry_name: ClassVar[str] = ""
    display_name: ClassVar[str] = ""
    param_specs: ClassVar[tuple[ParamSpec, ...]] = ()
    sparsity_param: ClassVar[str] = ""
    more_features_when: ClassVar[str] = "larger"
    multiclass: ClassVar[str] = "ovr"
    supports_warm_start: ClassVar[bool] = False
    has_bounds: ClassVar[bool] = False
    has_inner_trace: ClassVar[bool] = False  # records carry info["inner_objective"]
    has_schedule: ClassVar[bool] = False     # records carry info["M_e"] (FSA)
    # what the user knows that the method honours (:mod:`explorer.methods.knowledge`): every
    # method whose model is read through predict honours ``exclude`` (fitted without them)
    knowledge: ClassVar[frozenset[str]] = frozenset({"exclude"})
    # the info keys of a method's records (the views and lessons read them by name): its own,
    # declared on the class and checked by the contract test, and those the shared machinery
    # adds (one-vs-rest's class and shared cut, warm start, C="cv", the weights shown)
    record_keys: ClassVar[frozenset[str]] = frozenset()
    COMMON_RECORD_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"class", "stage", "kept", "of", "warm_start", "C_cv", "weights", "weights_label"})
    _fit_params: ClassVar[tuple[str, ...]] = ()  # extra keyword arguments fit() accepts
    accepts_chunked: ClassVar[bool] = False  # fit takes a dask X (kernels.chunked)

    _transient: ClassVar[tuple[str, ...]] = ("_master",)  # fit-time solver state

    def _set_knowledge(self, always_include, exclude, penalty_factor, positive) -> None:
        """Store the four options every ``__init__`` takes (see :mod:`.knowledge`)."""
        self.always_include = always_include
        self.exclude = exclude
        self.penalty_factor = penalty_factor
        self.positive = positive

    def _known(self) -> _knowledge.Knowledge | None:
        """The resolved options of the fit in progress (None when the user gave none);
        read by the methods that honour ``always_include``, ``penalty_factor``, ``positive``.
        """
        return self.__dict__.get("_knowledge")

    @property
    def history_(self) -> list[IterationRecord]:
        """The fit's records, one per iteration (:class:`IterationRecord`). A compiled loop
        fitted without a callback builds its records here, on first read."""
        records = self.__dict__.get("_records")
        if records is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute "
                                 "'history_' (not fitted)")
        return built(records)

    @history_.setter
    def history_(self, records) -> None:
        self._records = list(records)

    def __getstate__(self):
        """Pickles hold the model, not the fit's working data (the restricted master's
        columns; feature spaces drop their training matrix themselves), and the records
        built."""
        if "_records" in self.__dict__:
            built(self._records)
        state = dict(super().__getstate__())  # a copy: the live estimator keeps its state
        for name in self._transient + ("_fit_recorder",):  # a copy taken mid-fit: no callback
            state.pop(name, None)
        return state

    # --------------------------------------------------------------- task
    @property
    def _task(self) -> str:
        """``classification``, ``regression`` or ``ranking`` (may depend on parameters)."""
        return "classification"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier" if self._task == "classification" else "regressor"
        tags.input_tags.sparse = True
        if self._task == "classification":
            from sklearn.utils import ClassifierTags

            tags.classifier_tags = ClassifierTags(multi_class=self.multiclass != "binary")
            tags.regressor_tags = None
        else:
            from sklearn.utils import RegressorTags

            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        return tags

    # --------------------------------------------------------------- validation
    def _validate_params_against_specs(self) -> None:
        specs = specs_by_name(self.param_specs)
        owner = type(self).__name__
        for name, spec in specs.items():
            spec.validate(getattr(self, name), owner=owner)
        self._check_params()

    def _check_params(self) -> None:
        """Extra parameter checks that the specs cannot express (override)."""

    # --------------------------------------------------------------- warm start
    def continue_from(self, other: BaseSelector) -> BaseSelector:
        """Let this estimator's next fit start where ``other``'s ended: a fitted estimator of
        the same class, on the same data. The start is used only with ``warm_start=True``
        and where the fits share what the start depends on (else the fit is cold, as
        always); the app hands a model over between two settings this way. Returns self.
        """
        if type(other) is not type(self):
            raise TypeError(f"{type(self).__name__} cannot continue from a "
                            f"{type(other).__name__}")
        if not self.supports_warm_start:
            raise ValueError(f"{type(self).__name__} has no warm start")
        if hasattr(other, "_warm"):
            self._warm = other._warm
        if hasattr(other, "estimators_"):  # one-vs-rest: each member's own start
            self.estimators_ = other.estimators_
        return self

    @staticmethod
    def _warm_key(**shared) -> tuple:
        """What a warm start's next fit must share with the fit that left it."""
        return tuple(sorted(shared.items()))

    def _warm_for(self, **shared) -> WarmStart | None:
        """The previous fit's :class:`~explorer.optim.WarmStart` if ``warm_start`` is on and
        the new fit shares ``shared`` with it (else None: a cold fit)."""
        state = getattr(self, "_warm", None)
        if not getattr(self, "warm_start", False) or not isinstance(state, WarmStart):
            return None
        key = self._warm_key(**shared)
        same = len(key) == len(state.key) and all(
            a[0] == b[0] and _equal(a[1], b[1]) for a, b in zip(key, state.key))
        if not same:
            return None
        recorder = self.__dict__.get("_fit_recorder")
        if recorder is not None:
            recorder.info["warm_start"] = True
        return state

    def _validate_X(self, X, *, reset: bool):
        # a DataFrame's column names: feature_names_in_ on fit, checked on predict (the
        # scikit-learn convention; get_feature_names_out then names the selected columns)
        self._check_names(X, reset=reset)
        if is_dask(X) or getattr(X, "is_chunked", False):
            if reset and not self.accepts_chunked:
                raise DataError(
                    f"{self._describe()} needs X in memory, and this X is a dask array. FGM "
                    "and FSA fit on dask arrays; for a small X call X.compute() first")
            X = as_chunked(X)
        else:
            X = as_matrix(X, finite=False)
            if not (reset and self._fit_checks_finite(X)):
                check_finite(X)
        if X.shape[1] == 0:
            raise DataError(f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                            "required.")
        if reset:
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != self.n_features_in_:
            raise DataError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                            f"expecting {self.n_features_in_} features as input")
        return X

    def _check_names(self, X, *, reset: bool) -> None:
        names = getattr(X, "columns", None)
        if names is not None:
            names = np.asarray(names, dtype=object)
            if not all(isinstance(n, str) for n in names):
                names = None
        if reset:
            if names is None:
                self.__dict__.pop("feature_names_in_", None)
            else:
                self.feature_names_in_ = names
            return
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is not None and names is not None and not np.array_equal(fitted, names):
            differ = [f"{a!r} ≠ {b!r}" for a, b in zip(fitted, names) if a != b][:3]
            raise DataError(f"X's column names are not those {type(self).__name__} was fitted "
                            f"with ({', '.join(differ) or 'a different number of columns'}): "
                            "pass the columns in the fitted order")

    def _fit_checks_finite(self, X) -> bool:
        """Whether this fit's first pass over the in-memory ``X`` reads every entry and raises
        :func:`check_finite`'s located DataError when a sum it takes is not finite (FSA's column
        moments), so that validation need not read X once more; False here."""
        return False

    # --------------------------------------------------------------- fit
    def fit(self, X, y, *, callback: Callback | None = None, **fit_params):
        """Fit on ``X`` (dense or scipy sparse) and ``y``; see the class docstring.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_samples, n_features)
            Methods with ``accepts_chunked`` (FGM, FSA) also take a ``dask.array.Array``,
            computed chunk by chunk on the active ``dask.distributed`` client (or dask's
            threaded scheduler); every method predicts on one.
        y : array-like, shape (n_samples,)
        callback : callable, optional
            Called with each :class:`IterationRecord`; return ``False`` to stop the fit
            cleanly (the model stays usable and ``stopped_early_`` is set).
        """
        unknown = set(fit_params) - set(self._fit_params)
        if unknown:
            raise TypeError(f"fit() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        self._validate_params_against_specs()
        X = self._validate_X(X, reset=True)
        if isinstance(fit_params.get("X_unlabeled"), (str, os.PathLike)):  # a file's rows
            fit_params = {**fit_params, "X_unlabeled": load_unlabeled(
                fit_params["X_unlabeled"], n_features=X.shape[1])}
        if X.shape[0] < 2:
            raise DataError(f"{type(self).__name__} needs at least 2 samples, got "
                            f"{X.shape[0]} sample")
        y = np.asarray(y)
        check_rows(X, y)
        for stale in ("submodel_", "allowed_features_", "_knowledge"):  # an earlier fit's
            self.__dict__.pop(stale, None)
        know = _knowledge.resolve(self, X.shape[1], getattr(self, "feature_names_in_", None))
        if know is not None:
            _knowledge.refuse(self, know)
            if know.banned.size:
                return self._fit_allowed(X, y, know, callback, fit_params)
            self._knowledge = know
        try:
            return self._fit_validated(X, y, callback, fit_params)
        finally:
            self.__dict__.pop("_knowledge", None)

    def _fit_validated(self, X, y, callback, fit_params):
        # a warm fit depends on the fit before it: every record says so (set by _warm_for
        # when the previous fit's state applies, by one-vs-rest when it reuses the members)
        recorder = Recorder(callback)
        self._fit_recorder = recorder
        chosen = self._cross_validated_C(X, y, fit_params, recorder)
        try:
            if chosen is None:
                self._fit_task(X, y, recorder, fit_params)
            else:
                self._fit_at(chosen, X, y, recorder, fit_params)
        finally:
            self.__dict__.pop("_fit_recorder", None)
            self.__dict__.pop("_path_start", None)  # one fit's start, never the next's
        self._records = list(recorder._history)  # deferred batches built on first read
        self.n_iter_ = recorder._count
        self.fit_time_ = recorder.elapsed()
        self.stopped_early_ = recorder.stopped
        self.fit_warnings_ = [message for _, message in recorder.warnings]
        hand_over = getattr(callback, "warning", None)
        for category, message in recorder.warnings:
            if callable(hand_over):
                hand_over(message)
            else:
                warnings.warn(message, category, stacklevel=2)
        return self

    def _fit_at(self, C: float, X, y, recorder: Recorder, fit_params) -> None:
        """``C="cv"``'s fit at the chosen C: a copy of this estimator (its previous fit
        included, for a warm start) with that C is fitted, and its fitted state becomes this
        one's; the parameter ``C`` stays "cv" throughout, whoever reads it during the fit."""
        member = type(self).__new__(type(self))  # not copy.copy: that drops the working state
        member.__dict__.update(self.__dict__)
        member.C = C
        member._fit_task(X, y, recorder, fit_params)
        params = set(self.get_params(deep=False))
        fitted = {name: value for name, value in vars(member).items() if name not in params}
        for name in [n for n in vars(self) if n not in params and n not in fitted]:
            del self.__dict__[name]  # what the fit dropped
        self.__dict__.update(fitted)

    def _describe(self) -> str:
        return self.display_name or type(self).__name__

    def _fit_allowed(self, X, y, know, callback, fit_params):
        """``exclude``: the same method fitted on the allowed columns only (``submodel_``),
        its weights and records spread back over every column (0 on the excluded ones)."""
        keep = know.allowed
        if not (isinstance(X, np.ndarray) or sp.issparse(X)):
            raise DataError(f"{self._describe()}: exclude needs X in memory")
        if getattr(self, "groups", None) is not None or fit_params.get("groups") is not None:
            raise ValueError(f"{self._describe()}: exclude names columns and this fit has "
                             "groups of columns; leave the excluded columns out of X (and "
                             "of groups) instead")
        from ..kernels import take_columns

        if fit_params.get("X_unlabeled") is not None:  # FS-Manifold's unlabelled rows
            fit_params = {**fit_params, "X_unlabeled": take_columns(
                as_matrix(fit_params["X_unlabeled"], finite=False), keep)}
        inner = clone(self).set_params(exclude=None, always_include=None, penalty_factor=None)
        sub = know.on(keep)
        inner.set_params(always_include=sub.pinned if sub.pinned.size else None,
                         penalty_factor=sub.factor if sub.factor is not None else None)
        inner.fit(take_columns(X, keep), y, **fit_params,
                  callback=None if callback is None else _OnColumns(callback, keep))
        for name, value in inner.__dict__.items():
            if name.endswith("_") and not name.startswith("_") and \
                    name not in ("n_features_in_", "feature_names_in_"):
                setattr(self, name, value)
        p = self.n_features_in_
        for name in ("coef_", "support_"):
            value = np.asarray(getattr(inner, name))
            if value.shape[-1] == keep.size:
                full = np.zeros(value.shape[:-1] + (p,), dtype=value.dtype)
                full[..., keep] = value
                setattr(self, name, full)
        self._records = [_knowledge_record(r, keep) for r in inner.history_]
        self.submodel_ = inner
        self.allowed_features_ = keep
        return self

    def _cross_validated_C(self, X, y, fit_params, recorder: Recorder) -> float | None:
        """``C="cv"``: the C of best held-out score over ``Cs`` in ``cv`` folds
        (:mod:`explorer.methods._cv`), with ``C_``, ``Cs_`` and ``cv_scores_`` set; None
        when C is a number (``C_`` is then that number)."""
        if "C" not in specs_by_name(self.param_specs):
            return None
        for stale in ("Cs_", "cv_scores_"):  # from an earlier fit with C="cv"
            self.__dict__.pop(stale, None)
        if getattr(self, "C", None) != "cv":
            if self.C is not None:  # None: the method sets C_ from its own rule
                self.C_ = float(self.C)
            return None
        from ._cv import best_C, cross_validate_C, grid

        spec = specs_by_name(self.param_specs)["C"]
        Cs = grid(getattr(self, "Cs", None), spec.low, spec.high)
        scores = cross_validate_C(self, X, y, Cs, getattr(self, "cv", 3), fit_params,
                                  interrupted=recorder.interrupted)
        self.Cs_, self.cv_scores_ = Cs, scores
        self.C_ = best_C(Cs, scores)
        recorder.info["C_cv"] = self.C_
        return self.C_

    def _path_state(self):
        """What the next fit on the same rows at a larger C may start from without changing
        its model (only its work): None here. ``C="cv"`` hands it on along the grid as
        ``_path_start``, which that one fit consumes."""
        return None

    def _fit_task(self, X, y, recorder: Recorder, fit_params) -> None:
        """Dispatch on the task: binary ±1, one-vs-rest, native multi-class, or real y."""
        task = self._task
        y = check_labels(y, task="multitask" if (y.ndim == 2 and self.multiclass == "native")
                         else ("classification" if task == "classification" else "regression"))
        if task == "classification" and y.ndim == 1:
            self.classes_ = np.unique(y)
            if len(self.classes_) == 2:
                y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
                self._fit(X, y_pm, recorder, **fit_params)
            elif self.multiclass == "binary":
                check_binary(y, method=self._describe(), instead=multiclass_methods())
            elif self.multiclass == "ovr":
                fit_one_vs_rest(self, X, y, recorder, fit_params)
            else:
                self._fit(X, y, recorder, **fit_params)
        else:
            self._fit(X, y.astype(np.float64), recorder, **fit_params)

    def _fit(self, X, y, recorder: Recorder, **fit_params) -> None:  # pragma: no cover
        raise NotImplementedError  # abstract: every registered method overrides it

    # --------------------------------------------------------------- predict
    def _decision_binary(self, X) -> np.ndarray:
        """Decision values of a fitted linear model (override for nonlinear feature maps).

        Shape (n,) for a binary/regression model, (n, n_classes) for a native multi-class one.
        """
        if np.ndim(self.coef_) == 2:
            return np.asarray(X @ self.coef_.T) + self.intercept_
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def _raw_scores(self, X) -> np.ndarray:
        """The model's outputs for any task (classifiers' decision values, regressors' and
        rankers' predictions)."""
        check_is_fitted(self, "coef_")
        X = self._validate_X(X, reset=False)
        inner = self.__dict__.get("submodel_")
        if inner is not None:  # fitted without the excluded columns
            from ..kernels import take_columns

            return inner._raw_scores(take_columns(X, self.allowed_features_))
        members = getattr(self, "estimators_", None)
        if members is not None and self._task == "classification" and len(self.classes_) > 2:
            return np.column_stack([m._decision_binary(X) for m in members])
        return self._decision_binary(X)

    @available_if(lambda self: self._task == "classification")
    def decision_function(self, X) -> np.ndarray:
        """Signed distances (binary: shape (n,); multi-class: (n, n_classes)); classifiers
        only, as in scikit-learn (regressors and rankers give their scores by ``predict``)."""
        return self._raw_scores(X)

    def predict(self, X) -> np.ndarray:
        """Class labels (classification) or values (regression/ranking scores)."""
        scores = self._raw_scores(X)
        if self._task != "classification":
            return scores
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (classification) or R² (regression)."""
        if self._task == "classification":
            from sklearn.metrics import accuracy_score

            return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))
        from sklearn.metrics import r2_score

        return float(r2_score(y, self.predict(X), sample_weight=sample_weight))

    # --------------------------------------------------------------- selection
    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def transform(self, X):
        """The selected columns of ``X`` (dense, sparse — kept sparse — or a DataFrame, whose
        columns are selected by position). With ``set_output(transform="pandas")`` a sparse
        selection comes back as a pandas frame of sparse columns named by
        ``get_feature_names_out()`` (scikit-learn's own wrapper refuses sparse output)."""
        check_is_fitted(self, "support_")
        columns = np.flatnonzero(self._get_support_mask())
        if hasattr(X, "iloc"):  # a DataFrame: its own columns, by position
            self._check_names(X, reset=False)
            if X.shape[1] != self.n_features_in_:
                raise DataError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                                f"expecting {self.n_features_in_} features as input")
            return X.iloc[:, columns]
        selected = self._validate_X(X, reset=False)[:, columns]
        if sp.issparse(selected) and _output_kind(self) == "pandas":
            import pandas as pd

            return pd.DataFrame.sparse.from_spmatrix(selected,
                                                     columns=self.get_feature_names_out())
        return selected

    @property
    def n_selected_(self) -> int:
        """Number of selected input features."""
        return int(np.count_nonzero(self._get_support_mask()))

    @property
    def selected_features_(self) -> np.ndarray:
        """Indices of the selected input features."""
        return np.flatnonzero(self._get_support_mask())

    def feature_weights(self) -> np.ndarray:
        """|weight| per input feature (max over classes) — what sparsity maps draw."""
        check_is_fitted(self, "coef_")
        return np.abs(np.atleast_2d(self.coef_)).max(axis=0)

    # --------------------------------------------------------------- specs
    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        return cls.param_specs

    @classmethod
    def sweep_values(cls, X, y, n_points: int = 10) -> Sequence:
        """A default grid of the sparsity knob for an accuracy-versus-#features sweep."""
        spec = specs_by_name(cls.param_specs)[cls.sparsity_param]
        m = X.shape[1]
        if spec.kind == "int":
            high = min(spec.high or m, max(2, min(m, SWEEP_FEATURES)))
            values = np.unique(np.geomspace(max(1, spec.low or 1), high, n_points).astype(int))
            return [int(v) for v in values]
        low, high = spec.low, spec.high
        return [float(v) for v in np.geomspace(low, high, n_points)]


class _OnColumns:
    """A callback for a fit on ``columns`` of X: hands on each record with its selected
    indices in X's own columns; the rest of the callback (stop flag, cancel, warnings) as is."""

    def __init__(self, callback, columns: np.ndarray):
        self._callback, self._columns = callback, columns

    def __call__(self, record):
        return self._callback(_knowledge_record(record, self._columns))

    def __getattr__(self, name):
        return getattr(self._callback, name)


def _knowledge_record(record: IterationRecord, columns: np.ndarray) -> IterationRecord:
    import dataclasses

    selected = columns[np.asarray(record.selected, dtype=np.int64)]
    selected.setflags(write=False)
    return dataclasses.replace(record, selected=selected)


def _output_kind(estimator) -> str:
    """What ``set_output`` (or ``sklearn.set_config``) asks ``transform`` to return:
    "default", "pandas" or "polars"."""
    try:
        from sklearn.utils._set_output import _get_output_config
    except ImportError:  # pragma: no cover - another scikit-learn: its own wrapper decides
        return "default"
    return str(_get_output_config("transform", estimator)["dense"])


def dense_rows(X, rows) -> np.ndarray:
    """Rows of X as a dense array (small selections only)."""
    sub = X[rows]
    return sub.toarray() if sp.issparse(sub) else np.asarray(sub)
