"""Best-subset (ℓ0) peers: abess, adaptive best-subset selection by splicing (Zhu, Wen, Zhu,
Zhang & Wang, PNAS 2020; the PyPI package ``abess``), in the explorer's contract.

For "give me exactly k features" best-subset solvers are the strongest public peer of the
embedded methods: abess minimises the loss over supports of size k by swapping features in and
out while the restricted loss improves (splicing). ``k`` set: one abess fit at that support
size (one record). ``k=None``: the path k = 1 … ``k_max``, each size warm-started from the
previous support (abess's own path does the same), one record per size, and the size with the
smallest information criterion ``ic`` is kept.

abess densifies sparse input internally (measured: a 5,000 × 100,000 CSR matrix with 0.1 %
non-zeros took 4.1 GB and 330 s), so sparse input is densified here explicitly when the dense
copy takes at most ``DENSE_LIMIT_BYTES`` and refused with a DataError saying so otherwise.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._params import ParamSpec
from ..data import DataError
from .base import BaseSelector, Recorder, register

DENSE_LIMIT_BYTES = 1 << 30  # the largest dense copy of sparse input made for abess

_SPECS = (
    ParamSpec("k", "support size k", 10, "int", 1, 100000, log=True, nullable=True,
              bound="n_features", auto="chosen on the path",
              help="exactly k features (None: the size on 1…k_max with the best criterion)"),
    ParamSpec("k_max", "path up to", 50, "int", 1, 100000, log=True, live=False,
              bound="n_features", help="largest support size of the path when k is None"),
    ParamSpec("ic", "criterion", "ebic", "choice", choices=("aic", "bic", "gic", "ebic"),
              help="information criterion choosing the size on the path (k = None)"),
    ParamSpec("fit_intercept", "intercept", True, "bool"),
)


class _Abess(BaseSelector):
    """Shared path and records of the two abess peers."""

    sparsity_param = "k"
    param_specs = _SPECS
    knowledge = frozenset({"exclude", "always_include"})  # abess's own always_select
    record_keys = frozenset({"criterion", "support_size"})  # its records' info keys

    def __init__(self, k: int | None = 10, k_max: int = 50, ic: str = "ebic",
                 fit_intercept: bool = True,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.k = k
        self.k_max = k_max
        self.ic = ic
        self.fit_intercept = fit_intercept

    def _model(self, size: int, warm, multi: bool = False):  # pragma: no cover - overridden
        raise TypeError("abstract")

    def _target(self, y):
        return y

    def _fit(self, X, y, recorder: Recorder, **_):
        n, m = X.shape
        if sp.issparse(X):
            X = _densified(X)
        # more than two classes reach here as their labels (the base's native path): abess's
        # multinomial model, its support the features any class uses
        multi = self._task == "classification" and len(getattr(self, "classes_", ())) > 2 \
            and not np.all(np.isin(y, (-1.0, 1.0)))
        target = np.searchsorted(self.classes_, y).astype(np.float64) if multi else \
            np.asarray(self._target(y), dtype=np.float64)
        self._check_rows(n, recorder)
        # abess standardises the columns: a constant one (or one constant up to rounding, as
        # a z-scored column is inside a fold where it takes one value) cannot enter a support
        # usefully (the intercept is the constant) and overflows its standardisation, so it is
        # left out — and, pinned by the user, kept in the model at weight 0
        varying = np.flatnonzero(~_constant(X))
        know = self._known()
        pinned = np.zeros(0, np.int64) if know is None else know.pinned
        constant = np.setdiff1d(pinned, varying)
        always = np.searchsorted(varying, np.intersect1d(pinned, varying))
        Xv = X[:, varying]
        top = max(1, varying.size)
        sizes = [max(1, min(int(self.k) - constant.size, top))] if self.k is not None else \
            list(range(max(1, always.size), min(int(self.k_max), top) + 1))
        best, warm = None, None
        for size in sizes:
            model = self._model(size, warm, multi)
            if always.size:
                model.set_params(always_select=always.tolist())
            model.fit(Xv, target)
            if multi:  # abess's (features, classes) weights as the contract's (classes, features)
                coef = np.zeros((len(self.classes_), m))
                coef[:, varying] = np.asarray(model.coef_, dtype=np.float64).T
                intercept = np.asarray(model.intercept_, dtype=np.float64).ravel()
            else:
                coef = np.zeros(m)
                coef[varying] = np.asarray(model.coef_, dtype=np.float64).ravel()
                intercept = float(np.ravel(model.intercept_)[0])
            used = np.flatnonzero(np.any(np.atleast_2d(coef) != 0, axis=0))
            support = np.union1d(used, pinned)
            criterion = float(model.eval_loss_)
            if best is None or criterion < best[0]:
                best = (criterion, coef, intercept, size + constant.size)
            self._store(*best[1:], pinned=pinned)
            warm = np.searchsorted(varying, used)
            go_on = recorder.emit(objective=float(model.train_loss_), n_selected=support.size,
                                  selected=support,
                                  info={"support_size": size, "criterion": criterion,
                                        "weights": np.abs(np.atleast_2d(coef)).max(
                                            axis=0)[support]})
            if not go_on:
                break

    def _check_rows(self, n: int, recorder: Recorder) -> None:
        """abess fits its model unpenalised: with as many features as rows (the intercept
        counted) it interpolates the training rows and its weights say nothing — refused;
        with more than half as many, warned."""
        if self.k is None:
            return
        room = n - (1 if self.fit_intercept else 0)
        if int(self.k) >= room:
            raise ValueError(
                f"{self._describe()}: k = {int(self.k)} features on {n} training rows: an "
                "unpenalised model with as many features as rows (the intercept counted) fits "
                "the training rows exactly and predicts no better than chance. Ask for "
                f"k < {room}, or use a penalised method (FGM, FSA, the ℓ1 models)")
        if 2 * int(self.k) > n:
            recorder.warn(
                f"{self._describe()}: k = {int(self.k)} features on {n} training rows: an "
                "unpenalised model with more than half as many features as rows tends to "
                "separate the training rows, and its held-out accuracy then falls; a smaller k "
                "or a penalised method (FGM, FSA, the ℓ1 models) is safer here")

    def _store(self, coef, intercept, size, pinned=()):
        self.coef_ = coef
        self.intercept_ = intercept
        self.support_ = np.any(np.atleast_2d(coef) != 0, axis=0)
        self.support_[np.asarray(pinned, dtype=np.int64)] = True  # in the model at any weight
        self.k_ = int(size)


@register("abess")
class Abess(_Abess):
    """abess's logistic model at support size ``k`` (two classes), its multinomial model (more
    than two: ``k`` features shared by every class's weights).

    Parameters
    ----------
    k : int or None
        Support size; None chooses it on the path 1 … ``k_max`` by ``ic``.
    k_max : int
        Largest size of the path when ``k`` is None.
    ic : {"aic", "bic", "gic", "ebic"}
        Information criterion of the path (abess's default: "ebic").
    fit_intercept : bool
        Unpenalised intercept.
    always_include, exclude, penalty_factor, positive
        What the user knows, keyword-only (:mod:`explorer.methods.knowledge`): abess honours
        ``always_include`` (its own ``always_select``) and ``exclude``; it refuses the others
        with a message that names the methods that can.
    """

    display_name = "abess (best subset)"
    multiclass = "native"  # two classes: the logistic model; more: the multinomial one

    def _target(self, y):
        return (np.asarray(y) > 0).astype(np.float64)

    def _model(self, size, warm, multi=False):
        from abess.linear import LogisticRegression, MultinomialRegression

        model = MultinomialRegression if multi else LogisticRegression
        return model(support_size=[size], ic_type=self.ic, A_init=warm,
                     fit_intercept=self.fit_intercept)


@register("abess-reg")
class AbessRegressor(_Abess):
    """abess's least-squares model (regression) at support size ``k``: FSA's and the
    Lasso's best-subset peer. Parameters as :class:`Abess`."""

    display_name = "abess regression (best subset)"

    @property
    def _task(self) -> str:
        return "regression"

    def _model(self, size, warm, multi=False):
        from abess.linear import LinearRegression

        return LinearRegression(support_size=[size], ic_type=self.ic, A_init=warm,
                                fit_intercept=self.fit_intercept)


def _constant(X) -> np.ndarray:
    """Which columns of a dense X take a single value, or are rounding residue
    (:func:`~explorer.features.negligible`). Not a standard deviation against 0: a z-scored
    column that takes one value inside a fold has a computed sd of about 1e-17, and abess's
    own standardisation turns its rounding into a column of noise at unit scale."""
    from ..features import negligible
    from ..kernels import column_moments

    X = np.asarray(X)
    if X.shape[0] == 0:
        return np.ones(X.shape[1], dtype=bool)
    return (X.max(axis=0) == X.min(axis=0)) | negligible(column_moments(X)[1])


def _densified(X) -> np.ndarray:
    """A dense copy of sparse X for abess (which densifies anyway), if it fits the limit."""
    need = X.shape[0] * X.shape[1] * 8
    if need > DENSE_LIMIT_BYTES:
        raise DataError(
            f"abess works on dense matrices: this sparse {X.shape[0]:,} × {X.shape[1]:,} "
            f"input would take {need / 2**30:.1f} GiB dense (limit "
            f"{DENSE_LIMIT_BYTES / 2**30:.1f} GiB). Use FGM or FSA, which keep it sparse, or "
            "select fewer columns first.")
    return X.toarray().astype(np.float64, copy=False)
