"""Model-X knockoffs (Candès, Fan, Janson & Lv, JRSS-B 2018) around any method of the
explorer: the Gaussian knockoff copies and each draw's statistics from hidimstat's
``ModelXKnockoff``; the selection as defined (:mod:`.fdr`): knockoff+ for one draw, several
draws aggregated by e-values and e-BH (derandomised knockoffs, Ren & Barber 2023).

The statistic is the k at which a feature enters the method's path (Z_j = the number of grid
points at which it is selected, W_j = Z_j − Z̃_j): a fit at one k would cap the power at k.
The false discovery rate is controlled when X's rows are Gaussian with the estimated
covariance; with p ≥ n the covariance cannot be estimated and the function says so instead of
returning a set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Dataset, load
from ..methods import k_grid
from ..methods.knowledge import resolve_params
from .fdr import ebh, knockoff_evalues, knockoff_plus_threshold
from .sweeps import _resolve, check_compatible, fit_at_k, known

KNOCKOFF_REPEATS = 1  # one draw, knockoff+: several (e-BH) are steadier and need more signal
KNOCKOFF_POINTS = 12  # the path's grid of k: the statistic's resolution
MAX_KNOCKOFF_FEATURES = 2000  # p up to which the p × p covariance of the sampler is taken


class PathStatistic:
    """A method as hidimstat's knockoff estimator: fitted on [X, X̃] at every k of a grid,
    its ``coef_`` is each column's number of grid points at which it is selected (the earlier
    a column enters the path, the larger) plus, below one, its weight per standard deviation
    at the largest k relative to the largest, so that hidimstat's |β_j| − |β̃_j| is the entry
    statistic W_j = Z_j − Z̃_j with its ties broken."""

    def __init__(self, method=None, ks=(), params=None):
        self.method, self.ks, self.params = method, ks, params

    def get_params(self, deep=True):
        return {"method": self.method, "ks": self.ks, "params": self.params}

    def set_params(self, **params):
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def fit(self, X, y):
        cls = _resolve(self.method)
        part = Dataset(X=np.asarray(X), y=np.asarray(y),
                       task="classification" if cls()._task == "classification"
                       else "regression")
        z = np.zeros(X.shape[1])
        est = None
        for k in self.ks:
            est, _ = fit_at_k(cls, part, int(k), dict(self.params or {}))
            z[est.selected_features_] += 1.0
        # ties broken by the weight at the largest k (per standard deviation, below 1): the
        # knockoff+ threshold and the p-values of few repeats need distinct statistics
        if est is not None:
            w = est.feature_weights() * np.asarray(X).std(axis=0)
            z += 0.999 * w / max(float(w.max()), 1e-300)
        self.coef_ = z
        return self


@dataclass
class KnockoffSelection:
    """What :func:`knockoff_selection` found: the ``selected`` features (indices) at the
    false discovery rate ``fdr``, each feature's aggregated statistic ``statistic`` (W_j,
    averaged over the repeats), what was controlled (``controlled``), and — when the design
    made knockoffs unusable — ``refused``, the reason, with nothing selected. Each draw's
    statistics are in ``draw_statistics`` (draws × p) and, with several draws, the aggregated
    e-values in ``evalues``: :func:`select_knockoffs` of them at another level is the
    selection at that level."""

    method: str
    fdr: float
    selected: np.ndarray
    statistic: np.ndarray
    feature_names: list[str]
    ks: list
    n_repeats: int
    controlled: str
    refused: str | None = None
    evalues: np.ndarray | None = None
    draw_statistics: np.ndarray | None = None

    def verdict(self) -> str:
        if self.refused:
            return f"knockoffs not used: {self.refused}"
        n = self.selected.size
        return (f"{n} feature{'s' if n != 1 else ''} selected at a false discovery rate of "
                f"{self.fdr:g}: {self.controlled}")


def knockoff_selection(method, dataset, *, fdr: float = 0.1, ks: Sequence[int] | None = None,
                       n_repeats: int = KNOCKOFF_REPEATS, seed: int = 0,
                       test_size: float = 0.3, n_points: int = KNOCKOFF_POINTS,
                       **params) -> KnockoffSelection:
    """Model-X knockoff selection of ``method``'s features at false discovery rate ``fdr``
    on the dataset's training part: the knockoff copies and each draw's statistics from
    ``hidimstat.ModelXKnockoff`` (the statistic: the k at which a feature enters the
    method's path over ``ks``), the selection by :func:`select_knockoffs` (knockoff+ for one
    draw; ``n_repeats`` draws aggregated by e-values and e-BH, Ren & Barber 2023).

    Returns a :class:`KnockoffSelection`; where the design makes knockoffs unusable — a
    sparse or lazy X, p ≥ n (the Gaussian sampler's covariance cannot be estimated), p above
    2,000 (its p × p covariance) — ``refused`` says why and nothing is selected. A selection
    at level ``fdr`` holds either no feature or at least ⌈1/fdr⌉ (5 at 0.2, 10 at 0.1): with
    fewer true signals than that the answer is the empty set, and the verdict says so."""
    import scipy.sparse as sp

    cls = _resolve(method)
    if not 0.0 < float(fdr) < 1.0:
        raise ValueError(f"fdr must be in (0, 1), got {fdr}")
    if int(n_repeats) < 1:
        raise ValueError(f"n_repeats must be at least 1, got {n_repeats}")
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    params = known(params, dataset)
    check_compatible(cls, dataset, params)
    n, p = dataset.n_samples, dataset.n_features
    names = dataset.names()
    ks = sorted({int(k) for k in (ks if ks is not None else
                                  k_grid(min(p, 64), n_points))})
    refusal = None
    if dataset.is_lazy or sp.issparse(dataset.X):
        refusal = ("X is sparse: the Gaussian knockoff sampler needs X dense and roughly "
                   "Gaussian; stability selection applies instead")
    elif p >= n:
        refusal = (f"p = {p} features ≥ n = {n} rows: the sampler's covariance cannot be "
                   "estimated (knockoffs need more rows than features); stability selection "
                   "applies instead")
    elif p > MAX_KNOCKOFF_FEATURES:
        refusal = (f"p = {p} features: the sampler's {p} × {p} covariance is beyond "
                   f"{MAX_KNOCKOFF_FEATURES:,}; stability selection applies instead")
    if refusal is not None:
        return KnockoffSelection(method=cls.registry_name or cls.__name__, fdr=float(fdr),
                                 selected=np.zeros(0, dtype=np.int64), statistic=np.zeros(p),
                                 feature_names=names, ks=ks, n_repeats=int(n_repeats),
                                 controlled="", refused=refusal)
    # constant columns carry nothing and make the covariance singular: left out, W = 0
    X = np.asarray(dataset.X, dtype=np.float64)
    keep = np.flatnonzero(X.max(axis=0) > X.min(axis=0))
    doubled, pinned = _doubled(params, p, keep)
    ks = sorted({int(k) + 2 * pinned for k in ks if int(k) + 2 * pinned <= 2 * keep.size})
    generator, covariance = _sampler(X[:, keep])
    import warnings

    from hidimstat import ModelXKnockoff

    # hidimstat for what it does right: the Gaussian knockoff sampler and the statistics of
    # each draw; the thresholds as their papers define them (:mod:`.fdr`)
    model = ModelXKnockoff(estimator=PathStatistic(cls, ks, doubled), ko_generator=generator,
                           n_repeats=int(n_repeats), preconfigure_lasso_path=False,
                           random_state=int(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the sampler's covariance nudges
        W_kept = np.atleast_2d(model.fit_importance(X[:, keep], np.asarray(dataset.y)))
    W = np.zeros((W_kept.shape[0], p))
    W[:, keep] = W_kept
    W[:, np.concatenate(resolve_params(params, p))] = 0.0  # in (or out of) every model
    selected, evalues = select_knockoffs(W, float(fdr))
    draws = int(n_repeats)
    least = int(np.ceil(1.0 / fdr - 1e-9))
    how = ("one knockoff draw, the knockoff+ threshold" if draws == 1 else
           f"{draws} knockoff draws aggregated by e-values: each draw's knockoff+ at "
           f"{fdr / 2:g}, then e-BH at {fdr:g}")
    controlled = (f"the expected share of false features among those selected is at most "
                  f"{fdr:g} if X's rows are Gaussian with the estimated covariance (model-X "
                  f"knockoffs, Candès et al. 2018; {how}; {covariance}). At this level it "
                  f"selects either nothing or at least {least} features")
    if pinned:
        controlled += (f"; the {pinned} always-included feature{'s are' if pinned > 1 else ' is'}"
                       " in the model, outside this selection")
    return KnockoffSelection(method=cls.registry_name or cls.__name__, fdr=float(fdr),
                             selected=selected, statistic=W.mean(axis=0),
                             feature_names=names, ks=ks, n_repeats=draws,
                             controlled=controlled, evalues=evalues, draw_statistics=W)


def _sampler(X: np.ndarray):
    """hidimstat's Gaussian knockoff sampler on the sample covariance of the standardised
    columns (as the knockoff R package does by default, Candès et al.'s reference code):
    shrinkage pulls the knockoffs of correlated columns apart from their originals, so that a
    null column beside a signal enters before its copy — Ledoit–Wolf's estimate let 0.28 of
    the selection be false at fdr 0.2 on an AR(1) design. Shrunk (Ledoit–Wolf) only where the
    sample covariance is not positive definite, and said."""
    from hidimstat.samplers import GaussianKnockoffs
    from sklearn.covariance import EmpiricalCovariance, LedoitWolf

    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    smallest = float(np.linalg.eigvalsh(Z.T @ Z / Z.shape[0])[0])
    if smallest > 1e-6:
        return (GaussianKnockoffs(cov_estimator=EmpiricalCovariance(assume_centered=True)),
                "the sample covariance")
    return (GaussianKnockoffs(cov_estimator=LedoitWolf(assume_centered=True)),
            "the columns are nearly collinear, so the covariance was shrunk (Ledoit–Wolf) "
            "and the rate holds only approximately")


def _doubled(params: dict, p: int, keep: np.ndarray) -> tuple[dict, int]:
    """What the user knows, for the method fitted on [X, X̃] of the ``keep`` columns: a
    pinned or excluded feature is pinned or excluded with its knockoff, a penalty factor
    applies to both (the statistic must not tell a feature from its copy by anything but the
    data). Returns the settings and how many pinned features are among ``keep``."""
    out = {name: value for name, value in params.items()
           if name not in ("always_include", "exclude", "penalty_factor")}
    pinned, banned = resolve_params(params, p)
    position = np.full(p, -1)
    position[keep] = np.arange(keep.size)

    def both(features):
        at = position[np.asarray(features, dtype=np.int64)]
        at = at[at >= 0]
        return np.concatenate([at, at + keep.size]).tolist()

    if pinned.size:
        out["always_include"] = both(pinned)
    if banned.size:
        out["exclude"] = both(banned)
    factor = params.get("penalty_factor")
    if factor is not None:
        full = np.ones(p)
        if isinstance(factor, dict):
            for j, f in factor.items():
                full[int(j)] = float(f)
        else:
            full = np.asarray(factor, dtype=np.float64)
        full = np.where((full == 0) | np.isinf(full), 1.0, full)  # pinned, banned: above
        out["penalty_factor"] = np.tile(full[keep], 2)
    return out, int(np.count_nonzero(position[pinned] >= 0))


def select_knockoffs(W, fdr: float) -> tuple[np.ndarray, np.ndarray | None]:
    """The features selected from knockoff statistics ``W`` (draws × p) at level ``fdr``:
    one draw by its knockoff+ threshold; several by derandomised knockoffs (Ren & Barber
    2023: each draw's e-values at α_kn = fdr/2, their mean, e-BH at ``fdr``). Returns the
    sorted indices and the aggregated e-values (None for one draw)."""
    W = np.atleast_2d(np.asarray(W, dtype=float))
    if W.shape[0] == 1:
        T = knockoff_plus_threshold(W[0], fdr)
        return np.flatnonzero(W[0] >= T).astype(np.int64), None
    e = np.mean([knockoff_evalues(w, fdr / 2.0) for w in W], axis=0)
    return ebh(e, fdr), e
