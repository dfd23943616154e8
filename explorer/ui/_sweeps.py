"""The session's accuracy-versus-#features sweep: which methods, the background run, the rows
as they arrive and the progress the page shows (``status``, ``progress``)."""

from __future__ import annotations

import queue

import pandas as pd
import param

from .. import metrics as M
from ..data import DataError
from ..experiments import check_compatible, one_standard_error
from ..methods import get_method
from ._fit_pool import background_worker
from ._jobs import SweepJob

SWEEP_EVENTS = ("row", "sweep-done", "sweep-error")
CURRENT = "current setting"
SWEEP_FOLDS = 3  # each point scored by 3-fold CV of the training part; the test part waits


class Sweeps(param.Parameterized):
    """One sweep at a time for one session; a new sweep makes the old one's rows stale."""

    status = param.String(default="", doc="the sweep's progress in words")
    progress = param.Integer(default=0, bounds=(0, 100))

    def __init__(self, events: queue.Queue):
        super().__init__()
        self.frame = pd.DataFrame()
        self.worker = background_worker(events, SWEEP_EVENTS)
        self.token = 0
        self.total = 0
        self.pending_reset = False
        self.swept: list[str] = []  # the methods of the sweep in flight (or the last one)
        self.own: tuple[str, object] | None = None  # (method, the user's knob value)
        self.current: str | None = None  # the session's method among the swept ones
        self.current_label = CURRENT  # the legend's name for the current setting's mark

    @staticmethod
    def methods(method: str, baselines, data, params: dict) -> list[str]:
        """``method`` (with the user's ``params``) and the ``baselines`` that can run on
        ``data``."""
        names = [method] + [b for b in baselines if b != method]
        compatible = []
        for name in names:
            try:
                check_compatible(name, data, params if name == method else None)
                compatible.append(name)
            except DataError:
                continue
        return compatible

    def start(self, method: str, baselines, data, params: dict, n_points: int) -> list[str]:
        """Start sweeping ``method`` (its other knobs at the user's ``params``, the user's own
        sparsity value a point of its curve) and the ``baselines`` on ``data``; returns the
        methods swept."""
        self.token += 1
        self.clear()
        measures = M.metrics_for(data.task)
        methods = self.methods(method, baselines, data, params)
        self.swept = list(methods)
        self.total = n_points * len(methods)
        jobs = []
        self.own = None
        self.current = method if method in methods else None
        self.current_label = CURRENT
        for name in methods:
            knobs = dict(params) if name == method else {}
            cls = get_method(name)
            own = knobs.pop(cls.sparsity_param, None)
            knobs.pop("warm_start", None)
            values = None
            if name == method and isinstance(own, (int, float)) and not isinstance(own, bool):
                # the user's own setting is a point of the curve
                split = data.split()
                grid = cls.sweep_values(split.X, split.y, n_points)
                values = sorted(set(grid) | {own})
                self.own = (name, own)
            elif name == method:  # e.g. FGM set by B: the sweep is over k
                self.current_label = f"{CURRENT}: not on the curve ({cls.sparsity_param} unset)"
            jobs.append(SweepJob(name, values, n_points, measures, SWEEP_FOLDS, knobs))
            self.total += len(values) - n_points if values is not None else 0
        self.worker.start(self.token, data, jobs)
        self.status = f"sweeping {', '.join(methods)}: 0/{self.total} points"
        self.progress = 0
        return methods

    def marks(self, metric: str):
        """(current, choice): the user's setting and the one-standard-error choice of the
        swept current method, as (#features, mean measure) points, or None."""
        if self.current is None or self.frame.empty or metric not in self.frame:
            return None, None
        rows = self.frame[self.frame["method"].astype(str) == self.current]
        current = None
        if self.own is not None:
            mine = rows[rows["value"] == self.own[1]]
            if not mine.empty and mine["n_selected"].iloc[0] > 0:
                current = (float(mine["n_selected"].iloc[0]), float(mine[metric].iloc[0]))
        best = one_standard_error(rows, metric)
        choice = None if best is None else (float(best["n_selected"]), float(best[metric]))
        return current, choice

    def apply(self, event, update) -> str | None:
        """Take one sweep event into the frame and the progress; returns the error's text
        when the sweep failed."""
        if event.kind == "row":
            row = event.payload
            update.sweep_rows.append(row)
            self.frame = pd.concat([self.frame, pd.DataFrame([row])], ignore_index=True)
            done = len(self.frame)
            self.status = f"sweep: {done}/{self.total} points"
            self.progress = int(100 * done / max(1, self.total))
        elif event.kind == "sweep-done":
            self.status, self.progress = f"sweep finished: {len(self.frame)} points", 100
        else:
            exc, _ = event.payload
            self.status = f"sweep failed: {exc}"
            return self.status
        return None

    def clear(self) -> None:
        self.frame = pd.DataFrame()
        self.pending_reset = True
