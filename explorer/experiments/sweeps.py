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

from ..data import DataError, Dataset, check_binary, load
from ..methods import REGISTRY, get_method, k_grid
from ..metrics import evaluate, recovery

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


def fit_point(cls, dataset: Dataset, params: dict, metrics: Sequence[str], callback=None) -> dict:
    """Fit one configuration on the training part and score it on the test part."""
    est = cls(**params)
    start = time.perf_counter()
    est.fit(dataset.X, dataset.y, callback=callback, **fit_kwargs(est, dataset))
    wall = time.perf_counter() - start
    row = {
        "method": cls.registry_name or cls.__name__,
        "n_selected": int(est.n_selected_),
        "fit_time": float(getattr(est, "fit_time_", wall)),
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
            check_binary(dataset.y, method=name, source=source)
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


def sweep(method, dataset, *, values: Sequence | None = None, n_points: int = 10,
          metrics: Sequence[str] = ("accuracy",), callback: Callable | None = None,
          n_jobs: int = 1, test_size: float = 0.3, seed: int = 0, keep_estimators: bool = False,
          client=None, cv: int | None = None, **params) -> pd.DataFrame:
    """Fit ``method`` across its sparsity knob on ``dataset`` and score each point.

    Parameters
    ----------
    method : str or estimator class
        A registered name (``"fgm"``, ``"l1-svm"``, …) or a class.
    dataset : Dataset or str
        A dataset or a catalogue name; split with ``test_size``/``seed`` when it has no test
        part.
    values : sequence, optional
        Values of the method's ``sparsity_param``; default ``cls.sweep_values`` (``n_points``).
    metrics : sequence of str
        Names from :data:`explorer.metrics.METRICS`.
    callback : callable, optional
        Called with each row (a dict) as soon as it is computed; return ``False`` to stop.
    n_jobs : int
        Points fitted concurrently in threads (the numerics release the GIL).
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
        held-out rows; the test part is not used. Rows then hold the folds' means, each
        metric's ``<metric>_sd``, ``n_selected_sd`` and ``supports`` (one sorted index array
        per fold).
    **params
        Fixed parameters of the method.

    Returns
    -------
    pandas.DataFrame
        One row per point, sorted by value: ``method``, ``param``, ``value``, ``n_selected``,
        each metric, ``fit_time``, ``n_iter``, ``objective`` (and ``found``/``percent_found``
        when the dataset knows its true features; ``estimator`` with ``keep_estimators``, the
        last fold's with ``cv``). A point whose fit raised has its message in ``error`` and
        NaN measures; the others go on (when every point fails, the first error is raised).

    See Also
    --------
    compare : several methods on the same split.
    one_standard_error : the fewest features within one standard error of the best.

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
    knob = cls.sparsity_param
    if knob in params:
        raise ValueError(f"{knob!r} is the swept parameter; pass it through values=")
    if values is None:
        values = cls.sweep_values(dataset.X, dataset.y, n_points)
        groups = fit_kwargs(cls(**params), dataset).get("groups")
        if knob == "k" and groups is not None:  # k counts groups (FGM, FS-multi): up to them
            values = k_grid(_n_groups(groups), n_points)
    values = list(values)
    folds = cv_folds(dataset, cv, seed) if cv is not None else None

    point = partial(_fit_row, cls, dataset, knob, params=params, metrics=metrics, folds=folds)
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


def _n_groups(groups) -> int:
    """How many groups: ids per feature, or a list of index sets."""
    if isinstance(groups, (list, tuple)) and len(groups) and np.ndim(groups[0]) > 0:
        return len(groups)
    return int(np.unique(np.asarray(groups)).size)


def cv_folds(dataset: Dataset, cv: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``cv`` folds (train, held-out) of the dataset's training part: stratified for classes
    (shuffled with ``seed``), by query for ranking, plain for regression."""
    from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

    cv = int(cv)
    n = dataset.n_samples
    if not 2 <= cv <= n:
        raise ValueError(f"cv must be a number of folds from 2 to the {n} training rows, "
                         f"got {cv}")
    idx = np.zeros(n)
    if dataset.task == "ranking" and dataset.query is not None:
        return list(GroupKFold(cv).split(idx, groups=dataset.query))
    if dataset.task == "classification":
        _, counts = np.unique(dataset.y, return_counts=True)
        if counts.min() < cv:
            raise ValueError(f"cv={cv} folds need at least {cv} training rows of every class; "
                             f"the smallest class has {int(counts.min())}")
        return list(StratifiedKFold(cv, shuffle=True, random_state=seed).split(idx, dataset.y))
    return list(KFold(cv, shuffle=True, random_state=seed).split(idx))


def _fit_row(cls, dataset: Dataset, knob: str, value, params: dict, metrics,
             folds=None) -> dict:
    """One sweep point (a task on a dask worker: module-level, arguments by value): one fit
    scored on the test part, or one fit per fold scored on its held-out rows."""
    settings = {**params, knob: value}
    try:
        if folds is None:
            row = fit_point(cls, dataset, settings, metrics)
        else:
            row = _mean_of_folds([fit_point(cls, dataset.fold(train, held), settings, metrics)
                                  for train, held in folds])
    except Exception as exc:  # this point failed: the sweep goes on and shows it as failed
        row = {"method": cls.registry_name or cls.__name__, "n_selected": float("nan"),
               "error": f"{type(exc).__name__}: {exc}", "_exception": exc,
               **{m: float("nan") for m in metrics}}
    row["param"] = knob
    row["value"] = value
    return row


def _mean_of_folds(rows: list[dict]) -> dict:
    """The folds' rows as one: numbers averaged (``<name>_sd`` their standard deviation, for
    n_selected and the measures), the folds' supports, the last fold's estimator."""
    out = {"method": rows[0]["method"], "cv": len(rows)}
    for key, first in rows[0].items():
        if key in ("method", "_estimator") or not isinstance(first, (int, float, np.number)):
            continue
        values = np.array([r[key] for r in rows], dtype=float)
        out[key] = float(np.mean(values))
        if key not in ("fit_time", "n_iter", "objective", "found"):
            out[f"{key}_sd"] = float(np.std(values, ddof=1)) if len(rows) > 1 else 0.0
    out["supports"] = [np.asarray(r["_estimator"].selected_features_) for r in rows]
    out["_estimator"] = rows[-1]["_estimator"]
    return out


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


def compare(methods: Sequence[str], dataset, *, metrics: Sequence[str] = ("accuracy",),
            n_points: int = 10, callback: Callable | None = None, client=None,
            **kwargs) -> pd.DataFrame:
    """Sweep several registered methods on the same split and stack their rows (on one
    ``dask.distributed`` cluster for all of them when ``client`` is given, as in
    :func:`sweep`).

    Examples
    --------
    >>> from explorer import load
    >>> from explorer.experiments import compare
    >>> rows = compare(["fgm", "fsa"], load("breast-cancer"), n_points=3)
    >>> rows[["method", "n_selected", "accuracy"]].round(3)
      method  n_selected  accuracy
    0    fgm           1     0.895
    1    fgm           5     0.953
    2    fgm          30     0.953
    3    fsa           1     0.895
    4    fsa           5     0.942
    5    fsa          30     0.953
    """
    if isinstance(dataset, str):
        dataset = load(dataset)
    dataset = dataset.split(test_size=kwargs.pop("test_size", 0.3), seed=kwargs.pop("seed", 0))
    if client is None:
        frames = [sweep(m, dataset, metrics=metrics, n_points=n_points, callback=callback,
                        **kwargs) for m in methods]
    else:
        with _cluster(client) as dask_client:
            frames = [sweep(m, dataset, metrics=metrics, n_points=n_points, callback=callback,
                            client=dask_client, **kwargs) for m in methods]
    return pd.concat(frames, ignore_index=True)


def one_standard_error(rows: pd.DataFrame, metric: str) -> pd.Series | None:
    """The one-standard-error choice among one method's cross-validated sweep rows (Hastie,
    Tibshirani & Friedman, ESL §7.10): the fewest features whose mean ``metric`` is within one
    standard error (sd/√folds) of the best mean. None without cross-validated rows.

    Examples
    --------
    >>> from explorer import load
    >>> from explorer.experiments import one_standard_error, sweep
    >>> rows = sweep("fgm", load("breast-cancer"), values=[1, 3, 10], cv=3)
    >>> int(one_standard_error(rows, "accuracy")["value"])
    10
    """
    sd = f"{metric}_sd"
    if rows is None or rows.empty or sd not in rows or "cv" not in rows:
        return None
    scored = rows[np.isfinite(rows[metric].astype(float)) & (rows["n_selected"] > 0)]
    if scored.empty:
        return None
    best = scored.loc[scored[metric].astype(float).idxmax()]
    threshold = float(best[metric]) - float(best[sd]) / np.sqrt(float(best["cv"]))
    within = scored[scored[metric].astype(float) >= threshold]
    return within.sort_values(["n_selected", "value"], kind="stable").iloc[0]


def available_methods() -> list[str]:
    """Registered method names."""
    return sorted(REGISTRY)


def monotone_fraction(values: Sequence[float]) -> float:
    """Share of consecutive pairs that do not decrease (a curve's "monotone-ish" score)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 1.0
    return float(np.mean(np.diff(v) >= -1e-12))
