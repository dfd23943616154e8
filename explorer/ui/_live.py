"""A fit watched live from a notebook: the fit runs in a background thread, the cell returns at
once, and its records reach the views on the kernel's event loop.

Why not ``fit(..., callback=lambda r: view.push([r]))`` in a cell? It streams only if the
view's output was already connected when the fit's cell started: a view displayed by the
cell just before (Run All, or two cells queued) opens its connection only when the kernel is
next idle, so every update waits for the fit's end (and arrives as a burst). With
:class:`LiveFit` the kernel is idle while the fit runs, connections open, and the records are
pushed from the event loop, in batches at most every ``every`` seconds.
"""

from __future__ import annotations

import asyncio
import threading

from tornado.ioloop import IOLoop

SETTLE_S = 0.5  # after the fit's end, when its views are redrawn from every record


class LiveFit:
    """``estimator.fit(X, y, **fit_kwargs)`` in a background thread, each record pushed to
    ``views`` (objects with ``push(records)``, e.g. :class:`ConvergenceView`).

    Attributes: ``estimator`` (fitted once :meth:`result` returns), ``records``, ``error``.
    ``stop()`` asks the fit to end after its current iteration (the model so far is kept).
    Outside a running event loop (a plain script) the records are pushed from the fit's
    thread as they come."""

    def __init__(self, estimator, X, y, views, every: float = 0.1, **fit_kwargs):
        if "callback" in fit_kwargs:
            raise TypeError("LiveFit sets the fit's callback itself; pass the views instead")
        if not every > 0:
            raise ValueError(f"every must be a positive number of seconds, got {every!r}")
        self.estimator = estimator
        self.views = list(views)
        self.every = float(every)
        self.records: list = []
        self.error: BaseException | None = None
        self._pending: list = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        try:
            asyncio.get_running_loop()
            self._loop = IOLoop.current()
        except RuntimeError:  # no event loop runs here: push from the fit's thread
            self._loop = None
        self._thread = threading.Thread(target=self._run, args=(X, y, fit_kwargs),
                                        name="explorer-live-fit", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()

    def result(self, timeout: float | None = None):
        """Wait for the fit (blocking the cell, and so the live updates) and return the
        fitted estimator; re-raises the fit's error."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the fit is still running after {timeout} s")
        if self.error is not None:
            raise self.error
        return self.estimator

    # ----------------------------------------------------------------- the fit's thread
    def _run(self, X, y, fit_kwargs) -> None:
        try:
            self.estimator.fit(X, y, callback=self._record, **fit_kwargs)
        except BaseException as exc:  # reported by result(), never lost in the thread
            self.error = exc
        finally:
            self._schedule(0.0)
            if self._loop is not None:  # once settled, every record drawn from the whole list:
                # a notebook's comm can drop a stream message sent while cells start
                self._loop.add_callback(self._loop.call_later, SETTLE_S, self._settle)

    def _record(self, record) -> bool:
        with self._lock:
            self.records.append(record)
            self._pending.append(record)
            first = len(self._pending) == 1
        if first:
            self._schedule(self.every)
        return not self._stop.is_set()

    def _schedule(self, delay: float) -> None:
        if self._loop is None:
            self._flush()
        else:  # add_callback is the one IOLoop method safe to call from another thread
            self._loop.add_callback(self._loop.call_later, delay, self._flush)

    # ----------------------------------------------------------------- the event loop
    def _settle(self) -> None:
        self._flush()
        for view in self.views:
            if hasattr(view, "replace"):
                view.replace(list(self.records))

    def _flush(self) -> None:
        with self._lock:
            records, self._pending = self._pending, []
        if records:
            for view in self.views:
                view.push(records)
