"""How many of the chosen features are noise? Complementary pairs stability selection
(Meinshausen & Bühlmann, JRSS-B 2010; Shah & Samworth, JRSS-B 2013), parameterised as R's
``stabs`` is: the expected number of false selections one tolerates (``pfer``), the
``cutoff``, and ``q`` the features each fit may select — two given, the third derived
(:mod:`.pfer`), so that the bound is the user's number by construction.

The method is fitted along a grid of k on both halves of ``n_pairs`` random splits of the
training rows. Each fit's selection is the first q features to enter as k grows (stabs' "the
first q variables of the path"); a feature is stable when at least ``cutoff`` of the
half-samples select it. The features each half-sample selects at each k make the stability
path drawn beside it. The bound assumes the noise features exchangeable: columns on
different scales are not, for a method that selects by scale, so by default each column is
z-scored for the selection (``scale="sd"``; divided by its standard deviation only when X is
sparse); with ``scale=None`` on
such columns the verdict says the bound does not hold. :func:`permutation_check` (or
``permutations=``) reruns the same selection on permuted labels, where every stable feature is
false.

Model-X knockoffs, the other answer, are in :mod:`.knockoffs`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..data import Dataset, load
from ..methods import k_grid
from ..methods.knowledge import resolve_params
from . import pfer as bounds
from .resampling import subsample
from .sweeps import _cluster, _resolve, at_k, check_compatible, fit_at_k, fit_kwargs, known

PAIRS = 25  # complementary pairs: 50 fits per k
SCALES = ("sd", None)
SCALE_SPREAD = 10.0  # largest / smallest column sd above which unscaled columns are "unequal"
_NULL = 0x0BAD5EED  # the permuted labels' generators: apart from the half-samples' own


def default_ks(q: int, pinned: int = 0, n_points: int = 8) -> list[int]:
    """The default grid of k for a stability path: the always-included features plus
    ``n_points`` log-spaced counts from 1 to q (each fit's selection stops at q)."""
    return [pinned + k for k in k_grid(max(1, int(q)), n_points)]


@dataclass
class StabilitySelection:
    """What :func:`stability_selection` measured.

    ``probabilities`` (len(ks) × p) is the stability path — each feature's share of the
    half-samples that selected it at each k; ``frequency`` (p) the share whose selection (the
    first ``q`` features to enter along k) holds it; ``stable`` the features at or above
    ``cutoff`` (with the always-included ones, ``pinned``); ``bound`` the bound on the expected
    number of false features among them (at the mean selection size ``q_mean`` ≤ ``q``, so
    at most ``pfer``). ``scaled`` says whether the columns were standardised for the selection,
    ``scale_spread`` how far apart their standard deviations were, ``null_stable`` the stable
    count on each permutation of the labels (:func:`permutation_check`)."""

    method: str
    params: dict
    ks: list
    probabilities: np.ndarray
    frequency: np.ndarray
    feature_names: list[str]
    cutoff: float
    pfer: float
    q: int
    q_mean: float
    n_pairs: int
    n_candidates: int
    assumption: str = "unimodal"
    pinned: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scaled: bool = True
    scale_spread: float = 1.0
    null_stable: np.ndarray | None = None
    fit_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    seed: int = 0
    test_size: float = 0.3
    truth: np.ndarray | None = None
    probes: np.ndarray | None = None
    stable: np.ndarray = field(init=False)
    bound: float = field(init=False)

    def __post_init__(self):
        chosen = np.flatnonzero(self.frequency >= self.cutoff - 1e-12)
        self.stable = np.union1d(chosen, self.pinned).astype(np.int64)
        self.bound = bounds.bound(self.q_mean, self.n_candidates, self.cutoff, self.n_pairs,
                                  self.assumption)

    @property
    def max_probability(self) -> np.ndarray:
        """Each feature's highest selection probability along the path."""
        return self.probabilities.max(axis=0)

    @property
    def holds(self) -> bool:
        """Whether the bound's assumption of exchangeable noise features is not broken by
        columns on different scales (they were standardised, or their scales are alike)."""
        return bool(self.scaled or self.scale_spread <= SCALE_SPREAD)

    def table(self) -> pd.DataFrame:
        """Per feature: name, index, selection frequency (of the fits' first q), its highest
        probability on the path and the k where it is reached, stable or not; most frequent
        first."""
        top = self.max_probability
        at = np.asarray(self.ks)[self.probabilities.argmax(axis=0)]
        order = np.lexsort((-top, -self.frequency))
        stable = np.isin(order, self.stable)
        return pd.DataFrame({"feature": [self.feature_names[j] for j in order], "index": order,
                             "frequency": self.frequency[order], "probability": top[order],
                             "k": at[order], "stable": stable})

    def path(self) -> pd.DataFrame:
        """The stability path as a tidy frame: k, feature index and name, probability."""
        rows = [(k, j, self.feature_names[j], float(self.probabilities[i, j]))
                for i, k in enumerate(self.ks) for j in np.flatnonzero(self.probabilities[i])]
        return pd.DataFrame(rows, columns=["k", "index", "feature", "probability"])

    def verdict(self) -> str:
        """The stable set, its bound and what the bound rests on, in words (a sentence
        each)."""
        n = int(self.stable.size)
        chosen = n - int(self.pinned.size)
        named = ""
        if n:
            order = sorted(self.stable.tolist(), key=lambda j: -self.frequency[j])
            named = ": " + ", ".join(str(self.feature_names[j]) for j in order[:10]) + \
                (f" and {n - 10} more" if n > 10 else "")
        head = (f"{n} stable feature{'s' if n != 1 else ''}{named} (selected in at least "
                f"{self.cutoff:.0%} of {2 * self.n_pairs} half-samples, each fit keeping the "
                f"first {self.q} features to enter along k = {self.ks[0]}–{self.ks[-1]})")
        if self.pinned.size:
            head += (f", {self.pinned.size} of them always included by you and outside the "
                     "bound")
        sentences = [head]
        if np.isfinite(self.bound):
            bound = (f"Expected false selections among them: at most {self.bound:.2f}, within "
                     f"the PFER of {self.pfer:g} you chose (q = {self.q_mean:.1f} of "
                     f"{self.n_candidates} candidates; {bounds.WORDS[self.assumption]})")
            if chosen and self.bound >= chosen:
                bound += "; a bound as large as the stable set: every one of them could be false"
            sentences.append(bound)
        else:
            sentences.append(f"No bound holds at cutoff {self.cutoff:g} under the "
                             f"{self.assumption} assumption")
        if self.scaled:
            sentences.append("The columns were standardised for the selection, so that noise "
                             "features on different scales are alike")
        elif self.scale_spread > SCALE_SPREAD:
            sentences.append(
                f"The columns are on different scales ({self.scale_spread:.3g}× apart) and "
                "were not standardised: for a method that selects by scale the noise features "
                "are not exchangeable, and the bound does not hold here (scale='sd' "
                "standardises them)")
        if self.null_stable is not None and len(self.null_stable):
            m = float(np.mean(self.null_stable))
            sentences.append(f"On permuted labels this run keeps {m:.1f} stable feature"
                             f"{'s' if m != 1 else ''} (mean of {len(self.null_stable)} "
                             f"permutation{'s' if len(self.null_stable) != 1 else ''}; every "
                             "one false)")
        return ". ".join(sentences) + "."


def _first_q(ks: list, selections: list, weights: list, q: int, pinned: set) -> np.ndarray:
    """The first ``q`` features (not pinned) to enter along the grid: each k adds its newly
    selected features, larger weight first, until q are held."""
    held: list[int] = []
    seen = set(pinned)
    for chosen, w in zip(selections, weights):
        new = [int(j) for j in chosen if int(j) not in seen]
        new.sort(key=lambda j: -w[j])
        for j in new:
            if len(held) == q:
                return np.array(sorted(held), dtype=np.int64)
            held.append(j)
            seen.add(j)
    return np.array(sorted(held), dtype=np.int64)


def _pair_fits(cls, dataset: Dataset, params: dict, ks: list, q: int, pinned: np.ndarray,
               seed: int, pair: int, permutation: int | None = None) -> dict:
    """Both halves of pair ``pair`` fitted at every k (a task on a dask worker): each half's
    selections (one index array per k) and its first q features, warm-starting each k from
    the last where the method can. With ``permutation``, the training labels are shuffled
    first by that permutation's own generator."""
    y = dataset.y
    if permutation is not None:
        y = np.random.default_rng([int(seed), int(permutation), _NULL]).permutation(y)
    first = subsample(y, 0.5, seed, pair, dataset.task)
    second = np.setdiff1d(np.arange(dataset.n_samples), first)
    out, firsts = [], []
    start = time.perf_counter()
    pinned_set = set(pinned.tolist())
    for rows in (first, second):
        part = dataset.fold(rows, rows[:0])
        if permutation is not None:
            part.y = y[rows]
        previous, chosen, weights = None, [], []
        for k in ks:
            est = _fit_warm(cls, part, k, params, previous)
            chosen.append(np.asarray(est.selected_features_))
            weights.append(est.feature_weights())
            previous = est
        out.append(chosen)
        firsts.append(_first_q(ks, chosen, weights, q, pinned_set))
    return {"pair": int(pair), "selections": out, "first_q": firsts,
            "fit_time": time.perf_counter() - start}


def _fit_warm(cls, part: Dataset, k: int, params: dict, previous):
    """The method at k features on ``part``; from the previous k's model when the method
    has a warm start (FGM: its blocks are the next fit's first)."""
    if previous is None or not cls.supports_warm_start or "warm_start" not in \
            cls().get_params():
        return fit_at_k(cls, part, k, params)[0]
    est = cls(**{**params, **at_k(cls, k), "warm_start": True}).continue_from(previous)
    return est.fit(part.X, part.y, **fit_kwargs(est, part))


def scale_spread(X) -> float:
    """How far apart the columns' scales are: the largest over the smallest standard
    deviation, or root mean square where those spread more (a column far from zero on a
    narrow spread is small to a method that scales by the root mean square), among the
    columns that are not rounding residue; 1 when fewer than two."""
    from ..features import negligible
    from ..kernels import column_moments

    mean, sd = column_moments(X)
    used = ~negligible(sd)
    if np.count_nonzero(used) < 2:
        return 1.0
    rms = np.sqrt(sd[used] ** 2 + mean[used] ** 2)
    return float(max(sd[used].max() / sd[used].min(), rms.max() / rms.min()))


def standardised(dataset: Dataset) -> Dataset:
    """The training rows z-scored column by column (dense: centred and divided by the
    standard deviation; sparse: divided only, so it stays sparse), a column of rounding
    residue (:func:`~explorer.features.negligible`) left as it is; the test part dropped.
    Centring matters: a column divided alone keeps its mean, and a method that scales by the
    root mean square (FGM's ``feature_scaling="auto"``) then shrinks it away."""
    from ..features import negligible
    from ..kernels import column_moments

    mean, sd = column_moments(dataset.X)
    keep = negligible(sd)
    scales = np.where(keep, 1.0, sd)
    if sp.issparse(dataset.X):
        X = (dataset.X @ sp.diags(1.0 / scales)).asformat(dataset.X.format)
    else:
        X = (np.asarray(dataset.X, dtype=np.float64) - np.where(keep, 0.0, mean)) / scales
    return replace(dataset, X=X, X_test=None, y_test=None)


def stability_selection(method, dataset, *, pfer: float | None = None,
                        cutoff: float | None = None, q: int | None = None,
                        assumption: str = "unimodal", ks: Sequence[int] | None = None,
                        n_pairs: int = PAIRS, scale: str | None = "sd", permutations: int = 0,
                        seed: int = 0, test_size: float = 0.3, n_points: int = 8, client=None,
                        callback: Callable | None = None, **params) -> StabilitySelection:
    """Complementary pairs stability selection of ``method`` (with ``params``) on the
    dataset's training part (its test part is not used), with the bound the user chose.

    Parameters
    ----------
    method : str or estimator class
        The method, fitted with ``params`` on every half-sample.
    dataset : Dataset or str
        The data; only its training part is used.
    pfer, cutoff, q : float, float, int, optional
        Two of the three, as in R's stabs (:func:`~explorer.experiments.pfer.solve`): the
        expected number of false selections tolerated, the selection frequency a stable
        feature reaches, the features each fit may select. Default ``pfer=1`` and
        ``cutoff=0.75``, q derived.
    assumption : {"unimodal", "none"}
        The bound: Shah & Samworth's under unimodality (stabs' default), or Meinshausen &
        Bühlmann's.
    ks : sequence of int, optional
        The grid of k (default :func:`default_ks`: ``n_points`` log-spaced up to q, after the
        always-included features). Each fit's selection stops at its first q features.
    n_points : int
        Points of the default grid of k.
    n_pairs : int
        Random splits of the training rows into halves (stratified for classes): 2·n_pairs
        fits per k.
    scale : {"sd", None}
        "sd": each column z-scored for the selection (sparse: divided by its standard
        deviation only), for the bound's exchangeability on columns in different units;
        None: the columns as loaded.
    permutations : int
        Also run the selection on this many permutations of the labels
        (:func:`permutation_check`).
    seed, test_size : int, float
        Seed of the half-samples, and the test part held out when the dataset has none.
    client : None, "local", str or distributed.Client
        Fit the pairs on a dask cluster (the dataset sent to every worker once).
    callback : callable, optional
        Sees each pair as it is done: a dict with ``n_done``, ``n_pairs``, ``ks`` and the
        stability path so far (``probabilities``); ``False`` stops, keeping the pairs done.

    Returns
    -------
    StabilitySelection

    Examples
    --------
    >>> from explorer import load
    >>> from explorer.experiments import stability_selection
    >>> result = stability_selection("fsa", load("breast-cancer"), n_pairs=5)
    >>> result.q, result.cutoff, bool(result.bound <= result.pfer == 1)
    (4, 0.75, True)
    """
    cls = _resolve(method)
    if scale not in SCALES:
        raise ValueError(f"scale must be 'sd' or None, got {scale!r}")
    n_pairs = int(n_pairs)
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1, got {n_pairs}")
    if int(permutations) < 0:
        raise ValueError(f"permutations must be 0 or more, got {permutations}")
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    params = known(params, dataset)
    if dataset.is_lazy:
        raise ValueError("stability selection resamples rows of a dataset in memory; this one "
                         "is opened lazily (a dask array)")
    check_compatible(cls, dataset, params)
    p = dataset.n_features
    pinned, banned = resolve_params(params, p)
    candidates = p - pinned.size - banned.size
    pfer, cutoff, q = bounds.solve(candidates, n_pairs, pfer=pfer, cutoff=cutoff, q=q,
                                   assumption=assumption)
    ks = sorted({int(k) for k in (ks if ks is not None else
                                  default_ks(q, pinned.size, n_points))})
    if not ks or ks[0] < max(1, pinned.size) or ks[-1] > p - banned.size:
        raise ValueError(f"ks must lie in {max(1, pinned.size)} … {p - banned.size} (the "
                         f"always-included features to those allowed), got {ks}")
    spread = scale_spread(dataset.X)
    fitted = standardised(dataset) if scale == "sd" else dataset
    path, frequency, sizes, times = _run_pairs(cls, fitted, params, ks, q, pinned, seed,
                                               n_pairs, client=client, callback=callback)
    result = StabilitySelection(
        method=cls.registry_name or cls.__name__, params=dict(params), ks=ks,
        probabilities=path, frequency=frequency, feature_names=dataset.names(), cutoff=cutoff,
        pfer=pfer, q=q, q_mean=float(np.mean(sizes)), n_pairs=len(times),
        n_candidates=candidates, assumption=assumption, pinned=pinned,
        scaled=scale == "sd", scale_spread=spread, fit_times=np.array(times), seed=int(seed),
        test_size=float(test_size), truth=dataset.truth, probes=dataset.probes)
    if permutations:
        result = permutation_check(result, dataset, permutations, client=client)
    return result


def permutation_check(result: StabilitySelection, dataset, permutations: int = 1, *,
                      client=None, callback: Callable | None = None) -> StabilitySelection:
    """``result`` with its selection rerun the same way — the same half-samples, grid, q,
    cutoff and scaling — on ``permutations`` permutations of the training labels of
    ``dataset`` (the data it was run on): every feature stable there is false. The counts go
    to ``null_stable`` (after those of earlier checks) and into the verdict.

    Parameters
    ----------
    result : StabilitySelection
        A result of :func:`stability_selection`.
    dataset : Dataset or str
        The data the result was measured on.
    permutations : int
        Permutations of the labels, each a whole run of the pairs.
    client : None, "local", str or distributed.Client
        Where the pairs are fitted, as in :func:`stability_selection`.
    callback : callable, optional
        Sees ``{"n_done", "permutations"}`` after each permutation; ``False`` stops.

    Returns
    -------
    StabilitySelection
    """
    if int(permutations) < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=result.test_size, seed=result.seed)
    if dataset.n_features != len(result.feature_names):
        raise ValueError(f"the dataset has {dataset.n_features} features; the result was "
                         f"measured on {len(result.feature_names)}")
    cls = _resolve(result.method)
    fitted = standardised(dataset) if result.scaled else dataset
    counts = [] if result.null_stable is None else list(result.null_stable)
    start = len(counts)
    others = ~np.isin(np.arange(dataset.n_features), result.pinned)
    for i in range(start, start + int(permutations)):
        _, frequency, _, _ = _run_pairs(cls, fitted, result.params, result.ks, result.q,
                                        result.pinned, result.seed, result.n_pairs,
                                        client=client, permutation=i)
        counts.append(int(np.count_nonzero((frequency >= result.cutoff - 1e-12) & others)))
        if callback is not None and callback({"n_done": i - start + 1,
                                              "permutations": int(permutations)}) is False:
            break
    return replace(result, null_stable=np.array(counts))


def _run_pairs(cls, dataset: Dataset, params: dict, ks: list, q: int, pinned: np.ndarray,
               seed: int, n_pairs: int, client=None, callback=None, permutation=None):
    """Every pair's fits, in turn or on a dask cluster: (the path, the frequency of each
    feature in the half-samples' first q, the sizes of those selections, each pair's
    seconds)."""
    p = dataset.n_features
    counts = np.zeros((len(ks), p))
    firsts = np.zeros(p)
    sizes, times, done = [], [], 0
    stopped = False

    def take(result: dict) -> None:
        nonlocal done, stopped
        for chosen, first in zip(result["selections"], result["first_q"]):
            for i, sel in enumerate(chosen):
                counts[i, sel] += 1
            firsts[first] += 1
            sizes.append(int(first.size))
        times.append(result["fit_time"])
        done += 1
        if callback is not None and callback(
                {"n_done": done, "n_pairs": n_pairs,
                 "probabilities": counts / (2 * done), "ks": ks}) is False:
            stopped = True

    task = (cls, dataset, params, ks, q, pinned, seed)
    if client is None:
        for pair in range(n_pairs):
            take(_pair_fits(*task, pair, permutation))
            if stopped:
                break
    else:
        from distributed import as_completed as completed

        with _cluster(client) as dask_client:
            data = dask_client.scatter(dataset, broadcast=True, hash=False)
            futures = [dask_client.submit(_pair_fits, cls, data, *task[2:], pair, permutation,
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
    return counts / (2 * done), firsts / (2 * done), sizes, times
