"""Sweeps: accuracy (or any measure) versus the number of selected features.

:func:`sweep` moves one method's sparsity knob over a grid, fits on the dataset's training part,
scores on its test part and returns one row per point; ``callback(row)`` streams each row as it
arrives (the app fills its accuracy-versus-#features plot with it) and stops the sweep when it
returns ``False``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from functools import partial

import numpy as np
import pandas as pd

from .._params import specs_by_name
from ..data import DataError, Dataset, check_binary, load
from ..methods import REGISTRY, get_method, k_grid
from ..methods.knowledge import by_index, counts, pinned_count
from ..methods.registry import multiclass_methods
from ..metrics import METRICS, evaluate, recovery
from .inference import LEVEL, interval_of_mean

CONNECT_TIMEOUT = 10.0  # seconds a scheduler address may take to answer
ROW_COLUMNS = ["method", "param", "value", "n_selected", "fit_time", "n_iter", "objective"]


def _resolve(method):
    if isinstance(method, str):
        return get_method(method)
    if isinstance(method, type):
        return method
    raise TypeError("method must be a registered name or an estimator class")


def fit_kwargs(estimator, dataset: Dataset) -> dict:
    """The side information of ``dataset`` that ``estimator.fit`` accepts: feature groups,
    query ids (for the ranking loss), unlabelled rows, the image shape."""
    accepted = set(getattr(estimator, "_fit_params", ()))
    out = {}
    if "groups" in accepted and dataset.groups is not None:
        out["groups"] = dataset.groups
    if "query" in accepted and dataset.query is not None and \
            estimator.get_params().get("loss") == "ranking":
        out["query"] = dataset.query
    if "X_unlabeled" in accepted and dataset.X_unlabeled is not None:
        out["X_unlabeled"] = dataset.X_unlabeled
    if "image_shape" in accepted and dataset.image_shape is not None:
        out["image_shape"] = dataset.image_shape
    return out


def fit_point(cls, dataset: Dataset, params: dict, metrics: Sequence[str], callback=None,
              k: int | None = None) -> dict:
    """Fit one configuration on the training part and score it on the test part; with ``k``,
    the method is asked for k features (:func:`~explorer.experiments.fit_at_k`: its count
    knob, or its cap searched)."""
    start = time.perf_counter()
    if k is None:
        est = cls(**params)
        est.fit(dataset.X, dataset.y, callback=callback, **fit_kwargs(est, dataset))
    else:
        est, _ = fit_at_k(cls, dataset, int(k), params)
    wall = time.perf_counter() - start
    row = {
        "method": cls.registry_name or cls.__name__,
        "n_selected": int(est.n_selected_),
        "fit_time": float(getattr(est, "fit_time_", wall)) if k is None else wall,
        "n_iter": int(getattr(est, "n_iter_", 0)),
        "objective": float(est.history_[-1].objective) if getattr(est, "history_", None)
        else float("nan"),
    }
    row.update(evaluate(est, dataset.X_test, dataset.y_test, metrics,
                        query=dataset.query_test))
    if dataset.truth is not None:
        rec = recovery(est.selected_features_, dataset.truth)
        row["found"] = rec["found"]
        row["percent_found"] = rec["percent_found"]
    row["_estimator"] = est
    return row


def known(params: dict, dataset: Dataset) -> dict:
    """``params`` with the features the user pinned, excluded or weighted named by index in
    ``dataset`` (:func:`explorer.methods.knowledge.by_index`: names are the dataset's)."""
    return by_index(params, dataset.n_features, dataset.names())


def room_for_pinned(ks, params: dict, dataset: Dataset) -> None:
    """Raise when a k of ``ks`` is smaller than the always-included features (k counts them)."""
    pinned = pinned_count(params, dataset.n_features)
    small = [int(k) for k in ks if int(k) < pinned]
    if small:
        raise ValueError(f"k = {small[0]} is smaller than the {pinned} always-included "
                         "features; k counts every feature of the model")


def check_compatible(method, dataset: Dataset, params: dict | None = None) -> None:
    """Raise a ``DataError`` naming the dataset's file when the method with ``params`` cannot
    use its target (a multi-class target for a binary-only method, labels for a regressor, …).
    The task is the one of these settings (FSA with ``loss="squared"`` is a regressor).
    A lazily opened (dask) dataset needs a method and settings that fit on chunks."""
    cls = _resolve(method)
    probe = cls(**(params or {}))
    task = probe._task
    source = dataset.source or dataset.name
    name = cls.display_name or cls.__name__
    if dataset.is_lazy:
        if not cls.accepts_chunked:
            raise DataError(f"{name} needs the data in memory and this dataset is opened "
                            "lazily (a dask array): FGM and FSA fit on it", source=source)
        in_memory_only = [k for k in ("feature_map", "basis") if getattr(probe, k, None)]
        if in_memory_only:
            raise DataError(f"{name}'s {in_memory_only[0]}={getattr(probe, in_memory_only[0])!r}"
                            " needs the data in memory and this dataset is opened lazily",
                            source=source)
    if task == "classification":
        if dataset.task != "classification":
            raise DataError(f"{name} is a classifier but the target is a {dataset.task} "
                            f"target{_remedy(cls, dataset.task, params)}", source=source)
        if cls.multiclass == "binary":
            check_binary(dataset.y, method=name, source=source, instead=multiclass_methods())
    elif task == "regression" and dataset.task == "classification":
        raise DataError(f"{name} with these settings is a regressor but the target holds "
                        f"class labels{_remedy(cls, dataset.task, params)}", source=source)


def settings_for_task(method, task: str, params: dict | None = None) -> dict | None:
    """What makes ``method`` with ``params`` solve ``task`` ("classification", "regression",
    "ranking"): {} when it already does, else the first value of one choice parameter, in
    declaration order, that does (FSA on a ranking target: ``{"loss": "ranking"}``); None when
    no single choice does."""
    cls = _resolve(method)
    base = dict(params or {})
    if cls(**base)._task == task:
        return {}
    for spec in cls.param_specs:
        if spec.kind != "choice":
            continue
        for choice in spec.choices:
            if choice == base.get(spec.name, spec.default):
                continue
            try:
                if cls(**{**base, spec.name: choice})._task == task:
                    return {spec.name: choice}
            except (TypeError, ValueError):
                continue
    return None


def _remedy(cls, task: str, params) -> str:
    """The setting, or else the methods, that fit a target of this task (for a message)."""
    fix = settings_for_task(cls, task, params)
    if fix:
        return ": set " + ", ".join(f"{k}={v!r}" for k, v in fix.items())
    fitting = []
    for key, other in REGISTRY.items():
        change = settings_for_task(other, task)
        if change is not None:
            fitting.append(f"{other.display_name or key}" + "".join(
                f" ({k}={v!r})" for k, v in change.items()))
    return "; methods for it: " + ", ".join(fitting) if fitting else ""


def sweep(method, dataset, *, values: Sequence | None = None, ks: Sequence[int] | None = None,
          n_points: int = 10, metrics: Sequence[str] = ("accuracy",),
          callback: Callable | None = None, n_jobs: int = 1, test_size: float = 0.3,
          seed: int = 0, keep_estimators: bool = False, client=None, cv: int | None = None,
          repeats: int = 1, level: float = LEVEL, **params) -> pd.DataFrame:
    """Fit ``method`` across its sparsity knob (or at given numbers of features) on
    ``dataset`` and score each point.

    Parameters
    ----------
    method : str or estimator class
        A registered name (``"fgm"``, ``"l1-svm"``, …) or a class.
    dataset : Dataset or str
        A dataset or a catalogue name; split with ``test_size``/``seed`` when it has no test
        part.
    values : sequence, optional
        Values of the method's ``sparsity_param``; default ``cls.sweep_values`` (``n_points``).
    ks : sequence of int, optional
        Numbers of features instead of knob values: the method is asked for each k (its
        count knob ``k`` or ``m``; GrFL's cap searched, :func:`fit_at_k`), so that methods
        with different knobs are scored at the same k (rows: ``param`` "k", ``value`` k).
    n_points : int
        Points of the default grid (when neither ``values`` nor ``ks`` is given).
    metrics : sequence of str
        Names from :data:`explorer.metrics.METRICS`.
    callback : callable, optional
        Called with each row (a dict) as soon as it is computed; return ``False`` to stop.
    n_jobs : int
        Points fitted concurrently in threads (the numerics release the GIL).
    test_size, seed : float, int
        The test part held out when the dataset has none, and the seed of it and of the
        folds.
    keep_estimators : bool
        Keep each point's fitted estimator in the frame (``estimator``).
    client : None, "local", str or distributed.Client
        Fit the points in parallel on a ``dask.distributed`` cluster: ``"local"`` starts a
        LocalCluster for this sweep, a string is a scheduler address, a Client is used as is.
        The dataset is sent to every worker once; a worker lost mid-sweep has its points
        re-run by Dask. Rows are the serial run's (same fits, same order). A lazy (dask)
        dataset's points run one after the other, each spreading its passes over the cluster.
    cv : int, optional
        Score each point by ``cv``-fold cross-validation of the training part (stratified
        for classes, by query for ranking, shuffled with ``seed``): in each fold the whole
        fit — selection included — sees only the fold's training rows and is scored on its
        held-out rows; the test part is not used.
    repeats : int
        With ``cv``: repeat the K-fold split this many times, each repetition shuffled
        anew (:func:`repeated_folds`; the same folds for every method swept with the same
        ``seed``, so that their scores pair fold for fold).
    level : float
        Coverage of each cross-validated mean's interval (``<metric>_low``/``_high``).
    **params
        Fixed parameters of the method.

    Returns
    -------
    pandas.DataFrame
        One row per point, sorted by value: ``method``, ``param``, ``value``, ``n_selected``,
        each metric, ``fit_time``, ``n_iter``, ``objective`` (and ``found``/``percent_found``
        when the dataset knows its true features; ``estimator`` with ``keep_estimators``, the
        last fold's with ``cv``). With ``cv`` the measures are the folds' means and each row
        also keeps every fold: ``cv``, ``repeats``, ``<metric>_sd`` (the folds' standard
        deviation), ``<metric>_se`` (the mean's standard error corrected for overlapping
        training sets, :func:`~explorer.experiments.inference.corrected_se`),
        ``<metric>_low``/``<metric>_high`` (its ``level`` interval), ``<metric>_folds`` and
        ``n_selected_folds`` (one value per fold, repeat-major) and ``supports`` (one sorted
        index array per fold); :func:`folds_frame` makes them a tidy frame. A point whose fit
        raised has its message in ``error`` and NaN measures; the others go on (when every
        point fails, the first error is raised).

    See Also
    --------
    compare : several methods on the same folds, with their paired differences.
    choose_point : the point of best mean, or by the one-standard-error rule.

    Examples
    --------
    FGM's accuracy at 1, 3 and 10 features, by 3-fold cross-validation of the training rows
    (the selection is redone inside every fold):

    >>> from explorer import load
    >>> from explorer.experiments import sweep
    >>> rows = sweep("fgm", load("breast-cancer"), values=[1, 3, 10], cv=3)
    >>> rows[["value", "n_selected", "accuracy", "accuracy_sd"]].round(3)
       value  n_selected  accuracy  accuracy_sd
    0      1         1.0     0.920        0.032
    1      3         3.0     0.955        0.020
    2     10        10.0     0.975        0.004
    """
    cls = _resolve(method)
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=test_size, seed=seed)
    params = known(params, dataset)
    knob = cls.sparsity_param
    if ks is not None:
        room_for_pinned(ks, params, dataset)
        if values is not None:
            raise ValueError("pass values= (the method's own knob) or ks= (numbers of "
                             "features), not both")
        knob = "k"
        values = [_count(k) for k in ks]
        _check_count_knob_free(cls, params)
    elif knob in params:
        raise ValueError(f"{knob!r} is the swept parameter; pass it through values=")
    if values is None:
        values = cls.sweep_values(dataset.X, dataset.y, n_points)
        groups = fit_kwargs(cls(**params), dataset).get("groups")
        if knob == "k" and groups is not None:  # k counts groups (FGM, FS-multi): up to them
            values = k_grid(_n_groups(groups), n_points)
        elif knob == "k":  # between the always-included features and those allowed
            pinned, allowed = counts(params, dataset.n_features)
            values = [v for v in values if pinned <= v <= allowed] or [max(pinned, 1)]
    values = list(values)
    folds = repeated_folds(dataset, cv, repeats, seed) if cv is not None else None
    if cv is None and int(repeats) != 1:
        raise ValueError("repeats= repeats a cross-validation: pass cv= too")

    point = partial(_fit_row, cls, dataset, knob, params=params, metrics=metrics, folds=folds,
                    by_count=ks is not None, level=level)
    if client is not None:
        backend = partial(_rows_on_cluster, client, dataset, point, values)
    elif n_jobs == 1:
        backend = partial(_rows_in_turn, point, values)
    else:
        backend = partial(_rows_in_threads, point, values, n_jobs)
    rows = backend()  # a generator: closing it after a stop cancels what is left
    collected: list[dict] = []
    failures: list[Exception | None] = []
    try:
        for row in rows:
            failures.append(row.pop("_exception", None))
            estimator = row.pop("_estimator", None)
            if keep_estimators:
                row["estimator"] = estimator
            collected.append(row)
            if callback is not None and callback(dict(row)) is False:
                break
    finally:
        rows.close()
    if failures and all(f is not None for f in failures):
        raise failures[0]  # no point fitted: the setting itself is wrong
    frame = pd.DataFrame(collected)
    if frame.empty:
        return pd.DataFrame(columns=ROW_COLUMNS + list(metrics))
    order = ROW_COLUMNS + [m for m in metrics] + \
        [c for c in frame.columns if c not in ROW_COLUMNS and c not in metrics]
    frame = frame[[c for c in order if c in frame.columns]]
    return frame.sort_values("value", kind="stable").reset_index(drop=True)


def _count(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) < 1:
        raise ValueError(f"ks must hold numbers of features (integers ≥ 1), got {k!r}")
    return int(k)


def _check_count_knob_free(cls, params: dict) -> None:
    """A sweep at given k must not also fix the method's count or sparsity knob."""
    for knob in {"k", "m", cls.sparsity_param}:
        if knob in params:
            raise ValueError(f"{knob!r} would fix the number of features the sweep asks "
                             "for through ks=; leave it out")


def _n_groups(groups) -> int:
    """How many groups: ids per feature, or a list of index sets."""
    if isinstance(groups, (list, tuple)) and len(groups) and np.ndim(groups[0]) > 0:
        return len(groups)
    return int(np.unique(np.asarray(groups)).size)


def cv_folds(dataset: Dataset, cv: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``cv`` folds (train, held-out) of the dataset's training part: stratified for classes
    (shuffled with ``seed``), by query for ranking, plain for regression."""
    return [(train, held) for _, _, train, held in repeated_folds(dataset, cv, 1, seed)]


def repeated_folds(dataset: Dataset, cv: int, repeats: int = 1, seed: int = 0) -> list[tuple]:
    """``repeats`` shuffles of ``cv`` folds of the dataset's training part, as
    ``(repeat, fold, train, held_out)`` in repeat-major order. Repetition 0 is
    :func:`cv_folds`'s split; each later one is shuffled by its own generator (seed,
    repetition), so every method swept with the same ``seed`` meets the same folds. Ranking
    data are split by query (repetitions reorder the queries)."""
    from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

    cv, repeats = int(cv), int(repeats)
    n = dataset.n_samples
    if not 2 <= cv <= n:
        raise ValueError(f"cv must be a number of folds from 2 to the {n} training rows, "
                         f"got {cv}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if dataset.task == "classification":
        _, counts = np.unique(dataset.y, return_counts=True)
        if counts.min() < cv:
            raise ValueError(f"cv={cv} folds need at least {cv} training rows of every class; "
                             f"the smallest class has {int(counts.min())}")
    out = []
    idx = np.zeros(n)
    for repeat in range(repeats):
        state = int(seed) if repeat == 0 else \
            int(np.random.SeedSequence([int(seed), repeat]).generate_state(1)[0])
        if dataset.task == "ranking" and dataset.query is not None:
            order = np.random.default_rng(state).permutation(np.unique(dataset.query)) \
                if repeat else None
            splits = GroupKFold(cv).split(idx, groups=_relabel(dataset.query, order))
        elif dataset.task == "classification":
            splits = StratifiedKFold(cv, shuffle=True, random_state=state).split(idx, dataset.y)
        else:
            splits = KFold(cv, shuffle=True, random_state=state).split(idx)
        out.extend((repeat, fold, train, held) for fold, (train, held) in enumerate(splits))
    return out


def _relabel(query: np.ndarray, order) -> np.ndarray:
    """Query ids renamed by their place in ``order`` (None: unchanged), so that GroupKFold,
    which deals groups by size and id, deals them differently in each repetition."""
    if order is None:
        return query
    rank = {q: i for i, q in enumerate(order)}
    return np.array([rank[q] for q in query])


def _fit_row(cls, dataset: Dataset, knob: str, value, params: dict, metrics,
             folds=None, by_count: bool = False, level: float = LEVEL) -> dict:
    """One sweep point (a task on a dask worker: module-level, arguments by value): one fit
    scored on the test part, or one fit per fold scored on its held-out rows; ``by_count``:
    the method asked for ``value`` features."""
    settings = dict(params) if by_count else {**params, knob: value}
    k = value if by_count else None
    try:
        if folds is None:
            row = fit_point(cls, dataset, settings, metrics, k=k)
        else:
            row = _mean_of_folds([fit_point(cls, dataset.fold(train, held), settings, metrics,
                                            k=k) for _, _, train, held in folds],
                                 folds, metrics, level)
    except Exception as exc:  # this point failed: the sweep goes on and shows it as failed
        row = {"method": cls.registry_name or cls.__name__, "n_selected": float("nan"),
               "error": f"{type(exc).__name__}: {exc}", "_exception": exc,
               **{m: float("nan") for m in metrics}}
    row["param"] = knob
    row["value"] = value
    return row


def _mean_of_folds(rows: list[dict], folds: list[tuple], metrics: Sequence[str],
                   level: float = LEVEL) -> dict:
    """The folds' rows as one: numbers averaged (``<name>_sd`` their standard deviation, for
    n_selected and the measures), each measure's corrected standard error and interval, every
    fold's measure and count (``<name>_folds``), the folds' supports, the last fold's
    estimator."""
    cv = 1 + max(f[1] for f in folds)
    repeats = 1 + max(f[0] for f in folds)
    out = {"method": rows[0]["method"], "cv": cv, "repeats": repeats}
    for key, first in rows[0].items():
        if key in ("method", "_estimator") or not isinstance(first, (int, float, np.number)):
            continue
        values = np.array([r[key] for r in rows], dtype=float)
        out[key] = float(np.mean(values))
        if key in ("fit_time", "n_iter", "objective", "found"):
            continue
        out[f"{key}_sd"] = float(np.std(values, ddof=1)) if len(rows) > 1 else 0.0
        if key in metrics or key == "n_selected":
            out[f"{key}_folds"] = values
        if key in metrics:
            _, low, high, se = interval_of_mean(values, cv, repeats, level)
            out[f"{key}_se"], out[f"{key}_low"], out[f"{key}_high"] = se, low, high
    out["supports"] = [np.asarray(r["_estimator"].selected_features_) for r in rows]
    out["_estimator"] = rows[-1]["_estimator"]
    return out


def folds_frame(rows: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Every fold of cross-validated sweep rows (:func:`sweep`, :func:`compare`) as a tidy
    frame: one row per method, knob value, repetition and fold, with ``param``, ``value``,
    ``repeat``, ``fold``, ``n_selected``, each measure and the fold's ``selection`` (sorted
    feature indices). Empty for rows scored on a test part."""
    columns = ["method", "param", "value", "repeat", "fold", "n_selected"]
    if rows is None or rows.empty or "supports" not in rows:
        return pd.DataFrame(columns=columns + list(metrics or []) + ["selection"])
    if metrics is None:
        metrics = [c[: -len("_folds")] for c in rows.columns
                   if c.endswith("_folds") and c != "n_selected_folds"]
    out = []
    for _, row in rows.iterrows():
        supports = row["supports"]
        if not isinstance(supports, list):
            continue  # a failed point
        cv = int(row["cv"])
        for index, selection in enumerate(supports):
            entry = {"method": row["method"], "param": row["param"], "value": row["value"],
                     "repeat": index // cv, "fold": index % cv,
                     "n_selected": int(row["n_selected_folds"][index])}
            for m in metrics:
                entry[m] = float(row[f"{m}_folds"][index])
            entry["selection"] = np.asarray(selection)
            out.append(entry)
    return pd.DataFrame(out, columns=columns + list(metrics) + ["selection"])


@contextmanager
def _cluster(client):
    """The distributed Client for ``client`` ("local": a LocalCluster closed afterwards)."""
    from distributed import Client, LocalCluster

    if isinstance(client, Client):
        yield client
        return
    if client == "local":
        with LocalCluster(processes=True, threads_per_worker=1, dashboard_address=":0") \
                as cluster, Client(cluster) as own:
            yield own
        return
    if isinstance(client, str):
        try:
            own = Client(client, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except ValueError as exc:
            raise ValueError(f"client {client!r} is not a scheduler address such as "
                             f"'tcp://host:8786' ({exc})") from None
        except OSError:
            raise ConnectionError(
                f"no dask scheduler answered at {client!r} within {CONNECT_TIMEOUT:g} s: "
                "start one there (`dask scheduler`, workers with `dask worker ADDRESS`) or "
                "pass client='local' for a cluster on this machine") from None
        with own:
            yield own
        return
    raise TypeError(f"client must be None, 'local', a scheduler address or a "
                    f"distributed.Client, got {type(client).__name__}")


def _rows_in_turn(point, values):
    """The sweep's rows, one fit after the other."""
    for value in values:
        yield point(value)


def _rows_in_threads(point, values, n_jobs: int):
    """The sweep's rows from ``n_jobs`` threads (the numerics release the GIL), as they end."""
    with ThreadPoolExecutor(max_workers=max(1, n_jobs)) as pool:
        futures = [pool.submit(point, v) for v in values]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def _rows_on_cluster(client, dataset: Dataset, point, values):
    """The sweep's rows from a ``dask.distributed`` cluster: the dataset sent to every worker
    once, a lost worker's points re-run (``retries``); a lazy (dask) dataset's points in turn,
    each spreading its passes over the cluster."""
    from distributed import as_completed as completed

    with _cluster(client) as dask_client:
        if dataset.is_lazy:
            with dask_client.as_current():
                yield from _rows_in_turn(point, values)
            return
        data = dask_client.scatter(dataset, broadcast=True, hash=False)
        cls, _, knob = point.args  # the scattered dataset in its place, as a direct argument
        futures = [dask_client.submit(point.func, cls, data, knob, value, pure=False, retries=2,
                                      **point.keywords) for value in values]
        try:
            for future in completed(futures):
                yield future.result()
        finally:
            dask_client.cancel(futures)


CHOICE_RULES = ("best", "one-se", "one-se-corrected")
CHOICE_RULE = "best"  # measured on real sets (benchmarks/bench_compare.py --only rules)


def choose_point(rows: pd.DataFrame, metric: str, rule: str = CHOICE_RULE) -> pd.Series | None:
    """One method's cross-validated sweep rows, one point chosen by ``rule``:

    * ``"best"`` — the best mean ``metric`` (the highest, or the lowest for RMSE); ties to
      fewer features;
    * ``"one-se"`` — the one-standard-error rule of Hastie, Tibshirani & Friedman (ESL
      §7.10, 2nd ed.): the fewest features whose mean is within one standard error of the
      best, the standard error of the folds' scores as ESL takes it, sd/√(K·R);
    * ``"one-se-corrected"`` — the same with the standard error corrected for the folds'
      overlapping training sets (``<metric>_se``, Nadeau & Bengio): wider, so it picks fewer
      features, and worse ones.

    The default (``"best"``) is the rule whose choice was within one standard error of the
    best held-out k most often on the catalogue's real sets (the benchmarks page). None
    without cross-validated rows.

    Examples
    --------
    >>> from explorer import load
    >>> from explorer.experiments import choose_point, sweep
    >>> rows = sweep("fgm", load("breast-cancer"), values=[1, 3, 10], cv=3)
    >>> [int(choose_point(rows, "accuracy", rule)["value"]) for rule in CHOICE_RULES]
    [10, 10, 10]
    """
    if rule not in CHOICE_RULES:
        raise ValueError(f"rule must be one of {CHOICE_RULES}, got {rule!r}")
    sd = f"{metric}_sd"
    if rows is None or rows.empty or sd not in rows or "cv" not in rows:
        return None
    scored = rows[np.isfinite(rows[metric].astype(float)) & (rows["n_selected"] > 0)]
    if scored.empty:
        return None
    values = scored[metric].astype(float)
    larger_better = METRICS[metric].greater_is_better if metric in METRICS else True
    best_value = float(values.max() if larger_better else values.min())
    if rule == "best":
        margin = 0.0
    else:
        best = scored.loc[values.idxmax() if larger_better else values.idxmin()]
        se = float(best.get(f"{metric}_se", float("nan")))
        if rule == "one-se" or not np.isfinite(se):
            folds = float(best["cv"]) * float(best.get("repeats", 1) or 1)
            se = float(best[sd]) / np.sqrt(folds)
        margin = se
    if larger_better:
        within = scored[values >= best_value - margin - 1e-12]
    else:
        within = scored[values <= best_value + margin + 1e-12]
    return within.sort_values(["n_selected", "value"], kind="stable").iloc[0]


def one_standard_error(rows: pd.DataFrame, metric: str, corrected: bool = False) \
        -> pd.Series | None:
    """The one-standard-error choice among one method's cross-validated sweep rows (ESL
    §7.10): the fewest features whose mean ``metric`` is within one standard error of the
    best, the standard error sd/√(K·R) of the folds' scores as ESL takes it, or — with
    ``corrected`` — the one corrected for the folds' overlapping training sets
    (:func:`choose_point` with ``"one-se"`` or ``"one-se-corrected"``).

    Examples
    --------
    >>> from explorer import load
    >>> from explorer.experiments import one_standard_error, sweep
    >>> rows = sweep("fgm", load("breast-cancer"), values=[1, 3, 10], cv=3)
    >>> int(one_standard_error(rows, "accuracy")["value"])
    10
    """
    return choose_point(rows, metric, "one-se-corrected" if corrected else "one-se")


def available_methods() -> list[str]:
    """Registered method names."""
    return sorted(REGISTRY)


def monotone_fraction(values: Sequence[float]) -> float:
    """Share of consecutive pairs that do not decrease (a curve's "monotone-ish" score)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 1.0
    return float(np.mean(np.diff(v) >= -1e-12))


def at_k(method, k: int) -> dict:
    """The setting that asks ``method`` for k features: ``k``, or FS-Manifold's ``m``."""
    cls = _resolve(method)
    names = cls().get_params()
    for knob in ("k", "m"):
        if knob in names:
            return {knob: int(k)}
    raise ValueError(f"{cls.display_name or cls.__name__} cannot be asked for a number of "
                     "features")


MAX_COUNT_FITS = 12  # fits one method may spend looking for k features through its cap


def fit_at_k(method, dataset: Dataset, k: int, params: dict | None = None,
             max_fits: int = MAX_COUNT_FITS):
    """A model of ``method`` with k selected features (or the nearest count found), fitted on
    ``dataset``. A method with a count knob is asked for k (:func:`at_k`); one whose sparsity
    knob is an integer cap on what it learns (GrFL's ``max_features`` counts learned
    features, several of which may share an input) is searched: the cap doubles from k until
    the fit holds at least k input features, then bisects the bracket, at most ``max_fits``
    fits. Returns ``(estimator, setting)``."""
    cls = _resolve(method)
    params = dict(params or {})
    try:
        setting = at_k(cls, k)
    except ValueError:
        setting = None
    if setting is not None:
        est = cls(**{**params, **setting})
        est.fit(dataset.X, dataset.y, **fit_kwargs(est, dataset))
        return est, setting
    knob = cls.sparsity_param
    spec = specs_by_name(cls.param_specs).get(knob)
    if spec is None or spec.kind != "int":
        raise ValueError(f"{cls.display_name or cls.__name__} cannot be asked for a number of "
                         "features")
    if k < 1 or max_fits < 1:
        raise ValueError(f"fit_at_k: k={k} and max_fits={max_fits} must be at least 1")
    low_cap, high_cap = int(spec.low or 1), int(spec.high or 10 * dataset.n_features)
    fitted: dict[int, object] = {}

    def count(cap: int) -> int:
        if cap not in fitted:
            est = cls(**{**params, knob: cap})
            est.fit(dataset.X, dataset.y, **fit_kwargs(est, dataset))
            fitted[cap] = est
        return int(fitted[cap].n_selected_)

    below, above = low_cap - 1, None  # caps known to give < k and ≥ k features
    cap = min(max(k, low_cap), high_cap)
    while len(fitted) < max_fits:
        n = count(cap)
        if n == k:
            break
        if n < k:
            below = cap
            if above is None:
                if cap >= high_cap:
                    break
                cap = min(2 * cap, high_cap)
                continue
        else:
            above = cap
        if above is None or above - below <= 1:
            break
        cap = (below + above) // 2
    best = min(fitted, key=lambda c: (abs(count(c) - k), count(c) > k, c))
    return fitted[best], {knob: best}
