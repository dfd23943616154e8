"""Would I get these features again? Stability of a selection over resamples, and agreement
between methods.

* :func:`stability` fits one method on ``n_resamples`` stratified subsamples (without
  replacement) of a dataset's training part and measures how alike the selected sets are by
  Nogueira, Sechidis & Brown's estimator Φ̂ (JMLR 18(174), 2018, eq. 4), with the 95 %
  confidence interval of its asymptotic normal law (their Theorem 1 and its variance
  estimator), and the mean pairwise Jaccard index. That interval covers the resampling of
  this one training set, not a new draw of the data: ``splits`` repeats the whole measure on
  other train/test splits for the spread between them. Beside it, the chance reference: Φ̂ of
  the same method on permuted labels, where any stability comes from the features alone.
* :func:`stability_difference` — is one method's selection really more stable than
  another's? Their Φ̂ on the same resamples, paired.
* :func:`agreement` fits several methods at the same number of features and compares their
  sets: a Jaccard matrix, what one selects and the other does not, and recovery of the truth.

Both stream: ``callback`` sees each resample (or method) as it arrives and stops the run by
returning ``False``; resamples fan out on a ``dask.distributed`` cluster like sweeps.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm
from scipy.stats import t as student_t

from ..data import Dataset, load
from ..methods.knowledge import shared
from ..metrics import recovery
from .sweeps import _cluster, _resolve, fit_at_k, fit_kwargs, known, room_for_pinned


# ---------------------------------------------------------------------- Φ̂ and Jaccard
def _as_matrix(selected) -> np.ndarray:
    Z = np.asarray(selected, dtype=bool)
    if Z.ndim != 2 or Z.shape[0] < 2 or Z.shape[1] < 1:
        raise ValueError("stability needs an (M, d) boolean array of M ≥ 2 selections of d ≥ 1 "
                         f"features, got shape {Z.shape}")
    return Z


def _moments(selected):
    """(Z, M, d, p̂ per feature, k̄, the denominator k̄/d·(1 − k̄/d)) of M selections."""
    Z = _as_matrix(selected)
    M, d = Z.shape
    freq = Z.mean(axis=0)
    kbar = float(freq.sum())
    return Z, M, d, freq, kbar, (kbar / d) * (1.0 - kbar / d)


def phi(selected) -> float:
    """Nogueira et al.'s Φ̂ (JMLR 2018, eq. 4) of M selections (rows of a boolean M × d array):
    1 − mean_f s_f² / (k̄/d · (1 − k̄/d)), s_f² = M/(M−1)·p̂_f(1 − p̂_f) the unbiased variance
    of feature f's selection, k̄ the mean set size. 1 for identical sets, about 0 for random
    sets of one size. NaN when every set is empty or every set is all features (the
    denominator is 0: stability is not defined there)."""
    _, M, d, freq, kbar, denom = _moments(selected)
    if denom <= 0:
        return float("nan")
    return float(1.0 - M / (M - 1) * np.mean(freq * (1.0 - freq)) / denom)


def _phi_terms(selected):
    """(Φ̂, the i-th selection's term φ̂_i of Nogueira et al.'s variance estimator) of M
    selections; (NaN, None) where Φ̂ is not defined."""
    Z, M, d, freq, kbar, denom = _moments(selected)
    if denom <= 0:
        return float("nan"), None
    stab = phi(Z)
    k = Z.sum(axis=1).astype(float)
    terms = (Z @ freq / d - k * kbar / d**2
             + stab / 2.0 * (2.0 * k * kbar / d**2 - k / d - kbar / d + 1.0)) / denom
    return stab, terms


def phi_variance(selected) -> float:
    """The estimated variance of Φ̂ (Nogueira et al. 2018, Theorem 1: Φ̂ is asymptotically
    normal; its variance is estimated by 4/M² Σ_i (φ̂_i − φ̄)², φ̂_i the i-th selection's term)."""
    stab, terms = _phi_terms(selected)
    if terms is None:
        return float("nan")
    M = terms.size
    return float(4.0 / M**2 * np.sum((terms - terms.mean()) ** 2))


def phi_interval(selected, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` confidence interval of Φ̂ from its asymptotic normal law, clipped to
    Φ̂'s range [−1, 1]. It covers the resampling of the rows the selections were made on,
    not a new draw of the data (:func:`stability` with ``splits`` measures that spread)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    centre, var = phi(selected), phi_variance(selected)
    if not np.isfinite(centre) or not np.isfinite(var):
        return float("nan"), float("nan")
    half = float(norm.ppf(0.5 + level / 2.0)) * float(np.sqrt(var))
    return max(-1.0, centre - half), min(1.0, centre + half)


def jaccard(a, b) -> float:
    """|A ∩ B| / |A ∪ B| of two index sets (1 for two empty sets)."""
    a, b = set(np.asarray(a).tolist()), set(np.asarray(b).tolist())
    union = len(a | b)
    return 1.0 if union == 0 else len(a & b) / union


def mean_jaccard(selected) -> float:
    """The mean Jaccard index over all pairs of rows of a boolean M × d array."""
    Z = _as_matrix(selected).astype(np.int64)
    inter = Z @ Z.T
    sizes = np.diag(inter)
    union = sizes[:, None] + sizes[None, :] - inter
    i, j = np.triu_indices(Z.shape[0], k=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pairs = np.where(union[i, j] > 0, inter[i, j] / np.maximum(union[i, j], 1), 1.0)
    return float(pairs.mean())


# ---------------------------------------------------------------------- resamples
def subsample(y: np.ndarray, fraction: float, seed: int, index: int, task: str) -> np.ndarray:
    """Resample ``index``'s rows: ``fraction`` of each class (of all rows for a regression),
    without replacement, sorted; its own generator (seed, index), so a resample is the same
    wherever it runs."""
    rng = np.random.default_rng([int(seed), int(index)])
    y = np.asarray(y)
    if task != "classification":
        n = max(2, int(round(fraction * y.size)))
        return np.sort(rng.choice(y.size, size=n, replace=False))
    rows = []
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        take = min(members.size, max(1, int(round(fraction * members.size))))
        rows.append(rng.choice(members, size=take, replace=False))
    return np.sort(np.concatenate(rows))


def _fit_resample(cls, dataset: Dataset, params: dict, fraction: float, seed: int,
                  index: int, permutation: int | None = None) -> dict:
    """One resample's fit (a task on a dask worker: module-level, arguments by value). With
    ``permutation``, the training labels are first shuffled by that permutation's own
    generator (the chance reference: the same rows, labels that carry nothing)."""
    y = dataset.y
    if permutation is not None:
        y = np.random.default_rng([int(seed), int(permutation), _CHANCE]).permutation(y)
    rows = subsample(y, fraction, seed, index, dataset.task)
    part = dataset.fold(rows, rows[:0])
    if permutation is not None:
        part.y = y[rows]
    est = cls(**params)
    start = time.perf_counter()
    est.fit(part.X, part.y, **fit_kwargs(est, part))
    return {"resample": int(index), "selected": np.asarray(est.selected_features_),
            "fit_time": time.perf_counter() - start, "permutation": permutation}


_CHANCE = 0x5EED  # the chance reference's generators: apart from the resamples' own
CHANCE_PERMUTATIONS = 10  # label permutations of the chance reference
CHANCE_RESAMPLES = 5  # resamples of each permutation
COVERS_RESAMPLES = "resamples of this training set"


@dataclass
class ChanceReference:
    """Φ̂ of the same method on permuted labels, each permutation resampled as the real labels
    are: where its stability comes from the features alone.

    ``phis`` and ``variances`` hold each permutation's Φ̂ and its estimated variance (from
    ``resamples_each`` resamples); ``phi`` is their mean and ``band`` the range (95 %) in which
    a Φ̂ measured as the real one was (``n_resamples`` resamples) would fall if the labels
    carried nothing: mean ± t·√(τ² + s²/P + v̄·m/M), with s² the permutations' spread, v̄ their
    mean within-permutation variance, τ² = max(0, s² − v̄) the spread of the permutations'
    true stabilities, m resamples per permutation, M the real run's, Student's t with P − 1
    degrees of freedom."""

    phis: np.ndarray
    variances: np.ndarray
    resamples_each: int
    n_resamples: int
    phi: float = field(init=False)
    band: tuple[float, float] = field(init=False)

    def __post_init__(self):
        values = np.asarray(self.phis, dtype=float)
        within = np.asarray(self.variances, dtype=float)
        keep = np.isfinite(values) & np.isfinite(within)
        self.phis, self.variances = values[keep], within[keep]
        nan = float("nan")
        if self.phis.size == 0:
            self.phi, self.band = nan, (nan, nan)
            return
        self.phi = float(self.phis.mean())
        P = self.phis.size
        if P < 2:
            self.band = (nan, nan)
            return
        s2 = float(np.var(self.phis, ddof=1))
        v = float(self.variances.mean())
        spread = np.sqrt(max(0.0, s2 - v) + s2 / P +
                         v * self.resamples_each / max(1, self.n_resamples))
        half = float(student_t.ppf(0.975, P - 1)) * float(spread)
        self.band = (max(-1.0, self.phi - half), min(1.0, self.phi + half))

    @property
    def n_permutations(self) -> int:
        return int(self.phis.size)


@dataclass
class StabilityResult:
    """What :func:`stability` measured.

    ``selected`` is the (resamples done) × n_features boolean array, ``frequency`` each
    feature's share of selections, ``phi`` and ``phi_ci`` Φ̂ and its 95 % interval (clipped to
    [−1, 1]; ``covers`` says what it covers: the resamples of this training set, or — with
    ``splits`` — the spread between training splits, ``split_phis`` one Φ̂ per split),
    ``jaccard`` the mean pairwise Jaccard index, ``chance`` the chance reference (Φ̂ on
    permuted labels, :class:`ChanceReference`; None when not asked), ``feature_names`` the
    dataset's names, ``fit_times`` the seconds of each resample's fit."""

    method: str
    params: dict
    selected: np.ndarray
    feature_names: list[str]
    fit_times: np.ndarray
    fraction: float
    seed: int
    chance: ChanceReference | None = None
    split_phis: np.ndarray | None = None
    phi: float = field(init=False)
    phi_ci: tuple[float, float] = field(init=False)
    jaccard: float = field(init=False)
    frequency: np.ndarray = field(init=False)
    covers: str = field(init=False)

    def __post_init__(self):
        self.frequency = self.selected.mean(axis=0) if len(self.selected) else \
            np.zeros(len(self.feature_names))
        self.jaccard = mean_jaccard(self.selected) if len(self.selected) >= 2 else \
            float("nan")
        if self.split_phis is not None and len(self.split_phis) >= 2:
            values = np.asarray(self.split_phis, dtype=float)
            values = values[np.isfinite(values)]
            self.phi = float(values.mean()) if values.size else float("nan")
            if values.size >= 2:
                half = float(student_t.ppf(0.975, values.size - 1)) * \
                    float(np.std(values, ddof=1)) / np.sqrt(values.size)
                self.phi_ci = (max(-1.0, self.phi - half), min(1.0, self.phi + half))
            else:
                self.phi_ci = (float("nan"),) * 2
            self.covers = f"{len(self.split_phis)} training splits (Φ̂ of each, resampled)"
        elif len(self.selected) >= 2:
            self.phi, self.phi_ci = phi(self.selected), phi_interval(self.selected)
            self.covers = COVERS_RESAMPLES
        else:
            self.phi, self.phi_ci = float("nan"), (float("nan"),) * 2
            self.covers = COVERS_RESAMPLES

    @property
    def n_resamples(self) -> int:
        return int(len(self.selected))

    @property
    def empty(self) -> bool:
        """Every resample selected nothing (stability is not defined)."""
        return bool(len(self.selected)) and not self.selected.any()

    def verdict(self) -> str:
        """Φ̂ with what its interval covers, against the chance reference, in words."""
        if self.empty:
            return (f"{self.method} selected no feature on any of the {self.n_resamples} "
                    "resamples: the model is empty and its stability is not defined")
        if not np.isfinite(self.phi):
            return f"{self.method}: Φ̂ is not defined on these selections"
        low, high = self.phi_ci
        text = (f"Φ̂ = {self.phi:.3f} (95 % interval {low:.3f} – {high:.3f}, over the "
                f"{self.covers})")
        c = self.chance
        if c is None or not np.isfinite(c.phi):
            return text
        reference = (f"on permuted labels Φ̂ = {c.phi:.3f} (expected range {c.band[0]:.3f} – "
                     f"{c.band[1]:.3f}, {c.n_permutations} permutations)")
        if np.isfinite(c.band[1]) and self.phi > c.band[1]:
            return f"{text}; {reference}: more stable than on noise"
        return (f"{text}; {reference}: the data cannot show it is more stable than the same "
                "method on labels that carry nothing")

    def table(self) -> pd.DataFrame:
        """Per feature: its name, index and selection frequency, most frequent first."""
        order = np.argsort(-self.frequency, kind="stable")
        return pd.DataFrame({"feature": [self.feature_names[j] for j in order],
                             "index": order, "frequency": self.frequency[order]})

    def frame(self) -> pd.DataFrame:
        """Every resample: its number, how many features it selected, its selection (sorted
        indices) and fit seconds."""
        return pd.DataFrame({"method": self.method, "resample": np.arange(self.n_resamples),
                             "n_selected": self.selected.sum(axis=1).astype(int),
                             "selection": [np.flatnonzero(z) for z in self.selected],
                             "fit_time": self.fit_times})


def stability(method, dataset, *, n_resamples: int = 50, fraction: float = 0.5, seed: int = 0,
              client=None, callback: Callable | None = None, test_size: float = 0.3,
              chance: int = CHANCE_PERMUTATIONS, splits: int = 1,
              **params) -> StabilityResult:
    """Fit ``method`` (with ``params``) on ``n_resamples`` stratified subsamples of ``fraction``
    of the dataset's training part (its test part, made with ``test_size``/``seed`` when
    absent, is never used) and measure the stability of the selected sets.

    Parameters
    ----------
    method : str or estimator class
        The method, fitted with ``params`` on every resample.
    dataset : Dataset or str
        The data; only its training part is resampled.
    n_resamples : int
        Stratified subsamples fitted.
    fraction : float
        The share of the training rows in each subsample.
    seed : int
        Seed of the subsamples (and of the test part made when the dataset has none).
    test_size : float
        The test part held out when the dataset has none (never used here).
    chance : int
        Label permutations of the chance reference (0: none): the same method fitted on 5
        resamples of each permutation of the training labels (50 fits at the default 10).
        Φ̂ is 0 for random sets of the selected size, but a method on labels that carry
        nothing still prefers some features (their variance, their correlations; FGM at
        k = 5 on breast cancer with permuted labels: Φ̂ ≈ 0.3): the reference
        (:class:`ChanceReference`) says how stable that is.
    splits : int
        1: the interval covers the resampling of this training set. More: the whole
        measure is repeated on ``splits`` train/test splits of all the rows (seeds
        ``seed``, ``seed + 1``, …; a shipped test part pooled in first) and Φ̂ and its
        interval are those of the splits' Φ̂ (Student's t), the spread a new draw of the data
        would show; ``selected`` holds every split's resamples.
    callback : callable, optional
        Sees each resample as it arrives: a dict with ``stage`` ("resample" or "chance"),
        ``resample`` (its number), ``selected`` (its feature indices), ``n_done``,
        ``n_resamples``, ``phi`` and ``phi_ci`` so far (NaN before two; in the chance stage,
        those of the current permutation, ``permutation`` of ``n_permutations``); returning
        ``False`` stops the run, which keeps what was done.
    client : None, "local", str or distributed.Client
        Fit the resamples on a dask cluster; the result is the serial run's (each resample
        has its own generator).

    Examples
    --------
    Would FGM choose the same five features on other rows? Φ̂ is 1 when every half-sample
    gives the same set; beside it, FGM's Φ̂ on permuted labels:

    >>> from explorer import load
    >>> from explorer.experiments import stability
    >>> result = stability("fgm", load("breast-cancer"), k=5, n_resamples=10)
    >>> round(result.phi, 2), [round(bound, 2) for bound in result.phi_ci]
    (0.61, [0.54, 0.67])
    >>> [result.feature_names[j] for j in result.frequency.argsort()[::-1][:2]]
    ['worst area', 'mean concave points']
    >>> result.chance.phi < result.phi_ci[0]
    True
    """
    cls = _resolve(method)
    n_resamples, chance, splits = int(n_resamples), int(chance), int(splits)
    if n_resamples < 2:
        raise ValueError(f"n_resamples must be at least 2 (Φ̂ compares selections), got "
                         f"{n_resamples}")
    if not (0.0 < float(fraction) < 1.0):
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    if chance < 0:
        raise ValueError(f"chance must be a number of label permutations ≥ 0, got {chance}")
    if splits < 1:
        raise ValueError(f"splits must be at least 1, got {splits}")
    if isinstance(dataset, str):
        dataset = load(dataset)
    if dataset.is_lazy:
        raise ValueError("stability resamples rows of a dataset in memory; this one is opened "
                         "lazily (a dask array)")
    params = known(params, dataset)
    parts = [dataset.split(test_size=test_size, seed=seed)] if splits == 1 else \
        [dataset.pooled().split(test_size=test_size, seed=seed + s) for s in range(splits)]
    each_chance = CHANCE_RESAMPLES
    d = parts[0].n_features
    done: list[dict] = []
    chance_phis: list[float] = []
    chance_vars: list[float] = []
    split_phis: list[float] = []
    stop = False

    def deliver(result: dict, stage: str, batch: list[dict], total: int) -> None:
        nonlocal stop
        batch.append(result)
        if callback is None:
            return
        Z = _selections(batch, d)
        update = {"stage": stage, "resample": result["resample"],
                  "selected": result["selected"], "n_done": len(batch), "n_resamples": total,
                  "phi": phi(Z) if len(batch) >= 2 else float("nan"),
                  "phi_ci": phi_interval(Z) if len(batch) >= 2 else (float("nan"),) * 2,
                  "permutation": len(chance_phis) if stage == "chance" else None,
                  "n_permutations": chance * len(parts)}
        if callback(update) is False:
            stop = True

    with _resampler(client) as fit_all:
        for part in parts:
            batch: list[dict] = []
            fit_all(cls, part, params, fraction, seed,
                    [(i, None) for i in range(n_resamples)],
                    lambda r, b=batch: deliver(r, "resample", b, n_resamples), lambda: stop)
            batch.sort(key=lambda r: r["resample"])
            done.extend(batch)
            split_phis.append(phi(_selections(batch, d)) if len(batch) >= 2 else float("nan"))
            for permutation in range(chance):
                if stop:
                    break
                noise: list[dict] = []
                fit_all(cls, part, params, fraction, seed,
                        [(i, permutation + len(chance_phis)) for i in range(each_chance)],
                        lambda r, b=noise: deliver(r, "chance", b, each_chance), lambda: stop)
                if len(noise) >= 2:
                    chance_phis.append(phi(_selections(noise, d)))
                    chance_vars.append(phi_variance(_selections(noise, d)))
            if stop:
                break
    reference = ChanceReference(np.array(chance_phis), np.array(chance_vars), each_chance,
                                n_resamples) if chance else None
    return StabilityResult(method=cls.registry_name or cls.__name__, params=dict(params),
                           selected=_selections(done, d), feature_names=parts[0].names(),
                           fit_times=np.array([r["fit_time"] for r in done]),
                           fraction=float(fraction), seed=int(seed), chance=reference,
                           split_phis=np.array(split_phis) if splits > 1 else None)


@contextmanager
def _resampler(client):
    """A function fitting a list of (resample, permutation) of one training part, handing
    each result on as it comes, until ``stopped()``: in turn here, or on a dask cluster (the
    part sent to every worker once)."""
    if client is None:
        def in_turn(cls, part, params, fraction, seed, jobs, deliver, stopped):
            for index, permutation in jobs:
                deliver(_fit_resample(cls, part, params, fraction, seed, index, permutation))
                if stopped():
                    return

        yield in_turn
        return
    from distributed import as_completed as completed

    with _cluster(client) as dask_client:
        def on_cluster(cls, part, params, fraction, seed, jobs, deliver, stopped):
            data = dask_client.scatter(part, broadcast=True, hash=False)
            futures = [dask_client.submit(_fit_resample, cls, data, params, fraction, seed, i,
                                          permutation, pure=False, retries=2)
                       for i, permutation in jobs]
            try:
                for future in completed(futures):
                    deliver(future.result())
                    if stopped():
                        return
            finally:
                dask_client.cancel(futures)

        yield on_cluster


def _selections(done: list[dict], d: int) -> np.ndarray:
    Z = np.zeros((len(done), d), dtype=bool)
    for i, r in enumerate(done):
        Z[i, r["selected"]] = True
    return Z


def stability_difference(result, other, level: float = 0.95) -> dict:
    """Is ``result``'s method more stable than ``other``'s? Their Φ̂ difference with its
    ``level`` interval: paired resample by resample when both were measured on the same
    resamples of one training set (the delta method on Nogueira et al.'s per-selection terms
    of both), or split by split (Student's t on the splits' differences) when both were
    measured over the same ``splits``. Returns ``{"difference", "low", "high", "verdict"}``."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    same = (result.seed == other.seed and result.fraction == other.fraction and
            result.n_resamples == other.n_resamples and
            result.selected.shape == other.selected.shape and
            (result.split_phis is None) == (other.split_phis is None))
    if not same:
        raise ValueError("the two stabilities were not measured on the same resamples: run "
                         "both with the same dataset, seed, fraction, n_resamples and splits")
    a, b = result.method, other.method
    if result.split_phis is not None:
        diff = np.asarray(result.split_phis) - np.asarray(other.split_phis)
        diff = diff[np.isfinite(diff)]
        if diff.size < 2:
            return _stability_verdict(a, b, float("nan"), float("nan"), float("nan"))
        half = float(student_t.ppf(0.5 + level / 2, diff.size - 1)) * \
            float(np.std(diff, ddof=1)) / np.sqrt(diff.size)
        mean = float(diff.mean())
        return _stability_verdict(a, b, mean, mean - half, mean + half)
    phi_a, terms_a = _phi_terms(result.selected)
    phi_b, terms_b = _phi_terms(other.selected)
    if terms_a is None or terms_b is None:
        return _stability_verdict(a, b, float("nan"), float("nan"), float("nan"))
    M = terms_a.size
    centred = (terms_a - terms_a.mean()) - (terms_b - terms_b.mean())
    half = float(norm.ppf(0.5 + level / 2)) * float(np.sqrt(4.0 / M**2 * np.sum(centred**2)))
    mean = phi_a - phi_b
    return _stability_verdict(a, b, mean, mean - half, mean + half)


def _stability_verdict(a: str, b: str, mean: float, low: float, high: float) -> dict:
    if not (np.isfinite(low) and np.isfinite(high)):
        text = f"the stability of {a} and {b} cannot be compared (Φ̂ not defined)"
    elif low > 0 or high < 0:
        more, less = (a, b) if low > 0 else (b, a)
        text = (f"{more} is more stable than {less} by {abs(mean):.3f} ± "
                f"{(high - low) / 2:.3f} (Φ̂)")
    else:
        text = (f"no difference in stability the data can show between {a} and {b} "
                f"(Φ̂: {a} − {b} = {mean:+.3f} ± {(high - low) / 2:.3f})")
    return {"difference": mean, "low": low, "high": high, "verdict": text}


# ---------------------------------------------------------------------- agreement
@dataclass
class AgreementResult:
    """What :func:`agreement` found: each method's selected indices (``supports``) and the
    setting that gave them (``settings``: ``{"k": 10}``, or GrFL's cap found for k), the
    pairwise ``jaccard`` matrix (a DataFrame, methods × methods), ``recovery`` (true features
    found per method, when the dataset knows them) and the dataset's ``feature_names``."""

    supports: dict[str, np.ndarray]
    feature_names: list[str]
    truth: np.ndarray | None = None
    settings: dict[str, dict] = field(default_factory=dict)
    k: int | None = None
    jaccard: pd.DataFrame = field(init=False)
    recovery: dict[str, int] = field(init=False)

    def __post_init__(self):
        names = list(self.supports)
        self.jaccard = pd.DataFrame(
            [[jaccard(self.supports[a], self.supports[b]) for b in names] for a in names],
            index=names, columns=names)
        self.recovery = {} if self.truth is None else {
            m: int(recovery(s, self.truth)["found"]) for m, s in self.supports.items()}

    def off_target(self) -> dict[str, int]:
        """The methods that could not be brought to ``k`` features, with the count they
        hold (GrFL's Fourier features each touch every input, so its cap cannot go below
        the inputs one feature uses)."""
        return {m: int(len(s)) for m, s in self.supports.items()
                if self.k is not None and len(s) != self.k}

    def only(self, a: str, b: str) -> list[str]:
        """The names of the features ``a`` selects and ``b`` does not."""
        extra = np.setdiff1d(self.supports[a], self.supports[b])
        return [self.feature_names[j] for j in extra]

    def table(self) -> pd.DataFrame:
        """One row per pair of methods: Jaccard, and the names each selects alone."""
        rows = []
        for a, b in itertools.combinations(self.supports, 2):
            rows.append({"method": a, "other": b, "jaccard": self.jaccard.loc[a, b],
                         "only_method": "; ".join(self.only(a, b)),
                         "only_other": "; ".join(self.only(b, a))})
        return pd.DataFrame(rows, columns=["method", "other", "jaccard", "only_method",
                                           "only_other"])


def agreement(methods: Sequence[str], dataset, *, k: int, test_size: float = 0.3,
              seed: int = 0, params: dict | None = None,
              callback: Callable | None = None,
              knowledge: dict | None = None) -> AgreementResult:
    """Fit each of ``methods`` at ``k`` features on the dataset's training part
    (:func:`fit_at_k`: a count knob, or GrFL's cap searched for k; ``params``: per-method
    extra settings, ``{name: {...}}``; ``knowledge``: what the user knows, given to every
    method alike, as in :func:`~explorer.experiments.compare`) and compare the sets they
    select.
    ``callback(name, selected)`` sees each method's set as it is fitted; ``False`` stops.

    Examples
    --------
    Three methods at five features each share few of them (Jaccard index of every pair):

    >>> from explorer import load
    >>> from explorer.experiments import agreement
    >>> result = agreement(["fgm", "fsa", "l1-svm"], load("breast-cancer"), k=5)
    >>> result.jaccard.round(2)
             fgm   fsa  l1-svm
    fgm     1.00  0.11    0.25
    fsa     0.11  1.00    0.25
    l1-svm  0.25  0.25    1.00
    """
    if len(methods) < 2:
        raise ValueError("agreement compares at least two methods")
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    knowledge = shared(knowledge, [_resolve(m) for m in methods], dataset.n_features,
                       dataset.names())
    room_for_pinned([k], knowledge, dataset)
    supports, settings = {}, {}
    for name in methods:
        cls = _resolve(name)
        # the comparison is at k: a method's own count knob in params does not override it
        est, settings[cls.registry_name or cls.__name__] = fit_at_k(
            cls, dataset, k, {**knowledge, **(params or {}).get(name, {})})
        key = cls.registry_name or cls.__name__
        supports[key] = np.asarray(est.selected_features_)
        if callback is not None and callback(key, supports[key]) is False:
            break
    return AgreementResult(supports=supports, feature_names=dataset.names(),
                           truth=dataset.truth, settings=settings, k=int(k))
