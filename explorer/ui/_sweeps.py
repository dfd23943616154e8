"""The session's accuracy-versus-#features sweep: which methods, the background run, and the
rows as they arrive (the state owns the widgets' status fields; this part owns the run)."""

from __future__ import annotations

import queue

import pandas as pd

from .. import metrics as M
from ..data import DataError
from ..experiments import check_compatible, one_standard_error
from ..methods import get_method
from ._fit_pool import background_worker
from ._jobs import SweepJob

SWEEP_EVENTS = ("row", "sweep-done", "sweep-error")
CURRENT = "current setting"
SWEEP_FOLDS = 3  # each point scored by 3-fold CV of the training part; the test part waits


class Sweeps:
    """One sweep at a time for one session; a new sweep makes the old one's rows stale."""

    def __init__(self, events: queue.Queue):
        self.frame = pd.DataFrame()
        self.worker = background_worker(events, SWEEP_EVENTS)
        self.token = 0
        self.total = 0
        self.pending_reset = False
        self.swept: list[str] = []  # the methods of the sweep in flight (or the last one)
        self.own: tuple[str, object] | None = None  # (method, the user's knob value)
        self.current: str | None = None  # the session's method among the swept ones
        self.current_label = CURRENT  # the legend's name for the current setting's mark

    def methods(self, state) -> list[str]:
        """The current method and the chosen baselines that can run on the data."""
        names = [state.method] + [b for b in state.baselines if b != state.method]
        compatible = []
        for name in names:
            try:
                check_compatible(name, state.data,
                                 state.current_params() if name == state.method else None)
                compatible.append(name)
            except DataError:
                continue
        return compatible

    def start(self, state, n_points: int) -> list[str]:
        """Start sweeping the methods on the state's data; returns their names."""
        self.token += 1
        self.clear()
        measures = M.metrics_for(state.data.task)
        methods = self.methods(state)
        self.swept = list(methods)
        self.total = n_points * len(methods)
        data = state.data
        jobs = []
        self.own = None
        self.current = state.method if state.method in methods else None
        self.current_label = CURRENT
        for name in methods:
            params = dict(state.current_params()) if name == state.method else {}
            cls = get_method(name)
            own = params.pop(cls.sparsity_param, None)
            params.pop("warm_start", None)
            values = None
            if name == state.method and isinstance(own, (int, float)) and \
                    not isinstance(own, bool):
                # the user's own setting is a point of the curve
                split = data.split()
                grid = cls.sweep_values(split.X, split.y, n_points)
                values = sorted(set(grid) | {own})
                self.own = (name, own)
            elif name == state.method:  # e.g. FGM set by B: the sweep is over k
                self.current_label = f"{CURRENT}: not on the curve ({cls.sparsity_param} unset)"
            jobs.append(SweepJob(name, values, n_points, measures, SWEEP_FOLDS, params))
            self.total += len(values) - n_points if values is not None else 0
        self.worker.start(self.token, data, jobs)
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

    def apply(self, event, update) -> tuple[str, int, str | None]:
        """Take one sweep event into the frame; returns (status, progress %, error text)."""
        if event.kind == "row":
            row = event.payload
            update.sweep_rows.append(row)
            self.frame = pd.concat([self.frame, pd.DataFrame([row])], ignore_index=True)
            done = len(self.frame)
            return (f"sweep: {done}/{self.total} points",
                    int(100 * done / max(1, self.total)), None)
        if event.kind == "sweep-done":
            return f"sweep finished: {len(self.frame)} points", 100, None
        exc, _ = event.payload
        return f"sweep failed: {exc}", 0, f"sweep failed: {exc}"

    def clear(self) -> None:
        self.frame = pd.DataFrame()
        self.pending_reset = True
