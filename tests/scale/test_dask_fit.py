"""FGM and FSA on a dask X compute the in-memory model: same selection, same objectives."""

from __future__ import annotations

import time

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

import explorer.engines.fsa.designs as designs_module
from explorer import FGM, FSA, GrFL
from explorer.data import DataError


def _problem(n=240, m=300, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.hstack([sp.csr_matrix(rng.standard_normal((n, 6))),
                       sp.random(n, m - 6, density=0.08, random_state=seed)], format="csr")
    else:
        X = rng.standard_normal((n, m))
    w = np.zeros(m)
    w[:6] = [2, -2, 1.5, -1.5, 1, -1]
    y = np.sign(np.asarray(X @ w).ravel() + 0.3 * rng.standard_normal(n))
    return X, y


def _lazy(X, chunks):
    return da.from_array(X, chunks=chunks, asarray=not sp.issparse(X))


def _same_fit(a, b, tol=1e-8):
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    assert len(a.history_) == len(b.history_)
    for ra, rb in zip(a.history_, b.history_):
        assert abs(ra.objective - rb.objective) <= tol * max(1.0, abs(ra.objective))
        np.testing.assert_array_equal(ra.selected, rb.selected)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)


# chunk columns by 23: blocks of B = 5 and groups of 4 straddle chunk boundaries
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("params", [
    {"B": 5}, {"B": 4, "feature_scaling": "norm", "loss": "logistic"},
    {"B": 3, "groups": np.arange(300) // 4}, {"B": 4, "refine": "auto", "k": 5},
    {"B": 2, "C": 0.01, "refine": "auto", "k": 10}],  # the path converges short of k: filled
    ids=["plain", "scaled-logistic", "groups", "refine", "refine-filled"])
def test_fgm_on_dask_equals_in_memory(sparse, params):
    X, y = _problem(sparse=sparse)
    a = FGM(**params).fit(X, y)
    b = FGM(**params).fit(_lazy(X, (61, 23)), y)
    _same_fit(a, b)
    if params.get("C") == 0.01:
        assert b.history_[-1].info["added"].size > 0 and b.n_selected_ == 10
    passes = [r.info["passes"] for r in b.history_ if "passes" in r.info]
    assert passes == sorted(passes) and passes[-1] >= len(passes)
    assert b.history_[0].info["bytes_read"] > 0
    np.testing.assert_allclose(b.decision_function(_lazy(X, (61, 23))), a.decision_function(X),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("params", [{"k": 6}, {"k": 4, "loss": "huber_svm"},
                                    {"k": 6, "standardize": False, "mu": 100.0}],
                         ids=["logistic", "huber", "raw"])
def test_fsa_on_dask_equals_in_memory(sparse, params, monkeypatch):
    # keep the working set lazy for most of the run (it is pulled into memory once small)
    monkeypatch.setattr(designs_module, "LOCAL_BYTES", 5_000 if sparse else 240 * 8 * 8)
    monkeypatch.setattr(designs_module, "_cluster_memory", lambda: 0)  # never persisted
    X, y = _problem(m=150, sparse=sparse)
    a = FSA(n_iter=100, **params).fit(X, y)
    b = FSA(n_iter=100, **params).fit(_lazy(X, (80, 40)), y)
    _same_fit(a, b)
    lazy_steps = [r for r in b.history_ if r.info["working_set"] == "lazy"]
    assert len(lazy_steps) >= 2  # the chunked path really ran
    # two passes per lazy step (the first step's outputs need none: β = 0)
    assert b.history_[-1].info["passes"] >= 2 * len(lazy_steps) - 1


def test_fsa_squared_loss_on_dask_equals_in_memory():
    X, _ = _problem()
    y = X[:, :6] @ np.array([2, -2, 1.5, -1.5, 1, -1.0])
    a = FSA(k=6, loss="squared", n_iter=100).fit(X, y)
    b = FSA(k=6, loss="squared", n_iter=100).fit(_lazy(X, (50, 40)), y)
    _same_fit(a, b)
    assert b.eta_ == pytest.approx(a.eta_, rel=1e-12)


def test_stop_from_the_callback_on_dask():
    X, y = _problem()
    seen = []
    model = FGM(B=5).fit(_lazy(X, (61, 7)), y, callback=lambda r: seen.append(r) or len(seen) < 2)
    assert model.stopped_early_ and len(model.history_) == 2
    fsa = FSA(k=6).fit(_lazy(X, (61, 7)), y, callback=lambda r: r.iteration < 3)
    assert fsa.stopped_early_ and fsa.history_[-1].iteration == 3


def test_methods_needing_memory_say_so():
    X, y = _problem(m=40)
    with pytest.raises(DataError, match="GrFL needs X in memory.*X.compute"):
        GrFL(max_features=3).fit(_lazy(X, (60, 10)), y)
    with pytest.raises(ValueError, match="feature_map needs X in memory"):
        FGM(feature_map="poly2").fit(_lazy(X, (60, 10)), y)
    with pytest.raises(ValueError, match="piecewise_linear' needs X in memory"):
        FSA(basis="piecewise_linear").fit(_lazy(X, (60, 10)), y)


def test_nan_in_dask_x_is_a_located_data_error():
    X, y = _problem(m=40)
    X[100, 33] = np.nan
    with pytest.raises(DataError, match="row 101, column 34"):
        FGM(B=3).fit(_lazy(X, (60, 10)), y)
    with pytest.raises(DataError, match="row 101, column 34"):
        FSA(k=3).fit(_lazy(X, (60, 10)), y)


def test_fit_uses_the_active_distributed_client():
    from distributed import Client, LocalCluster

    X, y = _problem()
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        before = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)
        model = FGM(B=5).fit(_lazy(X, (120, 150)), y)
        after = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)
    assert after > before  # the passes ran as tasks on the cluster
    _same_fit(FGM(B=5).fit(X, y), model)


def test_fsa_persists_a_small_working_set_on_the_workers(monkeypatch):
    from distributed import Client, LocalCluster

    monkeypatch.setattr(designs_module, "LOCAL_BYTES", 240 * 8 * 8)
    X, y = _problem(m=150)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, memory_limit="4GB",
                      dashboard_address=":0") as cluster, Client(cluster):
        model = FSA(k=6, n_iter=100).fit(_lazy(X, (80, 40)), y)
    where = [r.info["working_set"] for r in model.history_]
    assert "persisted" in where and where[-1] == "in memory"
    _same_fit(FSA(k=6, n_iter=100).fit(X, y), model)


def test_fsa_without_a_client_persists_in_this_process(monkeypatch):
    monkeypatch.setattr(designs_module, "LOCAL_BYTES", 240 * 8 * 8)
    X, y = _problem(m=150)
    model = FSA(k=6, n_iter=100).fit(_lazy(X, (80, 40)), y)
    assert "persisted" in [r.info["working_set"] for r in model.history_]
    _same_fit(FSA(k=6, n_iter=100).fit(X, y), model)


def _sleepy(block, seconds):
    time.sleep(seconds)
    return block


class _StopLater:
    """The app's callback protocol: *Stop* pressed ``after`` seconds past the first record
    (``cancelled()`` is what the app's Stop sets)."""

    def __init__(self, after):
        self.after, self.pressed = after, None

    def cancelled(self):
        return self.pressed is not None and time.perf_counter() >= self.pressed

    def __call__(self, record):
        if self.pressed is None:
            self.pressed = time.perf_counter() + self.after
        return not self.cancelled()


@pytest.mark.parametrize("where", ["threads", "distributed"])
@pytest.mark.parametrize("method", ["fgm", "fsa"])
def test_stop_answers_within_a_task_not_a_pass(method, where, monkeypatch):
    """Stop pressed while a pass is running: the pass is given up between two chunk tasks
    (0.1 s each; a pass is 40 of them on 2 threads, ≈ 2 s) and the model is the last
    record's."""
    monkeypatch.setattr(designs_module, "LOCAL_BYTES", 0)  # FSA's working set stays lazy
    monkeypatch.setattr(designs_module, "PERSIST_SHARE", 0.0)
    X, y = _problem()
    lazy = _lazy(X, (60, 30)).map_blocks(_sleepy, seconds=0.1, dtype=np.float64)
    make = (lambda: FGM(B=5)) if method == "fgm" else (lambda: FSA(k=6))
    callback = _StopLater(after=0.3)

    def fit():
        return make().fit(lazy, y, callback=callback)

    if where == "distributed":
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                          dashboard_address=":0") as cluster, Client(cluster):
            model = fit()
    else:
        model = fit()
    late = time.perf_counter() - callback.pressed
    assert model.stopped_early_
    assert late < 0.8, f"the fit went on {late:.2f} s after Stop"
    last = model.history_[-1]
    np.testing.assert_array_equal(model.selected_features_, np.sort(last.selected))
    np.testing.assert_array_equal(np.flatnonzero(model.coef_), np.sort(last.selected))
    assert model.score(X, y) > 0.5  # a usable model
