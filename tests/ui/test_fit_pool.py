"""Fits in the pool of worker processes, through the session state as the server uses it:
the same model as in the server's own thread, *Stop* within an inner step, a killed worker
process replaced and reported to its session only, "queued (n ahead)", nothing left after a
page closes."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import psutil
import pytest

from explorer.ui import ExplorerState, _fit_pool
from explorer.ui._fit_pool import FitPool, PooledFitWorker
from explorer.ui._worker import FitWorker

LONG = {"dataset": "fgm-type1", "method": "fgm", "B": "1", "max_outer": "200", "tol": "0"}


@pytest.fixture(scope="module")
def pool():
    started = FitPool(2)
    _fit_pool._POOL = started
    try:
        yield started
    finally:
        _fit_pool._POOL = None
        started.close()


def _session(pool, query=None):
    state = ExplorerState(dataset="digits-3v8", live=False)
    assert isinstance(state.fits.worker, PooledFitWorker)
    if query:
        state.from_query(query, fit=False)
    return state


def _until(condition, timeout=30.0):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_pooled_fit_gives_the_model_of_a_fit_in_the_server(pool):
    pooled = _session(pool)
    local = ExplorerState(dataset="digits-3v8", live=False, start_worker=False)
    local.fits.worker = FitWorker(local._events)  # in this process, as before the pool
    try:
        for state in (pooled, local):
            state.set_param("B", 3)
            state.fit()
            state.wait(60)
        assert not isinstance(local.fits.worker, PooledFitWorker)
        np.testing.assert_array_equal(pooled.estimator.coef_, local.estimator.coef_)
        assert [r.objective for r in pooled.records] == [r.objective for r in local.records]
        # the next fit of the same data does not send the data again, and starts warm from
        # the model that came back from the worker process when asked
        pooled.set_param("warm_start", True)
        pooled.set_param("B", 4, refit=True)
        pooled.wait(60)
        assert all(r.info.get("warm_start") for r in pooled.records)
    finally:
        pooled.close()
        local.close()


def test_stop_reaches_the_worker_process_within_an_inner_step(pool):
    state = _session(pool, LONG)
    try:
        state.fit()
        assert _until(lambda: state.poll().records or len(state.records) > 3)
        started = time.perf_counter()
        state.stop()
        assert state.fits.worker.wait(2.0)
        latency = time.perf_counter() - started
        state.poll()
        assert latency < 1.0
        assert state.estimator is not None and state.estimator.stopped_early_
        assert "stopped" in state.feedback.status and "Stopped" in state.feedback.message
    finally:
        state.close()


def test_a_killed_worker_is_replaced_and_only_its_session_hears_of_it(pool):
    victim = _session(pool, LONG)
    other = _session(pool)
    try:
        assert victim.fits.worker.host is not other.fits.worker.host  # one on each process
        victim.fit()
        assert _until(lambda: victim.poll().records or len(victim.records) > 2)
        pid = victim.fits.worker.host.process.pid
        os.kill(pid, signal.SIGKILL)
        other.fit()
        assert victim.fits.worker.wait(30)
        victim.poll()
        said = victim.feedback
        assert said.message_level == "error" and "worker process" in said.message
        assert "failed" in victim.feedback.status
        other.wait(60)
        said = other.feedback  # nobody else noticed
        assert said.message_level == "info" and "done" in said.status
        assert pid not in pool.pids() and pool.replaced >= 1
        assert victim.fits.worker.host.process.is_alive()
        victim.from_query({"dataset": "digits-3v8", "method": "fgm"}, fit=False)
        victim.fit()                                  # the session goes on, on the new process
        victim.wait(60)
        assert "done" in victim.feedback.status and victim.estimator is not None
    finally:
        victim.close()
        other.close()


def test_a_fit_waiting_for_the_core_says_queued_with_how_many_ahead():
    single = FitPool(1, slots=1)
    _fit_pool._POOL, before = single, _fit_pool._POOL
    long_one = short = None
    try:
        long_one = _session(single, LONG)
        short = _session(single)
        long_one.fit()
        assert _until(lambda: long_one.poll().records or len(long_one.records) > 2)
        short.fit()
        seen = []

        def finished():
            seen.append(short.poll().queued)
            return short.estimator is not None and not short.fits.running

        assert _until(finished, 60)
        assert max(seen) == 1
        assert short.estimator is not None  # its turn came while the long fit still ran
        assert long_one.fits.running
    finally:
        for state in (long_one, short):
            if state is not None:
                state.close()
        _fit_pool._POOL = before
        single.close()


def test_closing_the_pages_frees_their_threads_in_the_worker_processes(pool):
    baseline = {pid: psutil.Process(pid).num_threads() for pid in pool.pids()}
    states = [_session(pool) for _ in range(6)]
    for state in states:
        state.fit()
    for state in states:
        state.wait(60)
    grown = {pid: psutil.Process(pid).num_threads() for pid in pool.pids()}
    assert sum(grown.values()) >= sum(baseline.values()) + 6  # a fit thread per session
    for state in states:
        state.close()
    assert all(not h.sessions for h in pool.hosts)
    assert _until(lambda: {pid: psutil.Process(pid).num_threads()
                           for pid in pool.pids()} == baseline, 10)


def test_the_pool_closes_its_processes():
    scratch = FitPool(1)
    pid = scratch.pids()[0]
    scratch.close()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_the_status_says_how_many_fits_are_ahead_until_the_first_record():
    from explorer import FGM
    from explorer.ui._worker import Event

    state = ExplorerState(dataset="digits-3v8", live=False, start_worker=False)
    est = FGM(B=2, max_outer=2).fit(state.data.X, state.data.y)
    state.fits.running, state.fits.token = True, 4
    state._events.put(Event("queued", 4, 3))
    state.poll()
    assert state.feedback.status == "Selected: – features · queued (3 ahead)"
    state._events.put(Event("record", 4, est.history_[0]))
    state.poll()
    assert "queued" not in state.feedback.status and state.fits.queued == 0


def test_sessions_on_the_same_data_share_one_copy_here_and_in_their_process(pool):
    """A class on one dataset: the server holds one split and each worker process one copy,
    kept while a session uses it and dropped when the last one leaves."""
    first, second = _session(pool), _session(pool)
    third = _session(pool)  # back on the first process (least loaded placement)
    try:
        assert first.data is second.data is third.data  # one split, shared
        assert not first.data.X.flags.writeable          # and read-only
        for state in (first, second, third):
            state.fit()
            state.wait(60)
            assert "done" in state.feedback.status
        key = first.data.shared_key
        holders = [h for h in pool.hosts if key in h.data_users]
        assert {sid for h in holders for sid in h.data_users[key]} == \
            {s.fits.worker.sid for s in (first, second, third)}
        np.testing.assert_array_equal(first.estimator.coef_, third.estimator.coef_)
    finally:
        for state in (first, second, third):
            state.close()
    assert all(key not in h.data_users for h in pool.hosts)


def test_compute_turns_go_to_the_least_served_new_fit_first():
    """A class presses Run at once: the fits that just started queue in front of the long
    ones, the least served first, so a knob moved now is answered before fits that have
    already computed; fits past their first second wait in order."""
    import threading

    from explorer.ui._worker import ComputeSlots

    slots = ComputeSlots(1)
    assert slots.acquire(lambda: False)
    order, threads = [], []
    for name, urgent, served in [("long", False, 5.0), ("started", True, 0.6),
                                 ("older long", False, 9.0), ("just moved", True, 0.0)]:
        def wait(name=name, urgent=urgent, served=served):
            slots.acquire(lambda: False, urgent=urgent, served=served)
            order.append(name)
            slots.release()
        thread = threading.Thread(target=wait)
        thread.start()
        threads.append(thread)
        waiting = len(threads)
        assert _until(lambda waiting=waiting: slots.waiting() == waiting, 5)
    slots.release()
    for thread in threads:
        thread.join(5)
    assert order == ["just moved", "started", "long", "older long"]


def test_a_sweep_runs_in_a_worker_process_and_gives_the_rows_of_one_in_the_server(pool):
    """The accuracy-versus-#features sweep of a served session runs in the pool (no sweep
    thread in the server's interpreter) and streams the same rows as the same sweep run in a
    thread here; closing the page releases its place in the worker process."""
    import threading

    from explorer.ui._fit_pool import PooledSweepWorker
    from explorer.ui._worker import SweepWorker

    pooled = _session(pool)
    local = ExplorerState(dataset="digits-3v8", live=False, start_worker=False)
    local.sweeps.worker = SweepWorker(local._events)
    try:
        assert isinstance(pooled.sweeps.worker, PooledSweepWorker)
        for state in (pooled, local):
            state.set_param("B", 3)
            state.sweep(n_points=3)
        assert not any(t.name == "explorer-sweep" and t.is_alive()
                       for t in threading.enumerate() if t is not local.sweeps.worker._thread)
        for state in (pooled, local):
            state.wait(120)
        assert "sweep finished" in pooled.sweeps.status and pooled.sweeps.progress == 100
        columns = ["method", "value", "n_selected", "accuracy"]
        assert len(pooled.sweeps.frame) == len(local.sweeps.frame) >= 3
        assert pooled.sweeps.frame[columns].equals(local.sweeps.frame[columns])
    finally:
        pooled.close()
        local.close()
    assert pooled.sweeps.worker.sid not in pool.workers
    assert all(pooled.sweeps.worker.sid not in h.sessions for h in pool.hosts)


def test_a_stability_run_in_a_worker_process_streams_and_stops_like_one_here(pool):
    """Resamples stream from the worker process; *Stop* there ends the resampling and the
    resamples done still make the result (Φ̂ over fewer than asked)."""
    from explorer.ui._fit_pool import PooledSweepWorker
    from explorer.ui.stability_view import StabilityRun

    state = _session(pool)
    run = StabilityRun()
    try:
        assert isinstance(run.worker, PooledSweepWorker)
        run.start("fgm", state.data, {"B": 2}, 40, [], None)
        seen = []

        def some():
            seen.extend(run.poll())
            return sum(e.payload.get("kind") == "resample" for e in seen
                       if e.kind == "resample") >= 3

        assert _until(some, 60)
        run.stop()
        assert run.worker.wait(60)
        seen.extend(run.poll())
        results = [e.payload["result"] for e in seen
                   if e.kind == "resample" and e.payload.get("kind") == "result"]
        assert len(results) == 1 and 3 <= results[0].selected.shape[0] < 40
        assert seen[-1].kind == "stability-done"
    finally:
        run.close()
        state.close()


def test_a_sweep_whose_worker_process_dies_is_reported_failed_and_the_next_one_runs(pool):
    """The process running a session's sweep is killed: the session's sweep status says it
    failed and why (not a sweep that never ends), and a new sweep runs on the new process."""
    state = _session(pool, {"dataset": "fgm-type1", "method": "fgm"})
    try:
        state.baselines = []
        state.sweep(n_points=8)
        worker = state.sweeps.worker
        assert _until(lambda: state.poll() is not None and state.sweeps.progress > 0, 120)
        os.kill(worker.host.process.pid, signal.SIGKILL)
        assert worker.wait(30)
        state.poll()
        assert "sweep failed" in state.sweeps.status and "worker process" in state.sweeps.status
        said = state.feedback
        assert said.message_level == "error" and "start it again" in said.message
        state.from_query({"dataset": "digits-3v8", "method": "fgm", "B": "3"}, fit=False)
        state.baselines = []
        state.sweep(n_points=2)
        state.wait(120)
        assert "sweep finished" in state.sweeps.status
    finally:
        state.close()


def test_unlabeled_rows_reach_the_worker_process_and_stay_there(pool):
    """FS-Manifold's unlabeled rows travel with X and y the first time and are kept with them:
    the next fit, sent without the data, still uses every unlabeled row."""
    state = _session(pool, {"dataset": "digits-3v8-semi", "method": "fs-manifold", "m": "8"})
    try:
        unlabeled = state.data.X_unlabeled.shape[0]
        state.fit()
        state.wait(120)
        state.poll()
        assert state.estimator.n_unlabeled_ == unlabeled
        state.set_param("m", 12, refit=True)
        state.wait(120)
        state.poll()
        assert state.estimator.n_unlabeled_ == unlabeled
        assert state.estimator.selected_features_.size == 12
    finally:
        state.close()


def test_a_long_graph_shows_its_progress_and_stop_ends_it_before_a_model():
    """Many unlabeled rows: the status line says how far the graph is, and Stop during it
    ends the fit with no model and says so (not "failed")."""
    from explorer.data import make

    state = ExplorerState(dataset=make("digits-deformed-semi", n_rows=9000, n_test=200),
                          live=False, start_worker=False)
    state.fits.worker = FitWorker(state._events)
    try:
        state.method = "fs-manifold"
        state.set_param("graph", "exact")
        state.fit()
        assert _until(lambda: (state.poll(), "finding the nearest neighbours"
                               in state.feedback.status)[1], timeout=60)
        assert "%" in state.feedback.status
        state.stop()
        assert state.fits.worker.wait(30)
        state.poll()
        assert "stopped before its first model" in state.feedback.status
        assert not state.records
    finally:
        state.close()


def test_an_uploaded_file_with_empty_targets_is_fitted_with_its_unlabeled_rows():
    """A CSV whose label is empty for most rows: the page says how many rows of each it uses
    and FS-Manifold's graph takes them all."""
    from explorer.data import make

    digits = make("digits-3v8")
    lines = [",".join(f"p{j}" for j in range(64)) + ",digit"]
    for i, (row, label) in enumerate(zip(digits.X, digits.y)):
        lines.append(",".join(f"{v:g}" for v in row) + "," + (str(label) if i % 6 == 0 else ""))
    state = ExplorerState(live=False, start_worker=False)
    state.fits.worker = FitWorker(state._events)
    try:
        assert state.upload("\n".join(lines).encode(), "semi.csv")
        labeled = len(range(0, len(digits.y), 6))
        unlabeled = len(digits.y) - labeled
        assert f"unlabeled {unlabeled:,}" in state.data.summary()
        state.method = "fs-manifold"
        state.set_param("m", 10)
        state.fit()
        state.wait(120)
        state.poll()
        assert state.estimator.n_unlabeled_ == unlabeled
    finally:
        state.close()
