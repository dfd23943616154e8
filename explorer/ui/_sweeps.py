"""The session's accuracy-versus-#features sweep: which methods, the background run, and the
rows as they arrive (the state owns the widgets' status fields; this part owns the run)."""

from __future__ import annotations

import queue

import pandas as pd

from .. import metrics as M
from ..data import DataError
from ..experiments import check_compatible
from ..methods import get_method
from ._worker import SweepWorker

SWEEP_EVENTS = ("row", "sweep-done", "sweep-error")


class Sweeps:
    """One sweep at a time for one session; a new sweep makes the old one's rows stale."""

    def __init__(self, events: queue.Queue):
        self.frame = pd.DataFrame()
        self.worker = SweepWorker(events)
        self.token = 0
        self.total = 0
        self.pending_reset = False
        self.swept: list[str] = []  # the methods of the sweep in flight (or the last one)

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
        from ..experiments import sweep as run_sweep

        self.token += 1
        self.clear()
        measures = M.metrics_for(state.data.task)
        methods = self.methods(state)
        self.swept = list(methods)
        self.total = n_points * len(methods)
        data = state.data
        jobs = []
        for name in methods:
            params = dict(state.current_params()) if name == state.method else {}
            params.pop(get_method(name).sparsity_param, None)
            params.pop("warm_start", None)

            def job(on_row, name=name, params=params):
                run_sweep(name, data, n_points=n_points, metrics=measures,
                          callback=on_row, **params)

            jobs.append(job)
        self.worker.start(self.token, jobs)
        return methods

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
