"""Background work for one session: one fit thread and one thread for its sweeps and
stability runs, no Panel (in the server, both run in a worker process of the pool).

The fit worker runs one request at a time; a new request cancels the one in flight (its
callback returns ``False`` at the next iteration, leaving a usable model). In step mode the
callback pauses after each iteration until :meth:`FitWorker.step` releases the next one. The
worker only produces plain data — records, estimators, frames — as events in a queue that the
UI drains on its own thread.
"""

from __future__ import annotations

import logging
import pickle
import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..methods.records import FitStopped

log = logging.getLogger("explorer.ui")


@dataclass
class FitRequest:
    """Everything a fit needs, captured on the UI thread; plain data (it may travel to a worker
    process). ``version`` marks the fitted model with the data it was fitted on (a later fit
    starts warm from it only on the same data); ``data_key`` names (X, y) so that a worker
    process that already holds them is sent the request without them."""

    token: int
    estimator: Any                   # the estimator to fit (fresh, or warm from the last one)
    X: Any
    y: Any
    fit_kwargs: dict = field(default_factory=dict)
    stepping: bool = False
    version: int = 0
    data_key: Any = None


@dataclass
class Event:
    kind: str   # "started", "queued", "progress", "record", "snapshot", "paused", "done",
    #             "stopped", "cancelled", "error", "row", "sweep-done", "sweep-error"
    token: int
    payload: Any = None
    time: float = field(default_factory=time.perf_counter)


_KERNELS_READY = threading.Event()
_WARMING = threading.Lock()
_warm_thread: threading.Thread | None = None
_warm_done = [0, 1]  # the warm-up's fits done, of how many


def kernels_warming() -> bool:
    """Whether the background warm-up is still compiling (a fit now waits for numba)."""
    return _warm_thread is not None and not _KERNELS_READY.is_set()


def warming_progress() -> float:
    """The share of the warm-up done (1 when it has finished or never started)."""
    if not kernels_warming():
        return 1.0
    done, total = _warm_done
    return done / max(1, total)


def warm_up_kernels() -> None:
    """Compile the numba kernels once per process in the background, so a server's first
    fit does not sit on "running…" while numba compiles (later starts load numba's cache)."""
    global _warm_thread
    with _WARMING:
        if _warm_thread is not None:
            return
        _warm_thread = threading.Thread(target=_warm_up, name="explorer-warm-up", daemon=True)
        _warm_thread.start()


def _warm_up() -> None:
    from ..methods.warm import compile_all

    def progress(_name, done, total):
        _warm_done[:] = [done, total]

    try:
        compile_all(progress)
    finally:
        _KERNELS_READY.set()


class ComputeSlots:
    """Fair turns at the CPU for every fit and sweep of this process (all sessions).

    At most ``n`` of them compute at once (default: the number of cores): with one Python
    thread per session, 20 fits would otherwise share the interpreter lock with the server's
    event loop and starve it (pages taking minutes to open). A fit gives its turn back at
    every record and queues again (FIFO), so long fits progress round-robin; a fit that has
    computed for less than ``URGENT_S`` queues in front, the least served first, so a knob a
    user just moved answers first even when a whole class has just pressed Run, and a short
    fit finishes at once."""

    def __init__(self, n: int | None = None):
        import os

        self.n = max(1, n or os.cpu_count() or 1)
        self._cond = threading.Condition()
        self._queue: list[tuple[bool, object]] = []
        self._busy = 0

    def acquire(self, cancelled: Callable[[], bool], *, urgent: bool = False,
                served: float = 0.0) -> bool:
        """Wait for a turn; False (without one) if ``cancelled()`` becomes true meanwhile.
        ``served``: the compute seconds the fit has had (orders the urgent ones)."""
        me = object()
        with self._cond:
            if urgent:
                at = next((i for i, (u, s, _) in enumerate(self._queue)
                           if not u or s > served), len(self._queue))
            else:
                at = len(self._queue)
            self._queue.insert(at, (urgent, served, me))
            while not (self._busy < self.n and self._queue[0][2] is me):
                if cancelled():
                    self._queue = [q for q in self._queue if q[2] is not me]
                    self._cond.notify_all()
                    return False
                self._cond.wait(0.05)
            self._queue.pop(0)
            self._busy += 1
            self._cond.notify_all()
        return True

    def release(self) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify_all()

    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    def ahead(self) -> int:
        """How many would wait in front of a newcomer of its kind (0: it starts at once)."""
        with self._cond:
            return len(self._queue) + max(0, self._busy - self.n + 1)


SLOTS = ComputeSlots()
URGENT_S = 1.0  # compute seconds during which a fit keeps its place at the front
# … and a session's first fit, until it is done: a page that opens in a class of 30 running
# long fits showed its first model after 70 s (its turn came once per round of theirs)
FIRST_FIT_S = 10.0


class FitWorker:
    """A single long-lived thread that fits the latest request."""

    def __init__(self, events: queue.Queue | None = None):
        self.events = events if events is not None else queue.Queue()
        self._lock = threading.Lock()
        self._pending: FitRequest | None = None
        self._current: FitRequest | None = None
        self._wake = threading.Event()
        self._step = threading.Event()
        self._stop_current = threading.Event()
        self._stop_flag = np.zeros(1, dtype=np.int8)  # _stop_current, for compiled loops
        self._closed = False
        self._finished_one = False  # a first fit stays urgent longer (FIRST_FIT_S)
        self._idle = threading.Event()
        self._idle.set()
        self.stepping = False
        self.paused = False
        self._thread = threading.Thread(target=self._loop, name="explorer-fit", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ control
    def submit(self, request: FitRequest) -> None:
        """Run ``request`` next, cancelling the fit in flight."""
        with self._lock:
            self._pending = request
            self.stepping = request.stepping
            self._idle.clear()
        self._stop_current.set()
        self._stop_flag[0] = 1
        self._step.set()  # release a paused fit so it can see the cancellation
        self._wake.set()

    def stop(self) -> None:
        """Cancel the fit in flight (it stops cleanly at its next iteration)."""
        with self._lock:
            self._pending = None
        self._stop_current.set()
        self._stop_flag[0] = 1
        self._step.set()

    def step(self) -> bool:
        """Release one more iteration of a paused fit; False if nothing is paused."""
        if self.paused:
            self.stepping = True
            self._step.set()
            return True
        return False

    def resume(self) -> bool:
        """Let a paused fit run to the end."""
        if self.paused:
            self.stepping = False
            self._step.set()
            return True
        return False

    def close(self) -> None:
        self._closed = True
        self.stop()
        self._wake.set()

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no fit is running or pending (tests, command line)."""
        return self._idle.wait(timeout)

    # ------------------------------------------------------------------ thread
    def _loop(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            while True:
                with self._lock:
                    request, self._pending = self._pending, None
                    if request is None:
                        self._idle.set()
                        break
                    self._current = request
                    self._stop_current.clear()
                    self._stop_flag = np.zeros(1, dtype=np.int8)
                    self._step.clear()
                self._run(request)
            if self._closed:
                return

    def _run(self, request: FitRequest) -> None:
        token = request.token
        self.events.put(Event("started", token))
        callback = _Callback(self, token, FIRST_FIT_S if not self._finished_one else URGENT_S)
        ahead = SLOTS.ahead()
        if ahead:
            self.events.put(Event("queued", token, ahead))
        if not SLOTS.acquire(callback.cancelled, urgent=True):
            # replaced or stopped while waiting for its turn: nothing was fitted
            self.events.put(Event("cancelled", token))
            return
        callback.since = time.perf_counter()
        try:
            estimator = callback.estimator = request.estimator
            estimator._fitted_version = request.version
            estimator.fit(request.X, request.y, callback=callback, **request.fit_kwargs)
        except FitStopped:  # stopped before its first model (a long graph or kernel)
            self.paused = False
            self.events.put(Event("cancelled", token))
            return
        except Exception as exc:  # reported to the user, never raised into the UI loop
            self.paused = False
            self.events.put(Event("error", token, (exc, traceback.format_exc())))
            return
        finally:
            if callback.holding:
                SLOTS.release()
        self.paused = False
        self._finished_one = True
        kind = "stopped" if getattr(estimator, "stopped_early_", False) else "done"
        self.events.put(Event(kind, token, estimator))


class _Callback:
    """The fit's callback: streams each record, pauses in step mode, and answers the
    solvers' ``cancelled()`` polls so that *Stop* ends a fit within one inner step."""

    def __init__(self, worker: FitWorker, token: int, urgent_s: float = URGENT_S):
        self.worker = worker
        self.token = token
        self.urgent_s = urgent_s  # compute seconds it stays in front of the queue
        self.served = 0.0  # compute seconds so far: time holding a slot, not waiting
        self.since = time.perf_counter()  # when it last got a slot
        self.holding = True  # the fit starts once its compute slot is granted
        self.stop_flag = worker._stop_flag  # read by compiled loops (numba APG)
        self.estimator = None  # the estimator being fitted (for step mode's snapshots)

    def cancelled(self) -> bool:
        return self.worker._stop_current.is_set() or self.worker._closed

    def progress(self, stage: str, fraction: float | None) -> None:
        """How far a long stage before the first record is (the status line shows it)."""
        self.worker.events.put(Event("progress", self.token, (stage, fraction)))

    def warning(self, message: str) -> None:
        """A warning of the fit (e.g. an uncertified master) goes to the message area, not
        to the server's log."""
        self.worker.events.put(Event("warning", self.token, message))

    def _take_turns(self, record) -> bool:
        """Give the CPU to a waiting fit, queue again; False if cancelled meanwhile."""
        if SLOTS.waiting():
            self.served += time.perf_counter() - self.since
            SLOTS.release()
            self.holding = False
            # urgency by the compute it has had, not the wall time it waited: under a
            # class's load a new fit's first second went by in the queue
            if not SLOTS.acquire(self.cancelled, urgent=self.served < self.urgent_s,
                                 served=self.served):
                return False
            self.holding = True
            self.since = time.perf_counter()
        return True

    def __call__(self, record) -> bool:
        w = self.worker
        w.events.put(Event("record", self.token, record))
        if self.cancelled() or not self._take_turns(record):
            return False
        if w.stepping:
            w.paused = True
            if self.estimator is not None:  # the model this step left, for the lessons
                w.events.put(Event("snapshot", self.token,
                                   pickle.loads(pickle.dumps(self.estimator))))
            w.events.put(Event("paused", self.token, record))
            SLOTS.release()  # a paused fit computes nothing: its turn goes to others
            self.holding = False
            while not w._step.wait(0.05):
                if w._closed:
                    return False
            w._step.clear()
            w.paused = False
            if self.cancelled() or not SLOTS.acquire(self.cancelled, urgent=True):
                return False
            self.holding = True
            self.since = time.perf_counter()
        return True


class SweepWorker:
    """Runs a session's background jobs (:mod:`~explorer.ui._jobs`: sweeps, stability runs) in
    a thread, one run at a time, streaming their rows as events of the ``kinds`` (row, done,
    error); the rows share the compute slots with the fits, a point per turn."""

    def __init__(self, events: queue.Queue, kinds=("row", "sweep-done", "sweep-error")):
        self.events = events
        self.kinds = tuple(kinds)
        self._cancel = threading.Event()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self.token = 0

    def start(self, token: int, data, jobs: list) -> None:
        """Run ``jobs`` on ``data`` in order (a new start cancels the run in flight)."""
        self.cancel()
        self.token = token
        self._cancel, self._halt = threading.Event(), threading.Event()
        cancel, halt = self._cancel, self._halt

        def run():
            if not SLOTS.acquire(cancel.is_set):
                return
            holding = True
            try:
                for job in jobs:
                    if cancel.is_set():
                        break

                    def on_row(row, _cancel=cancel):
                        nonlocal holding
                        if _cancel.is_set():
                            return False
                        self.events.put(Event(self.kinds[0], token, row))
                        if SLOTS.waiting():  # one point per turn, like a fit's record
                            SLOTS.release()
                            holding = False
                            if not SLOTS.acquire(_cancel.is_set):
                                return False
                            holding = True
                        return True

                    job(data, on_row, halt.is_set)
            except Exception as exc:
                self.events.put(Event(self.kinds[2], token, (exc, traceback.format_exc())))
                return
            finally:
                if holding:
                    SLOTS.release()
            self.events.put(Event(self.kinds[1], token, cancel.is_set()))

        self._thread = threading.Thread(target=run, name="explorer-sweep", daemon=True)
        self._thread.start()

    def halt(self) -> None:
        """The user's Stop of a stability run: its resampling ends, its result still comes."""
        self._halt.set()

    def close(self) -> None:
        self.cancel()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
