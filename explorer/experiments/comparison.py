"""Is one method really better? Several methods scored at the same numbers of features on the
same repeated folds, every fold kept, and every pair's difference with an interval that
accounts for the folds' overlapping training sets (:mod:`~explorer.experiments.inference`),
said in words."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import load
from ..methods import k_grid
from ..methods.knowledge import counts, shared
from .inference import LEVEL, PairedDifference, paired_difference, unit
from .sweeps import (
    _check_count_knob_free,
    _cluster,
    _resolve,
    check_compatible,
    folds_frame,
    room_for_pinned,
    sweep,
)

# Repetitions of K-fold CV a comparison runs by default (`benchmarks/bench_compare.py`): the
# corrected interval called a difference between equal methods in 1-3 % of planted designs at
# every R (95 % intervals), so repeats buy power, not honesty: a 4.5-point difference on
# 1,000 rows was found in 20 % of seeds with R = 1, 68 % with 3, 85 % with 5 and 90 % with 10.
# On the catalogue's small real sets the verdicts hardly moved with the shuffle of the folds
# at any R (they are mostly "no difference": there the data cannot tell). Five repetitions,
# at five times one cross-validation's cost.
DEFAULT_REPEATS = 5
DIFFERENCE_COLUMNS = ["value", "method", "other", "metric", "mean", "low", "high", "p_better",
                      "n", "detectable", "verdict"]


@dataclass
class Comparison:
    """What :func:`compare` measured.

    ``rows`` holds one row per method and number of features (the folds' mean of each
    measure, its corrected interval ``<metric>_low``/``_high``, and every fold's score in
    ``<metric>_folds``); :attr:`folds` is the same as a tidy frame (method, k, repeat, fold,
    score, selection); :meth:`differences` pairs every two methods fold for fold at each k and
    :meth:`verdicts` says what the data can tell."""

    rows: pd.DataFrame
    methods: tuple[str, ...]
    metrics: tuple[str, ...]
    cv: int
    repeats: int
    level: float = LEVEL
    rope: float = 0.0
    n_rows: int | None = None

    @property
    def folds(self) -> pd.DataFrame:
        """Every fold's score and selection: method, param, value (k), repeat, fold,
        n_selected, each measure, selection."""
        return folds_frame(self.rows, self.metrics)

    @property
    def ks(self) -> list:
        return sorted(self.rows["value"].unique().tolist()) if not self.rows.empty else []

    def pair(self, method: str, other: str, k, metric: str | None = None) -> PairedDifference:
        """``method`` − ``other`` at ``k`` features on the shared folds."""
        metric = metric or self.metrics[0]
        a, b = self._folds_of(method, k, metric), self._folds_of(other, k, metric)
        if a is None or b is None:
            missing = method if a is None else other
            nan = float("nan")
            return PairedDifference(method, other, metric, nan, nan, nan, self.level, 0,
                                    self.repeats, nan, f"{missing} has no scores at k = {k}")
        return paired_difference(a, b, method=method, other=other, metric=metric,
                                 runs=self.repeats, level=self.level, rope=self.rope,
                                 n_rows=self.n_rows)

    def differences(self, metric: str | None = None, method: str | None = None) -> pd.DataFrame:
        """One row per k and pair of methods (``method`` against each other one when given,
        else every pair in the order compared): the mean difference ``method`` − ``other``,
        its interval, the probability that ``method`` is the better, the difference the data
        could have shown (``detectable``: 4 times in 5, in the measure's units), and the
        verdict."""
        metric = metric or self.metrics[0]
        if method is not None and method not in self.methods:
            raise ValueError(f"{method!r} is not among the compared methods "
                             f"{', '.join(self.methods)}")
        pairs = [(method, o) for o in self.methods if o != method] if method else \
            list(itertools.combinations(self.methods, 2))
        out = []
        for k in self.ks:
            for a, b in pairs:
                d = self.pair(a, b, k, metric)
                out.append({"value": k, "method": a, "other": b, "metric": metric,
                            "mean": d.mean, "low": d.low, "high": d.high,
                            "p_better": d.p_better, "n": d.n, "detectable": d.detectable,
                            "verdict": d.verdict})
        return pd.DataFrame(out, columns=DIFFERENCE_COLUMNS)

    def verdicts(self, k=None, metric: str | None = None, method: str | None = None) -> list[str]:
        """The verdicts in words at ``k`` (every k when None), each prefixed by its k."""
        frame = self.differences(metric, method)
        if k is not None:
            frame = frame[frame["value"] == k]
        return [f"k = {row.value}: {row.verdict}" for row in frame.itertuples()]

    def _folds_of(self, method: str, k, metric: str):
        rows = self.rows[(self.rows["method"] == method) & (self.rows["value"] == k)]
        column = f"{metric}_folds"
        if rows.empty or column not in rows:
            return None
        folds = rows[column].iloc[0]
        return None if not isinstance(folds, np.ndarray) else folds

    def __repr__(self) -> str:
        return (f"Comparison({', '.join(self.methods)}; k = {self.ks}; {self.cv}-fold CV × "
                f"{self.repeats}; measures {', '.join(self.metrics)})")


def compare(methods: Sequence[str], dataset, *, ks: Sequence[int] | None = None,
            n_points: int = 10, metrics: Sequence[str] = ("accuracy",), cv: int = 5,
            repeats: int = DEFAULT_REPEATS, level: float = LEVEL, rope: float = 0.0,
            params: dict[str, dict] | None = None, callback: Callable | None = None,
            client=None, n_jobs: int = 1, test_size: float = 0.3,
            seed: int = 0, knowledge: dict | None = None) -> Comparison:
    """Score several methods at the same numbers of features on the same repeated folds of the
    training part, keep every fold, and compare every pair.

    Each method is asked for each k (its count knob ``k`` or ``m``; GrFL's cap searched,
    :func:`~explorer.experiments.fit_at_k`); each fit — selection included — sees only its
    fold's training rows. On a dataset with feature groups, methods that select groups count
    groups.

    Parameters
    ----------
    methods : sequence of str or estimator classes
        Registered names or classes (at least two).
    dataset : Dataset or str
        Split with ``test_size``/``seed`` when it has no test part; the test part is not used.
    ks : sequence of int, optional
        Numbers of features; default ``n_points`` log-spaced from 1 to min(p, 256).
    n_points : int
        Points of the default grid of k (when ``ks`` is not given).
    metrics : sequence of str
        Measures; differences and verdicts are in the first unless asked otherwise.
    cv, repeats : int
        ``repeats`` shuffles of ``cv``-fold CV (:func:`repeated_folds`), the same for every
        method. The default 5 × 5 costs five times one cross-validation; fewer repeats keep
        the intervals honest but find fewer real differences (:data:`DEFAULT_REPEATS`).
    level : float
        Coverage of the intervals.
    rope : float
        Half-width of a region of practical equivalence, in the measure's units (0: off).
    params : dict, optional
        Extra settings per method, ``{name: {...}}``.
    knowledge : dict, optional
        What the user knows, given to every method alike (``always_include``, ``exclude``,
        ``penalty_factor``, ``positive``; :mod:`explorer.methods.knowledge`); a method
        that cannot honour it is named before any fit. The default grid of k starts at the
        number of always-included features.
    callback : callable, optional
        Sees each row (a method at one k) as it arrives; ``False`` stops.
    client, n_jobs
        Where the fits run (as :func:`~explorer.experiments.sweep`'s).
    test_size, seed : float, int
        The test part held out when the dataset has none (never used here), and the seed of
        it and of the folds.
    client, n_jobs
        As in :func:`sweep`: a ``dask.distributed`` cluster (one for all methods) or threads.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> from explorer import load
    >>> from explorer.experiments import compare
    >>> result = compare(["fgm", "fsa"], load("breast-cancer"), ks=[5], cv=3, repeats=2)
    >>> result.rows[["method", "value", "accuracy", "accuracy_low", "accuracy_high"]].round(3)
      method  value  accuracy  accuracy_low  accuracy_high
    0    fgm      5     0.970         0.945          0.994
    1    fsa      5     0.947         0.916          0.979
    >>> print(result.verdicts()[0])  # doctest: +NORMALIZE_WHITESPACE
    k = 5: no difference the data can show between fgm and fsa (accuracy:
    fgm − fsa = +2.3 ± 3.2 points); at 398 training rows (3-fold CV × 2) only a difference
    above 4.3 points would show (4 times in 5)
    """
    classes = [_resolve(m) for m in methods]
    names = [cls.registry_name or cls.__name__ for cls in classes]
    if len(names) < 2:
        raise ValueError("compare needs at least two methods")
    if len(set(names)) != len(names):
        raise ValueError(f"each method once, got {names}")
    if cv is None:
        raise ValueError("compare scores the methods on shared folds: pass cv= (e.g. 5)")
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    knowledge = shared(knowledge, classes, dataset.n_features, dataset.names())
    pinned, allowed = counts(knowledge, dataset.n_features)
    if ks is None:
        ks = [k for k in k_grid(allowed, n_points) if k >= pinned] or [pinned]
    ks = sorted({int(k) for k in ks})
    room_for_pinned(ks, knowledge, dataset)
    params = dict(params or {})
    unknown = set(params) - set(names)
    if unknown:
        raise ValueError(f"params for methods not compared: {sorted(unknown)}")
    params = {name: {**knowledge, **params.get(name, {})} for name in names}
    for cls, name in zip(classes, names):  # before any fit: a setting that cannot run
        check_compatible(cls, dataset, params.get(name))
        _check_count_knob_free(cls, params.get(name, {}))
    stop = False

    def each(row):
        nonlocal stop
        if callback is not None and callback(row) is False:
            stop = True
            return False
        return True

    def run(dask_client=None) -> list[pd.DataFrame]:
        frames = []
        for cls, name in zip(classes, names):
            frames.append(sweep(cls, dataset, ks=ks, metrics=metrics, cv=cv, repeats=repeats,
                                level=level, seed=seed, callback=each, client=dask_client,
                                n_jobs=n_jobs, **params.get(name, {})))
            if stop:
                break
        return frames

    if client is None:
        frames = run()
    else:
        with _cluster(client) as dask_client:
            frames = run(dask_client)
    rows = pd.concat(frames, ignore_index=True)
    return Comparison(rows=rows, methods=tuple(names), metrics=tuple(metrics), cv=int(cv),
                      repeats=int(repeats), level=level, rope=rope,
                      n_rows=dataset.n_samples)


def summarize(differences: pd.DataFrame, method: str) -> list[str]:
    """The verdicts of ``method`` against each other method over every k in a few words
    each: where it is ahead, where it is behind (the largest gap with its interval) and where
    the data cannot tell them apart."""
    lines = []
    if differences is None or differences.empty:
        return lines
    for other, rows in differences[differences["method"] == method].groupby("other", sort=False):
        ahead, behind, unclear, missing = [], [], [], []
        for row in rows.itertuples():
            d = PairedDifference(row.method, row.other, row.metric, row.mean, row.low,
                                 row.high, LEVEL, row.n, 1, row.p_better, row.verdict)
            if not np.isfinite(row.mean):
                missing.append(row)
            elif d.winner == method:
                ahead.append(row)
            elif d.winner == other:
                behind.append(row)
            else:
                unclear.append(row)
        parts = []
        for rows_of, word in ((ahead, "ahead"), (behind, "behind")):
            if rows_of:
                widest = max(rows_of, key=lambda r: abs(r.mean))
                parts.append(f"{word} at k = {_ks(rows_of)} (at k = {widest.value}: "
                             f"{widest.verdict})")
        if unclear:
            shown = [r.detectable for r in unclear
                     if "detectable" in rows and np.isfinite(r.detectable)]
            text = f"no difference the data can show at k = {_ks(unclear)}"
            if shown:
                scale, word = unit(unclear[0].metric)
                low, high = min(shown) * scale, max(shown) * scale
                span = f"{low:.1f}" if round(low, 1) == round(high, 1) else \
                    f"{low:.1f}–{high:.1f}"
                text += f" (only a difference above {span}{word} would show there)"
            parts.append(text)
        if missing:
            parts.append(f"not compared at k = {_ks(missing)}")
        lines.append(f"{method} against {other}: " + "; ".join(parts))
    return lines


def _ks(rows) -> str:
    return ", ".join(str(r.value) for r in rows)
