"""The session's fit in flight: the worker it runs on, its token, its records as they arrive,
the model it leaves, and whether it runs, is paused or was stopped (``running`` and
``paused`` are the fields the page watches)."""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from dataclasses import dataclass, field

import param

from . import _status
from ._fit_pool import PooledFitWorker, fit_pool
from ._worker import FitRequest, FitWorker

log = logging.getLogger("explorer.ui")


@dataclass
class Update:
    """What changed since the last poll of a session (for the views)."""

    records: list = field(default_factory=list)
    reset: bool = False
    finished: bool = False
    paused: bool = False  # a stepped fit paused in this poll
    failed: bool = False
    cancelled: bool = False
    queued: int = 0
    progress: tuple | None = None  # (stage, fraction) of a long stage before the first record
    sweep_rows: list = field(default_factory=list)
    sweep_reset: bool = False


def drain(events: queue.Queue):
    """The events queued so far, oldest first, without waiting for more."""
    while True:
        try:
            yield events.get_nowait()
        except queue.Empty:
            return


class FitSession(param.Parameterized):
    """One fit at a time for one session; a new fit makes the old one's events stale.

    ``notify(text, level)`` receives what the user must read (a fit's warnings, its stop,
    its failure). While a fit runs unpaused it counts among the server's running fits (the
    status lines' pace)."""

    running = param.Boolean(default=False)
    paused = param.Boolean(default=False)

    def __init__(self, events: queue.Queue, notify: Callable[[str, str], None], *,
                 start_worker: bool = True):
        super().__init__()
        self.events = events
        self.notify = notify
        self.worker = _worker_for(events) if start_worker else None
        self.token = 0
        self.records: list = []
        self.estimator = None
        self.stopped = False
        self.pending_reset = False
        self.label = ""
        self.queued = 0  # fits ahead of this one for a compute slot (0: running)
        self.snapshot = None  # step mode: a copy of the model the last step left

    def start(self, estimator, X, y, fit_kwargs: dict, *, stepping: bool = False,
              version: int = 0, data_key=None, label: str = "a fit") -> None:
        """Fit ``estimator`` on (X, y) in the worker; the records stream. ``version`` marks
        the model with its data; ``data_key`` names (X, y) for a worker process, which keeps
        them while a session uses them (shared data: one copy for every session; default: this
        session's data of this version); ``label`` names the fit in the server's log if it
        fails."""
        if self.worker is None:
            raise RuntimeError("this session was created without a worker")
        self.token += 1
        self.pending_reset = True
        self.records = []
        self.running = True
        self.paused = False
        self.stopped = False
        self.label = label
        self.queued = 0
        self.snapshot = None
        self.worker.submit(FitRequest(self.token, estimator, X, y, fit_kwargs, stepping=stepping,
                                      version=version,
                                      data_key=data_key or ("own", id(self), version)))

    def resume(self) -> bool:
        """Resume a paused fit; False when none is paused."""
        if self.worker is not None and self.worker.resume():
            self.paused = False
            return True
        return False

    def step(self) -> bool | None:
        """One more outer iteration of a paused fit; None when no fit is paused."""
        if self.worker is not None and self.worker.paused:
            return self.worker.step()
        return None

    def stop(self) -> None:
        """Stop the fit in flight; the model of its last iteration stays."""
        if self.worker is not None:
            self.worker.stop()

    def cancel(self) -> None:
        """Drop the fit in flight: its later events are stale."""
        self.token += 1
        self.stop()
        self.running = False
        self.paused = False

    def forget(self) -> None:
        """No results: the data or the method changed."""
        self.records = []
        self.estimator = None
        self.pending_reset = True

    def show(self, estimator) -> None:
        """Take an estimator fitted elsewhere, with its records, as the session's model."""
        self.estimator = estimator
        self.records = list(getattr(estimator, "history_", []))
        # the views draw these records themselves; no fit is starting, so the next poll must
        # not tell them to start over (it emptied the curves once a notebook went idle)
        self.pending_reset = False

    def wait(self, timeout: float) -> None:
        if self.worker is not None:
            self.worker.wait(timeout)

    def close(self) -> None:
        self.cancel()
        if self.worker is not None:
            self.worker.close()
        _status.set_running(id(self), False)

    @param.depends("running", "paused", watch=True)
    def _count_running(self) -> None:
        _status.set_running(id(self), self.running and not self.paused)

    def apply(self, event, update: Update) -> None:
        """Apply one of the worker's events of the current fit (stale ones are dropped)."""
        if event.token != self.token:
            return
        if event.kind == "record":
            record = event.payload
            if record.iteration == 0 and self.records:
                self.records = []  # the method restarted its run
                update.reset = True
                update.records = []
            self.records.append(record)
            update.records.append(record)
            self.queued = 0
        elif event.kind == "queued":
            self.queued = int(event.payload)
            update.queued = self.queued
        elif event.kind == "progress":
            self.queued = 0
            update.progress = tuple(event.payload)
        elif event.kind == "snapshot":
            self.snapshot = event.payload
        elif event.kind == "warning":
            self.notify(str(event.payload), "warning")
        elif event.kind == "paused":
            self.paused = True
            update.paused = True
        elif event.kind in ("done", "stopped"):
            self.estimator = event.payload
            self.running = self.paused = False
            self.stopped = event.kind == "stopped"
            update.finished = True
            if self.stopped:
                self.notify("Stopped: the model of the last finished iteration is kept.", "info")
        elif event.kind == "cancelled":  # stopped before its turn at the CPU came
            self.running = self.paused = False
            update.finished = update.cancelled = True
        elif event.kind == "error":
            exc, trace = event.payload
            self.running = self.paused = False
            log.error("fit of %s failed:\n%s", self.label, trace)
            self.notify(f"The fit failed: {type(exc).__name__}: {exc}", "error")
            update.finished = update.failed = True


def _worker_for(events: queue.Queue):
    """A worker in the server's pool of fit processes when there is one (``explorer serve``),
    else a thread of this process (notebooks, scripts)."""
    pool = fit_pool()
    return PooledFitWorker(events, pool) if pool is not None else FitWorker(events)
