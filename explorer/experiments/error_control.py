"""How many of the chosen features are noise? Two answers with error control, each with the
assumptions its number rests on.

* :func:`stability_selection` — complementary pairs stability selection (Meinshausen &
  Bühlmann, JRSS-B 2010; Shah & Samworth, JRSS-B 2013) over a grid of k: every method is fitted
  at each k on both halves of ``n_pairs`` random splits of the training rows; a feature's
  selection probability at k is its share of the 2·``n_pairs`` fits (the stability path); the
  stable set holds the features whose probability reaches ``threshold`` at some k. The
  expected number of false selections in it is bounded by E(V) ≤ q² / ((2τ − 1)·p)
  (Meinshausen & Bühlmann's Theorem 1, τ the threshold > ½, q the mean number of features a
  fit selects over the grid, p the number of features) — which assumes the noise features'
  selections exchangeable and the method no worse than random guessing — and, tighter, by
  Shah & Samworth's bound for complementary pairs under unimodality of the noise features'
  selection probabilities (their eq. 8, as the stabs R package computes it), where τ is in its
  range.
* :func:`knockoff_selection` — model-X knockoffs (Candès, Fan, Janson & Lv, JRSS-B 2018)
  through ``hidimstat.ModelXKnockoff``, not written here: second-order Gaussian knockoffs of
  the standardised columns, the method fitted on [X, X̃], the knockoff+ filter at level
  ``fdr``, repeats aggregated by e-values (derandomised knockoffs, Ren & Barber 2023, e-BH).
  The statistic is the k at
  which a feature enters the method's path (Z_j = number of grid points at which it is
  selected, W_j = Z_j − Z̃_j): a fit at one k would cap the power at k. The false discovery
  rate is controlled when X's rows are Gaussian with the estimated covariance; with p ≥ n the
  covariance cannot be estimated and the function says so instead of returning a set.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Dataset, load
from ..methods import k_grid
from .resampling import subsample
from .sweeps import _cluster, _resolve, at_k, check_compatible, fit_at_k, fit_kwargs, known

THRESHOLD = 0.6  # τ: the selection probability a stable feature reaches
PAIRS = 25  # complementary pairs: 50 fits per k
SS_FEATURES = 64  # the default grid's largest k, on wide data


def default_ks(n_features: int, n_points: int = 8) -> list[int]:
    """The default grid of k for a stability path: log-spaced from 1 to min(64, p / 4). A fit
    that selects most of the p features selects every feature often, and the bound grows
    with the square of the features a fit selects: near k = p every feature looked stable
    and the bound said nothing (on 64 pixels, 48 "stable" with a bound of 195)."""
    return k_grid(max(1, min(SS_FEATURES, int(n_features) // 4)), n_points)
KNOCKOFF_REPEATS = 5
MAX_KNOCKOFF_FEATURES = 2000  # p up to which the p × p covariance of the sampler is taken


def mb_bound(q: float, p: int, threshold: float) -> float:
    """Meinshausen & Bühlmann's E(V) ≤ q²/((2τ − 1)p) (Theorem 1; τ > ½)."""
    if not 0.5 < threshold <= 1.0:
        return float("nan")
    return float(q * q / ((2.0 * threshold - 1.0) * p))


def shah_samworth_bound(q: float, p: int, threshold: float, pairs: int) -> float:
    """Shah & Samworth's bound for complementary pairs under unimodality (2013, eq. 8):
    E(V) ≤ q²/(p·c), c = 2(2τ − 1 − 1/(2B)) for τ ≤ ¾ and (1 + 1/B)/(4(1 − τ + 1/(2B)))
    above, B the number of pairs; NaN where τ is outside the range the bound holds in
    (τ at least ½ + q/p and ½ + 1/(2B) + ¾(q/p)² … taken here as τ ≥ ½ + q/p and
    ½ + 1/(2B))."""
    theta = q / p
    if threshold > 1.0 or threshold < 0.5 + max(theta, 1.0 / (2.0 * pairs)):
        return float("nan")
    if threshold <= 0.75:
        c = 2.0 * (2.0 * threshold - 1.0 - 1.0 / (2.0 * pairs))
    else:
        c = (1.0 + 1.0 / pairs) / (4.0 * (1.0 - threshold + 1.0 / (2.0 * pairs)))
    return float(q * q / (p * c)) if c > 0 else float("nan")


ASSUMPTIONS = ("the bounds assume the noise features' selections exchangeable and the method "
               "no worse than random guessing (Meinshausen & Bühlmann); the tighter one also "
               "that their selection probabilities are unimodal (Shah & Samworth)")


@dataclass
class StabilitySelection:
    """What :func:`stability_selection` measured: ``probabilities`` (len(ks) × p, the
    stability path), the ``stable`` features (indices) at ``threshold``, ``q`` the mean
    number of features one fit selects over the grid, and the bounds on the expected number
    of false selections among the stable ones (``bound``: Meinshausen & Bühlmann's;
    ``bound_unimodal``: Shah & Samworth's, NaN outside its range)."""

    method: str
    params: dict
    ks: list
    probabilities: np.ndarray
    feature_names: list[str]
    threshold: float
    n_pairs: int
    q: float
    fit_times: np.ndarray
    truth: np.ndarray | None = None
    stable: np.ndarray = field(init=False)
    bound: float = field(init=False)
    bound_unimodal: float = field(init=False)

    def __post_init__(self):
        top = self.probabilities.max(axis=0) if len(self.probabilities) else \
            np.zeros(len(self.feature_names))
        self.stable = np.flatnonzero(top >= self.threshold)
        p = len(self.feature_names)
        self.bound = mb_bound(self.q, p, self.threshold)
        self.bound_unimodal = shah_samworth_bound(self.q, p, self.threshold, self.n_pairs)

    @property
    def max_probability(self) -> np.ndarray:
        return self.probabilities.max(axis=0)

    def table(self) -> pd.DataFrame:
        """Per feature: name, index, highest selection probability, the k where it is
        reached, stable or not; most probable first."""
        top = self.max_probability
        at = np.asarray(self.ks)[self.probabilities.argmax(axis=0)]
        order = np.argsort(-top, kind="stable")
        return pd.DataFrame({"feature": [self.feature_names[j] for j in order], "index": order,
                             "probability": top[order], "k": at[order],
                             "stable": top[order] >= self.threshold})

    def path(self) -> pd.DataFrame:
        """The stability path as a tidy frame: k, feature index and name, probability."""
        rows = [(k, j, self.feature_names[j], float(self.probabilities[i, j]))
                for i, k in enumerate(self.ks) for j in np.flatnonzero(self.probabilities[i])]
        return pd.DataFrame(rows, columns=["k", "index", "feature", "probability"])

    def verdict(self) -> str:
        n = self.stable.size
        bound = self.bound_unimodal if np.isfinite(self.bound_unimodal) else self.bound
        which = "Shah & Samworth, unimodal" if np.isfinite(self.bound_unimodal) else \
            "Meinshausen & Bühlmann"
        head = (f"{n} stable feature{'s' if n != 1 else ''} (selection probability ≥ "
                f"{self.threshold:g} at some k in {self.ks[0]}–{self.ks[-1]}, "
                f"{2 * self.n_pairs} half-samples)")
        if not np.isfinite(bound):
            return head + f"; no bound on false selections at τ = {self.threshold:g} (τ > ½)"
        text = (head + f"; expected false selections among them at most {bound:.2f} ({which}; "
                f"q = {self.q:.1f} of p = {len(self.feature_names)}): " + ASSUMPTIONS)
        if bound >= max(n, 1):
            text += (". A bound this large says nothing here: a smaller largest k (fewer "
                     "features per fit) or a higher threshold tightens it")
        return text


def _pair_fits(cls, dataset: Dataset, params: dict, ks: list, seed: int, pair: int) -> dict:
    """Both halves of pair ``pair`` fitted at every k (a task on a dask worker): each half's
    selections (one index array per k), warm-starting each k from the last where the
    method can."""
    first = subsample(dataset.y, 0.5, seed, pair, dataset.task)
    second = np.setdiff1d(np.arange(dataset.n_samples), first)
    out = []
    start = time.perf_counter()
    for rows in (first, second):
        part = dataset.fold(rows, rows[:0])
        previous, chosen = None, []
        for k in ks:
            est = _fit_warm(cls, part, k, params, previous)
            chosen.append(np.asarray(est.selected_features_))
            previous = est
        out.append(chosen)
    return {"pair": int(pair), "selections": out, "fit_time": time.perf_counter() - start}


def _fit_warm(cls, part: Dataset, k: int, params: dict, previous):
    """The method at k features on ``part``; from the previous k's model when the method
    has a warm start (FGM: its blocks are the next fit's first)."""
    if previous is None or not cls.supports_warm_start or "warm_start" not in \
            cls().get_params():
        return fit_at_k(cls, part, k, params)[0]
    est = cls(**{**params, **at_k(cls, k), "warm_start": True}).continue_from(previous)
    return est.fit(part.X, part.y, **fit_kwargs(est, part))


def stability_selection(method, dataset, *, ks: Sequence[int] | None = None,
                        threshold: float = THRESHOLD, n_pairs: int = PAIRS, seed: int = 0,
                        test_size: float = 0.3, n_points: int = 8, client=None,
                        callback: Callable | None = None, **params) -> StabilitySelection:
    """Complementary pairs stability selection of ``method`` (with ``params``) over the
    numbers of features ``ks`` on the dataset's training part (its test part is not used).

    Parameters
    ----------
    method : str or estimator class
        The method, fitted with ``params`` on every half-sample.
    dataset : Dataset or str
        The data; only its training part is used.
    ks : sequence of int, optional
        The grid of k (default :func:`default_ks`: ``n_points`` log-spaced from 1 to
        min(64, p / 4), the Error control tab's).
    n_points : int
        Points of the default grid of k (when ``ks`` is not given).
    seed, test_size : int, float
        Seed of the half-samples, and the test part held out when the dataset has none.
    threshold : float
        τ in (½, 1]: a feature is stable when its selection probability reaches it at some k.
    n_pairs : int
        Random splits of the training rows into halves (stratified for classes): 2·n_pairs
        fits per k.
    client : None, "local", str or distributed.Client
        Fit the pairs on a dask cluster (the dataset sent to every worker once).
    callback : callable, optional
        Sees each pair as it is done: a dict with ``n_done``, ``n_pairs`` and the stability
        path so far (``probabilities``); ``False`` stops, keeping the pairs done.

    Returns
    -------
    StabilitySelection
    """
    cls = _resolve(method)
    if not 0.5 < float(threshold) <= 1.0:
        raise ValueError(f"threshold must be in (0.5, 1], got {threshold}")
    n_pairs = int(n_pairs)
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1, got {n_pairs}")
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    params = known(params, dataset)
    if dataset.is_lazy:
        raise ValueError("stability selection resamples rows of a dataset in memory; this one "
                         "is opened lazily (a dask array)")
    check_compatible(cls, dataset, params)
    ks = sorted({int(k) for k in (ks if ks is not None else
                                  default_ks(dataset.n_features, n_points))})
    if not ks or ks[0] < 1 or ks[-1] > dataset.n_features:
        raise ValueError(f"ks must lie in 1 … {dataset.n_features}, got {ks}")
    p = dataset.n_features
    counts = np.zeros((len(ks), p))
    union_sizes, times, done = [], [], 0
    stopped = False

    def take(result: dict) -> None:
        nonlocal done, stopped
        for chosen in result["selections"]:
            seen = np.zeros(p, dtype=bool)
            for i, sel in enumerate(chosen):
                counts[i, sel] += 1
                seen[sel] = True
            union_sizes.append(int(seen.sum()))
        times.append(result["fit_time"])
        done += 1
        if callback is not None and callback(
                {"n_done": done, "n_pairs": n_pairs,
                 "probabilities": counts / (2 * done), "ks": ks}) is False:
            stopped = True

    if client is None:
        for pair in range(n_pairs):
            take(_pair_fits(cls, dataset, params, ks, seed, pair))
            if stopped:
                break
    else:
        from distributed import as_completed as completed

        with _cluster(client) as dask_client:
            data = dask_client.scatter(dataset, broadcast=True, hash=False)
            futures = [dask_client.submit(_pair_fits, cls, data, params, ks, seed, pair,
                                          pure=False, retries=2) for pair in range(n_pairs)]
            try:
                for future in completed(futures):
                    take(future.result())
                    if stopped:
                        break
            finally:
                dask_client.cancel(futures)
    if done == 0:
        raise RuntimeError("stability selection was stopped before its first pair")
    return StabilitySelection(
        method=cls.registry_name or cls.__name__, params=dict(params), ks=ks,
        probabilities=counts / (2 * done), feature_names=dataset.names(),
        threshold=float(threshold), n_pairs=done, q=float(np.mean(union_sizes)),
        fit_times=np.array(times), truth=dataset.truth)


# ---------------------------------------------------------------------- knockoffs
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
    made knockoffs unusable — ``refused``, the reason, with nothing selected."""

    method: str
    fdr: float
    selected: np.ndarray
    statistic: np.ndarray
    feature_names: list[str]
    ks: list
    n_repeats: int
    controlled: str
    refused: str | None = None

    def verdict(self) -> str:
        if self.refused:
            return f"knockoffs not used: {self.refused}"
        n = self.selected.size
        return (f"{n} feature{'s' if n != 1 else ''} selected at a false discovery rate of "
                f"{self.fdr:g}: {self.controlled}")


def knockoff_selection(method, dataset, *, fdr: float = 0.1, ks: Sequence[int] | None = None,
                       n_repeats: int = KNOCKOFF_REPEATS, seed: int = 0,
                       test_size: float = 0.3, n_points: int = 6,
                       **params) -> KnockoffSelection:
    """Model-X knockoff selection of ``method``'s features at false discovery rate ``fdr``,
    through ``hidimstat.ModelXKnockoff`` (the statistic: the k at which a feature enters the
    method's path over ``ks``; ``n_repeats`` knockoff draws aggregated), on the dataset's
    training part.

    Returns a :class:`KnockoffSelection`; where the design makes knockoffs unusable — a
    sparse or lazy X, p ≥ n (the Gaussian sampler's covariance cannot be estimated), p above
    2,000 (its p × p covariance) — ``refused`` says why and nothing is selected. Knockoff+
    selects nothing unless at least about 1/fdr features are found (10 at fdr = 0.1): with
    fewer true signals its answer is the empty set, which the result says."""
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
    import warnings

    from hidimstat import ModelXKnockoff

    model = ModelXKnockoff(estimator=PathStatistic(cls, ks, params), n_repeats=int(n_repeats),
                           preconfigure_lasso_path=False, random_state=int(seed))
    X = np.asarray(dataset.X, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the sampler's covariance nudges
        model.fit_importance(X, np.asarray(dataset.y))
        # repeats aggregated by e-values (derandomised knockoffs, Ren & Barber 2023): the
        # p-value quantile aggregation selected nothing on planted designs where e-BH found
        # 14-20 of 20 signals without a false one
        if int(n_repeats) > 1:
            mask = np.asarray(model.fdr_selection(float(fdr), evalues=True,
                                                  fdr_control="ebh"))
            # hidimstat 0.4's e-BH keeps e ≥ its threshold, which is 0 when no e-value is
            # positive: every feature "selected" on noise. A zero e-value is no evidence.
            mask &= np.asarray(model.aggregated_eval_) > 0
        else:
            mask = np.asarray(model.fdr_selection(float(fdr)))
    selected = np.flatnonzero(mask)
    controlled = (f"the expected share of false features among those selected is at most "
                  f"{fdr:g} if X's rows are Gaussian with the estimated covariance (model-X "
                  f"knockoffs, Candès et al. 2018; {int(n_repeats)} knockoff draws "
                  "aggregated by e-values); knockoff+ needs at least about "
                  f"{int(np.ceil(1 / fdr))} features above their knockoffs before it selects "
                  "any")
    return KnockoffSelection(method=cls.registry_name or cls.__name__, fdr=float(fdr),
                             selected=selected, statistic=model.importances_.mean(axis=0),
                             feature_names=names, ks=ks, n_repeats=int(n_repeats),
                             controlled=controlled)
