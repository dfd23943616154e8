"""Fits, sweeps and stability runs outside the server's interpreter: a pool of worker
processes, one per core.

The server's event loop only serves pages and draws. Each session is placed on the worker
process holding the fewest sessions; there a :class:`~explorer.ui._worker.FitWorker` thread
runs its fits exactly as it would in the server, and the process's compute slots (one per
core it owns) give the CPU to its fits in turns, a record at a time, a fit a user just started
first. Records, warnings and the fitted model come back over a pipe into the session's event
queue; *Stop*, *Step* and *Run* go the other way and reach the fit within one inner step.

A worker process that dies is replaced at once: the sessions whose fit it was computing get an
error in their message area, the others are moved to the new process without noticing.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing as mp
import os
import pickle
import threading
import traceback
from collections import defaultdict
from itertools import count

from ._worker import Event, FitRequest, SweepWorker

log = logging.getLogger("explorer.ui")

TERMINAL = ("done", "stopped", "cancelled", "error")
WORKER_NICENESS = 10  # the worker processes yield the cores to the server's event loop
_POOL: FitPool | None = None
_POOL_LOCK = threading.Lock()


def configured_processes() -> int:
    """Worker processes for fits: ``EXPLORER_FIT_PROCESSES`` (``explorer serve
    --fit-processes``); 0, the default outside ``explorer serve``, fits in the server's own
    threads (notebooks, scripts, tests of the state)."""
    try:
        return max(0, int(os.environ.get("EXPLORER_FIT_PROCESSES", "0")))
    except ValueError:
        return 0


def start_fit_pool(n: int | None = None) -> FitPool | None:
    """The server's pool of ``n`` (default: configured) worker processes, started once."""
    global _POOL
    n = configured_processes() if n is None else n
    with _POOL_LOCK:
        if _POOL is None and n > 0:
            _POOL = FitPool(n)
        return _POOL


def fit_pool() -> FitPool | None:
    """The running pool, or None when fits run in the server's threads."""
    return _POOL if _POOL is not None else start_fit_pool()


# ---------------------------------------------------------------------- the worker process
class _Outbox:
    """The events of one session's fits, sent to the server (a queue for the FitWorker)."""

    def __init__(self, sid: int, conn, lock: threading.Lock):
        self.sid, self.conn, self.lock = sid, conn, lock

    def put(self, event: Event) -> None:
        if event.kind == "error":
            exc, trace = event.payload
            try:
                pickle.dumps(exc)
            except Exception:  # an exception that cannot travel is sent as its text
                event = Event("error", event.token, (RuntimeError(f"{type(exc).__name__}: "
                                                                  f"{exc}"), trace))
        with self.lock:
            self.conn.send((self.sid, event))


def _serve(conn, slots: int) -> None:  # pragma: no cover - runs in the worker process
    """The worker process: one FitWorker per session placed here, commands from the pipe."""
    from threadpoolctl import threadpool_limits

    from . import _worker

    os.nice(WORKER_NICENESS)  # pages and drawing first: a fit waits, a click does not
    threadpool_limits(max(1, slots))
    _worker.SLOTS = _worker.ComputeSlots(slots)
    _worker.warm_up_kernels()
    lock = threading.Lock()
    workers: dict[int, _worker.FitWorker] = {}
    data: dict = {}  # data key → (X, y), kept while a session of this process uses them
    while True:
        try:
            command, sid, payload = conn.recv()
        except (EOFError, OSError):
            break
        if command == "exit":
            break
        if command == "open":  # payload: None for a fit worker, the event kinds for jobs
            outbox = _Outbox(sid, conn, lock)
            workers[sid] = _worker.FitWorker(outbox) if payload is None else \
                _worker.SweepWorker(outbox, kinds=payload)
        elif command == "jobs":
            token, dataset, jobs = payload
            workers[sid].start(token, dataset, jobs)
        elif command in ("cancel", "halt"):
            getattr(workers[sid], command)()
        elif command == "close":
            worker = workers.pop(sid, None)
            if worker is not None:
                worker.close()
        elif command == "forget":
            data.pop(payload, None)
        elif command == "submit":
            request: FitRequest = payload
            if request.X is None and request.data_key not in data:
                _Outbox(sid, conn, lock).put(Event("error", request.token, (RuntimeError(
                    "the worker process lost this session's data: press Run again"), "")))
                continue
            if request.X is None:  # the unlabeled rows travel and stay with X and y
                request.X, request.y, unlabeled = data[request.data_key]
                if unlabeled is not None and "X_unlabeled" in request.fit_kwargs:
                    request.fit_kwargs = {**request.fit_kwargs, "X_unlabeled": unlabeled}
            else:
                data[request.data_key] = (request.X, request.y,
                                          request.fit_kwargs.get("X_unlabeled"))
            workers[sid].submit(request)
        elif command in ("stop", "step", "resume"):
            getattr(workers[sid], command)()
        elif command == "crash":  # tests: a worker process that dies in the middle of a fit
            os._exit(3)
    for worker in workers.values():
        worker.close()


# ---------------------------------------------------------------------- the server's side
class _Host:
    """One worker process, its pipe and the sessions placed on it."""

    def __init__(self, pool: FitPool, slots: int):
        self.pool = pool
        self.slots = slots
        ctx = mp.get_context("spawn")  # no fork of a server with threads
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, slots), daemon=True,
                                   name="explorer-fit-process")
        self.process.start()
        child.close()
        self.send_lock = threading.RLock()  # also orders a submit after the data it relies on
        self.sessions: set[int] = set()
        self.data_users: dict = {}  # data key → the sessions whose last fit used it
        self.reader = threading.Thread(target=self._read, name="explorer-fit-pipe", daemon=True)
        self.reader.start()

    def send(self, command: str, sid: int, payload=None) -> bool:
        try:
            with self.send_lock:
                self.conn.send((command, sid, payload))
            return True
        except (OSError, ValueError, BrokenPipeError):
            return False

    def _read(self) -> None:
        while True:
            try:
                sid, event = self.conn.recv()
            except (EOFError, OSError):
                break
            self.pool.deliver(sid, event)
        self.pool.lost(self)

    def stop(self, timeout: float = 5.0) -> None:
        self.send("exit", 0)
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(1.0)
        self.conn.close()


class FitPool:
    """``n`` worker processes, each computing ``slots`` fits at once (default: its share of
    the cores); sessions are placed on the least loaded one."""

    def __init__(self, n: int, slots: int | None = None):
        self.n = int(n)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
        self.slots = int(slots) if slots else max(1, cores // self.n)  # fits computing at once
        self._lock = threading.Lock()
        self._ids = count(1)
        self.workers: dict[int, _PooledWorker] = {}
        self.hosts = [_Host(self, self.slots) for _ in range(self.n)]
        self.replaced = 0
        self.closed = False
        atexit.register(self.close)

    # placement
    def open(self, worker: _PooledWorker) -> None:
        with self._lock:
            sid = next(self._ids)
            host = min(self.hosts, key=self._fits_on)
            host.sessions.add(sid)
            worker.sid, worker.host = sid, host
            self.workers[sid] = worker
        host.send("open", sid, worker.kinds)

    def _fits_on(self, host: _Host) -> int:
        """The sessions' fit workers on ``host`` (its load: their jobs go where there is room)."""
        return sum(1 for sid in host.sessions
                   if sid in self.workers and self.workers[sid].kinds is None)

    def release(self, worker: _PooledWorker) -> None:
        with self._lock:
            self.workers.pop(worker.sid, None)
            worker.host.sessions.discard(worker.sid)
            forget = self._leave_data(worker)
        worker.host.send("close", worker.sid)
        if forget is not None:
            worker.host.send("forget", 0, forget)

    def use_data(self, worker: PooledFitWorker, key) -> tuple[bool, object]:
        """Mark ``key`` as the data of the session's next fit: (whether its process already
        holds them, a key that no session of the process uses any more)."""
        with self._lock:
            users = worker.host.data_users
            held = bool(users.get(key))
            forget = self._leave_data(worker) if worker.data_key != key else None
            users.setdefault(key, set()).add(worker.sid)
            worker.data_key = key
        return held, forget

    @staticmethod
    def _leave_data(worker: _PooledWorker):
        key, users = worker.data_key, worker.host.data_users
        worker.data_key = None
        if key is None or key not in users:
            return None
        users[key].discard(worker.sid)
        if users[key]:
            return None
        del users[key]
        return key

    # events
    def deliver(self, sid: int, event: Event) -> None:
        worker = self.workers.get(sid)
        if worker is not None:
            worker.receive(event)

    def lost(self, host: _Host) -> None:
        """A worker process ended: replace it; tell only the sessions whose fit it held."""
        if self.closed:
            return
        host.process.join(2.0)
        code = host.process.exitcode
        log.error("a fit worker process ended (exit code %s); starting another", code)
        with self._lock:
            if host not in self.hosts:
                return
            fresh = _Host(self, self.slots)
            self.hosts[self.hosts.index(host)] = fresh
            self.replaced += 1
            moved = [self.workers[sid] for sid in host.sessions if sid in self.workers]
            fresh.sessions.update(w.sid for w in moved)
            for worker in moved:  # the new process holds no data yet
                worker.data_key = None
        for worker in moved:
            worker.moved_to(fresh, code)
            fresh.send("open", worker.sid, worker.kinds)

    def pids(self) -> list[int]:
        return [h.process.pid for h in self.hosts]

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for host in self.hosts:
            host.stop()


class _PooledWorker:
    """A session's place in a worker process of the pool: its id there, the process, and
    whether its work is done; events from the pipe arrive in :meth:`receive`."""

    kinds = None  # None: the worker process makes a FitWorker for it; else a SweepWorker's

    def __init__(self, events, pool: FitPool):
        self.events = events
        self.pool = pool
        self.sid = 0
        self.host: _Host | None = None
        self.data_key = None    # the data of this session's last fit, on its process
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        pool.open(self)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.pool.release(self)
        self._idle.set()

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._idle.wait(timeout)

    def moved_to(self, host: _Host, code) -> None:
        """The worker process died; the session now lives on ``host``."""
        with self._lock:
            self.host = host
        self._report_lost(code)

    # what the session is told when the process running its work dies
    error_kind, lost_work, lost_next = "error", "this fit", "press Run to fit again"

    def _lost_token(self):
        return self.token

    def _report_lost(self, code) -> None:
        """The work in flight ended with its process: its session gets an error event."""
        token = self._lost_token()
        if self._idle.is_set() or token is None:
            return
        self.paused = False
        exc = RuntimeError(f"the worker process running {self.lost_work} stopped"
                           + (f" (exit code {code})" if code is not None else "")
                           + f"; a new one has taken its place: {self.lost_next}")
        self.events.put(Event(self.error_kind, token, (exc, "".join(
            traceback.format_exception_only(type(exc), exc)))))
        self._idle.set()


class PooledFitWorker(_PooledWorker):
    """A session's fit worker in a worker process, with :class:`FitWorker`'s interface."""

    def __init__(self, events, pool: FitPool):
        self._token = None      # the latest submitted fit
        self.paused = False
        self.stepping = False
        super().__init__(events, pool)

    # ------------------------------------------------------------------ control
    def submit(self, request: FitRequest) -> None:
        with self._lock:
            self._token = request.token
            self._idle.clear()
            self.paused = False
            self.stepping = request.stepping
            host = self.host
        with host.send_lock:  # no other submit may pass this one's data on the pipe
            held, forget = self.pool.use_data(self, request.data_key)
            if held:
                request = _without_data(request)
            if forget is not None:
                host.send("forget", 0, forget)
            sent = host.send("submit", self.sid, request)
        if not sent:
            self._report_lost(None)

    def stop(self) -> None:
        self.host.send("stop", self.sid)

    def step(self) -> bool:
        if self.paused:
            self.paused = False
            self.stepping = True
            self.host.send("step", self.sid)
            return True
        return False

    def resume(self) -> bool:
        if self.paused:
            self.paused = False
            self.stepping = False
            self.host.send("resume", self.sid)
            return True
        return False

    # ------------------------------------------------------------------ from the pipe
    def receive(self, event: Event) -> None:
        if event.kind == "paused":
            self.paused = True
        self.events.put(event)
        if event.kind in TERMINAL and event.token == self._token:
            self.paused = False
            self._idle.set()

    def _lost_token(self):
        return self._token


class PooledSweepWorker(_PooledWorker):
    """A session's background jobs (sweeps, stability runs) in a worker process, with
    :class:`~explorer.ui._worker.SweepWorker`'s interface: they take turns there with the
    fits, and the server's interpreter only receives their rows (jobs carry their data)."""

    lost_work, lost_next = "this sweep or stability run", "start it again"

    def __init__(self, events, pool: FitPool, kinds):
        self.kinds = tuple(kinds)
        self.error_kind = self.kinds[2]
        self.token = 0
        self.paused = False  # never: a job runs to its end or is cancelled
        super().__init__(events, pool)

    def start(self, token: int, data, jobs: list) -> None:
        self.token = token
        self._idle.clear()
        if not self.host.send("jobs", self.sid, (token, data, jobs)):
            self._report_lost(None)

    def cancel(self) -> None:
        self.host.send("cancel", self.sid)
        self._idle.set()  # a later start makes whatever this run still sends stale

    def halt(self) -> None:
        self.host.send("halt", self.sid)

    def receive(self, event: Event) -> None:
        self.events.put(event)
        if event.kind in self.kinds[1:] and event.token == self.token:
            self._idle.set()



def background_worker(events, kinds):
    """A session's worker for sweeps and stability runs: in the server's pool of worker
    processes when there is one (``explorer serve``), else a thread of this process."""
    pool = fit_pool()
    return PooledSweepWorker(events, pool, kinds) if pool is not None else \
        SweepWorker(events, kinds=kinds)


def _without_data(request: FitRequest) -> FitRequest:
    from dataclasses import replace

    kwargs = request.fit_kwargs
    if kwargs.get("X_unlabeled") is not None:  # held with X and y: only its place is sent
        kwargs = {**kwargs, "X_unlabeled": None}
    return replace(request, X=None, y=None, fit_kwargs=kwargs)


def sessions_per_process(pool: FitPool) -> dict[int, int]:
    """pid → sessions placed on it (the load benchmark reports it)."""
    placed = defaultdict(int)
    for host in pool.hosts:
        placed[host.process.pid] = len(host.sessions)
    return dict(placed)
