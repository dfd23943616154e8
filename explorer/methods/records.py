"""What a method reports and how the fit hears it (DESIGN.md, "The estimator contract").

* :class:`IterationRecord` — what a method reports after each iteration.
* :class:`Recorder` — times the fit (the callback's own time subtracted), keeps the history and
  carries the stop request back to the solver; compiled loops hand it batches
  (``emit_many``) or deferred batches (``emit_deferred``, built when read: :func:`built`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from sklearn.exceptions import ConvergenceWarning


class FitCallback(Protocol):
    """What ``fit(callback=...)`` takes: called with each :class:`IterationRecord`; ``False``
    stops the fit after that iteration. A callback object may also have (read when present,
    the app's live view has all three):

    ``stop_flag``
        a one-element int8 array another thread sets to 1 to stop inside a compiled loop;
    ``cancelled() -> bool``
        polled inside long inner loops (a user's *Stop*);
    ``warning(message)``
        receives the fit's warnings instead of :func:`warnings.warn`;
    ``progress(stage, fraction)``
        hears how far a long stage before the first record is (FS-Manifold's graph and
        kernel on many rows): ``stage`` in words, ``fraction`` in [0, 1] or None if unknown.
    """

    def __call__(self, record: IterationRecord) -> bool | None: ...


# FitCallback's optional members
OPTIONAL_CALLBACK = ("stop_flag", "cancelled", "warning", "progress")
Callback = FitCallback | Callable[["IterationRecord"], Any]
_INDEX = np.dtype(np.int64)  # the dtype of a record's selected indices
# the info keys behind IterationRecord's member, refinement and stage (the writers use these)
MEMBER_KEY, REFINE_KEY, STAGE_KEY = "class", "refine", "stage"


class FitStopped(Exception):
    """A fit stopped on request before its first record: there is no model to keep (a stop
    during FS-Manifold's graph or kernel on many rows)."""


@dataclass(frozen=True)
class IterationRecord:
    """What one iteration of a method did (one outer iteration for cutting-plane methods).

    Attributes
    ----------
    iteration : int
        0-based index over the whole fit (continues across one-vs-rest classes).
    inner_steps : int
        Inner solver steps spent in this iteration.
    objective : float
        The method's objective after this iteration (its own definition, documented per method).
    n_selected : int
        Number of selected features (or groups/generated features, as the method defines).
    selected : ndarray of int
        Indices of the selected input features.
    elapsed : float
        Seconds since the fit started, the callback's own time excluded.
    lower, upper : float or None
        Certified bounds on the optimal objective where the method has them.
    inner_measure : float or None
        The inner solver's certified optimality measure when it stopped (relative duality
        gap, or relative KKT residual where there is no cheap dual; see
        :mod:`explorer.optim.stopping`); None for methods without one (FSA).
    info : mapping
        Method-specific details (FGM's inner objective trace and new block, FSA's M_e and
        killed features, GrFL's violation, …).
    """

    iteration: int
    inner_steps: int
    objective: float
    n_selected: int
    selected: np.ndarray
    elapsed: float
    lower: float | None = None
    upper: float | None = None
    inner_measure: float | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def member(self):
        """The class whose one-vs-rest fit made this record (its counts and objective are that
        binary fit's), or None for a record of the whole model."""
        return self.info.get(MEMBER_KEY) if self.info else None

    @property
    def refinement(self) -> str | None:
        """How the record cut the path to k features: ``"paper"`` (largest |w|, the paper's
        algorithm) or ``"auto"`` (FGM's best-subset refinement); None for a path's record."""
        return self.info.get(REFINE_KEY) if self.info else None

    @property
    def stage(self) -> str | None:
        """A stage of the fit outside its iterations (``"shared cut"``: one-vs-rest's
        cut of every class to the same k features), or None."""
        return self.info.get(STAGE_KEY) if self.info else None

    @property
    def gap(self) -> float | None:
        """``upper - lower`` when both bounds exist."""
        if self.lower is None or self.upper is None:
            return None
        return self.upper - self.lower


class Recorder:
    """Collects :class:`IterationRecord` objects, calls the user's callback, carries stop.

    The solver calls :meth:`emit` once per iteration and must stop (leaving a usable model)
    when it returns ``False``. Time spent inside the callback is not counted in ``elapsed``.
    """

    def __init__(self, callback: Callback | None = None, *, info: Mapping | None = None,
                 parent: Recorder | None = None):
        self.callback = callback
        self.info = dict(info or {})
        self.parent = parent
        self._history: list = []  # records, and batches a compiled loop deferred (_Deferred)
        self._count = 0  # records written to this root so far (deferred ones included)
        self.warnings: list[tuple[type[Warning], str]] = []
        self.stopped = False
        self.stages: dict[str, float | None] = {}  # long stages before the records (progress)
        self._t0 = time.perf_counter()
        self._callback_time = 0.0

    def elapsed(self) -> float:
        """Seconds since the start, callback time excluded."""
        if self.parent is not None:
            return self.parent.elapsed()
        return time.perf_counter() - self._t0 - self._callback_time

    def reset(self) -> None:
        """Forget the records so far (a method restarting its run); numbering restarts at 0,
        which is how a streaming view knows to clear its plots."""
        root = self._root()
        root._history.clear()
        self._history.clear()
        root._count = 0

    @property
    def history(self) -> list[IterationRecord]:
        """The records so far (deferred batches built now)."""
        return built(self._history)

    def child(self, **info) -> Recorder:
        """A recorder whose records go to this one with ``info`` added (one-vs-rest members)."""
        return Recorder(info={**self.info, **info}, parent=self)

    def _root(self) -> Recorder:
        return self if self.parent is None else self.parent._root()

    @property
    def should_stop(self) -> bool:
        return self._root().stopped

    def stop(self) -> None:
        """Mark the fit as stopped by the user: a compiled loop that saw ``stop_flag`` before
        its first step of a chunk has no record left to carry the callback's answer."""
        self._root().stopped = True

    def stop_flag(self):
        """The callback's ``stop_flag`` (a one-element int8 array another thread sets to 1 on
        *Stop*), for compiled loops that cannot call :meth:`interrupted`; None without one."""
        return getattr(self._root().callback, "stop_flag", None)

    def interrupted(self) -> bool:
        """Whether the fit must stop now, polled by inner loops between their steps.

        True once a callback returned ``False``, or as soon as the callback's optional
        ``cancelled()`` method says so: a callback object with that method (the app's *Stop*)
        ends a fit within one inner step instead of at the next record."""
        root = self._root()
        if not root.stopped:
            probe = getattr(root.callback, "cancelled", None)
            if probe is not None and probe():
                root.stopped = True
        return root.stopped

    def progress(self, stage: str, fraction: float | None = None) -> bool:
        """Tell the callback how far a long stage before the first record is (its optional
        ``progress(stage, fraction)``) and keep it in :attr:`stages`; False when the fit must
        stop now (:meth:`interrupted`)."""
        root = self._root()
        value = None if fraction is None else float(min(max(fraction, 0.0), 1.0))
        root.stages[stage] = value
        report = getattr(root.callback, "progress", None)
        if callable(report):
            start = time.perf_counter()
            try:
                report(stage, value)
            finally:
                root._callback_time += time.perf_counter() - start
        return not self.interrupted()

    def warn(self, message: str, category: type[Warning] = ConvergenceWarning) -> None:
        """Keep a warning for the end of the fit (``fit`` issues it, or hands it to a
        callback with a ``warning(message)`` method, e.g. the app's message area)."""
        root = self._root()
        if (category, message) not in root.warnings:
            root.warnings.append((category, message))

    def emit(self, *, objective: float, n_selected: int, selected, inner_steps: int = 0,
             lower: float | None = None, upper: float | None = None,
             inner_measure: float | None = None, info: Mapping | None = None) -> bool:
        """Record one iteration; return ``False`` when the fit must stop now."""
        return self.emit_many(
            objective=(objective,), selected=(selected,), info=(dict(info or {}),),
            inner_steps=inner_steps, n_selected=(n_selected,),
            bounds=None if lower is None and upper is None else ((lower, upper),),
            inner_measure=None if inner_measure is None else (inner_measure,)) is None

    def emit_many(self, *, objective: Sequence[float], selected: Sequence, info: Sequence,
                  inner_steps: int = 0, n_selected: Sequence[int] | None = None,
                  bounds: Sequence | None = None,
                  inner_measure: Sequence[float] | None = None) -> int | None:
        """Record a batch of iterations a compiled loop ran together (FSA's chunks of steps):
        the same records and callbacks as one :meth:`emit` each, in order. ``n_selected``
        defaults to each ``selected``'s size, ``bounds`` are (lower, upper) pairs; the ``info``
        dicts are taken over, not copied. Returns None when the fit goes on, else the batch
        index of the record after which it must stop (the records after it are not written)."""
        root = self._root()
        own = None if self is root else self._history
        clock = [root.elapsed()]  # one clock read per batch when no callback runs in between
        records = _records(root._count, clock, int(inner_steps), self.info, objective, selected,
                           info, n_selected, bounds, inner_measure)
        for index, record in enumerate(records):
            root._history.append(record)
            root._count += 1
            if own is not None:
                own.append(record)
            if root.callback is not None and not root.stopped:
                start = time.perf_counter()
                try:
                    answer = root.callback(record)
                finally:
                    root._callback_time += time.perf_counter() - start
                if answer is False:
                    root.stopped = True
                clock[0] = root.elapsed()  # the next record's (built after this callback)
            if root.stopped:
                return index
        return None

    def emit_deferred(self, count: int, build: Callable[[], tuple[Sequence, Sequence, Sequence]],
                      *, inner_steps: int = 0) -> int | None:
        """Record ``count`` iterations whose ``(objective, selected, info)`` sequences
        ``build()`` returns (as :meth:`emit_many` takes them). With a callback to call, or a
        stop requested, that is :meth:`emit_many` now; otherwise the records are built when
        first read (:attr:`history`, the estimator's ``history_``), with the numbers and clock
        they would have had: a compiled loop writing hundreds of records per millisecond-long
        fit (FSA) does not build them for a caller that never reads them."""
        root = self._root()
        if root.callback is not None or root.stopped:
            objective, selected, info = build()
            return self.emit_many(objective=objective, selected=selected, info=info,
                                  inner_steps=inner_steps)
        batch = _Deferred(root._count, root.elapsed(), int(inner_steps), dict(self.info), build)
        root._history.append(batch)
        root._count += int(count)
        if self is not root:
            self._history.append(batch)
        return None


class _Deferred:
    """Records :meth:`Recorder.emit_deferred` will build when first read (once: a member's
    history and its root's share the records)."""

    __slots__ = ("start", "elapsed", "inner_steps", "extra", "build", "records")

    def __init__(self, start, elapsed, inner_steps, extra, build):
        self.start, self.elapsed, self.inner_steps = start, elapsed, inner_steps
        self.extra, self.build, self.records = extra, build, None

    def materialize(self) -> list[IterationRecord]:
        if self.records is None:
            objective, selected, info = self.build()
            self.records = list(_records(self.start, [self.elapsed], self.inner_steps,
                                         self.extra, objective, selected, info))
            self.build = None  # drop what the records were built from
        return self.records


def built(history: list) -> list[IterationRecord]:
    """``history`` (a recorder's list) with its deferred batches replaced, in place, by their
    records."""
    if any(type(item) is _Deferred for item in history):
        flat = []
        for item in history:
            if type(item) is _Deferred:
                flat.extend(item.materialize())
            else:
                flat.append(item)
        history[:] = flat
    return history


def _records(first, clock, inner_steps, extra, objective, selected, info, n_selected=None,
             bounds=None, inner_measure=None):
    """The :class:`IterationRecord` objects of a batch, numbered from ``first``, each built
    when the one before it was taken (its ``elapsed`` is ``clock[0]`` then)."""
    new = object.__new__
    checked = None
    for index, (value, chosen, details) in enumerate(zip(objective, selected, info)):
        if chosen is not checked:  # consecutive records often share one array
            if (type(chosen) is not np.ndarray or chosen.dtype != _INDEX
                    or chosen.flags.writeable or chosen.base is not None):
                chosen = np.array(chosen, dtype=_INDEX)  # a read-only owner to share
                chosen.setflags(write=False)
            checked = chosen
        lower, upper = (None, None) if bounds is None else bounds[index]
        measure = None if inner_measure is None else inner_measure[index]
        # the frozen dataclass's __init__ sets each field through object.__setattr__
        # (2 µs a record; FSA writes 500 per 10 ms fit): fill the fields directly
        record = new(IterationRecord)
        record.__dict__.update(
            iteration=first + index, inner_steps=inner_steps, objective=float(value),
            n_selected=chosen.size if n_selected is None else int(n_selected[index]),
            selected=chosen, elapsed=clock[0],
            lower=None if lower is None else float(lower),
            upper=None if upper is None else float(upper),
            inner_measure=None if measure is None else float(measure),
            info={**extra, **details} if extra else details)
        yield record
