"""The session's accuracy-versus-#features sweep: which methods, the background run, the rows
as they arrive and the progress the page shows (``status``, ``progress``)."""

from __future__ import annotations

import queue

import pandas as pd
import param

from .. import metrics as M
from ..data import DataError
from ..experiments import Comparison, at_k, check_compatible, choose_point
from ..experiments.comparison import summarize
from ..methods import get_method, k_grid
from ..methods.knowledge import counts
from ._fit_pool import background_worker
from ._jobs import SweepJob
from ._knowledge import honoured

SWEEP_EVENTS = ("row", "sweep-done", "sweep-error")
CURRENT = "current setting"
# each point scored by 5-fold CV of the training part, repeated twice with other folds (the
# test part waits): the same folds for every method, so that their scores pair fold for fold
SWEEP_FOLDS = 5
SWEEP_REPEATS = 2
CHANCE = "random"  # the registry's random-columns baseline, swept beside every method


def counts_features(name: str) -> bool:
    """Whether the method can be asked for a number of features (a ``k`` or ``m`` knob): it is
    then swept at the same k as the others and paired with them."""
    try:
        at_k(name, 1)
        return True
    except ValueError:
        return False


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
        self.refused = ""  # the methods left out as they cannot honour what the user knows
        self.n_rows: int | None = None  # the training rows the folds are drawn from
        self.finished = False  # the sweep in flight has ended

    @staticmethod
    def methods(method: str, baselines, data, params: dict, knowledge=None) -> list[str]:
        """``method`` (with the user's ``params``) and the ``baselines`` that can run on
        ``data`` and honour what the user knows (``knowledge``, a
        :class:`~._knowledge.UserKnowledge`), then — on classes — the chance baseline
        (``CHANCE``: the same SVM on k columns drawn at random), so that every curve can be
        read against choosing blindly."""
        names = [method] + [b for b in baselines if b != method]
        if data is not None and data.task == "classification" and CHANCE not in names:
            names.append(CHANCE)
        compatible = []
        for name in names:
            try:
                check_compatible(name, data, params if name == method else None)
            except DataError:
                continue
            if knowledge is None or honoured(name, knowledge) is None:
                compatible.append(name)
        return compatible

    @staticmethod
    def left_out(baselines, data) -> dict[str, str]:
        """The ``baselines`` that cannot run on ``data``, with the reason."""
        out = {}
        if data is None:
            return out
        for name in baselines:
            try:
                check_compatible(name, data)
            except DataError as exc:  # what is wrong, without the dataset's source
                out[name] = exc.problem.split("; methods for it")[0]
        return out

    def start(self, method: str, baselines, data, params: dict, n_points: int,
              knowledge=None) -> list[str]:
        """Start sweeping ``method`` (its other knobs at the user's ``params``, the user's own
        number of features a point of its curve) and the ``baselines`` on ``data``; returns
        the methods swept. Every method that can be asked for k is swept at the same k (the
        current method's grid), so that the differences pair them fold for fold; the others
        (GrFL's cap, the Lasso's alpha) over their own knob. What the user knows
        (``knowledge``) is given to every method alike; one that cannot honour it is left out
        and said so in the status."""
        self.token += 1
        self.clear()
        measures = M.metrics_for(data.task)
        methods = self.methods(method, baselines, data, params, knowledge)
        refused = [] if not knowledge else [
            name for name in self.methods(method, baselines, data, params)
            if name not in methods]
        known = knowledge.params() if knowledge else {}
        self.swept = list(methods)
        jobs = []
        self.own = None
        self.current = method if method in methods else None
        self.current_label = CURRENT
        split = data.split()
        self.n_rows = split.n_samples
        ks = self._ks(method, split, params, n_points)
        if known:  # between the always-included features and those allowed
            pinned, allowed = counts(known, split.n_features)
            ks = [k for k in ks if pinned <= k <= allowed] or [max(1, pinned)]
        # with feature groups, FGM's and FS-multi's k counts groups: no common k to pair at
        paired = data.groups is None
        self.total = 0
        for name in methods:
            knobs = {k: v for k, v in (params if name == method else {}).items()
                     if k != "warm_start"}
            knobs.update(known)
            cls = get_method(name)
            if paired and counts_features(name):
                count = next(iter(at_k(name, 1)))
                own = knobs.pop(count, None)
                knobs.pop(cls.sparsity_param, None)
                if name == method:
                    if _number(own):
                        self.own = (name, int(own))
                    else:
                        self.current_label = f"{CURRENT}: not on the curve ({count} unset)"
                jobs.append(SweepJob(name, None, n_points, measures, SWEEP_FOLDS, knobs,
                                     ks=list(ks), repeats=SWEEP_REPEATS))
                self.total += len(ks)
                continue
            own = knobs.pop(cls.sparsity_param, None)
            values = None
            if name == method and _number(own):  # the user's own setting is a point
                grid = cls.sweep_values(split.X, split.y, n_points)
                values = sorted(set(grid) | {own})
                self.own = (name, own)
            elif name == method:
                self.current_label = f"{CURRENT}: not on the curve ({cls.sparsity_param} unset)"
            jobs.append(SweepJob(name, values, n_points, measures, SWEEP_FOLDS, knobs,
                                 repeats=SWEEP_REPEATS))
            self.total += len(values) if values is not None else n_points
        self.worker.start(self.token, data, jobs)
        notes = [f"{name} left out: {why}" for name, why in
                 self.left_out([b for b in baselines if b != method], data).items()]
        if refused:
            notes.append(f"{', '.join(refused)} left out: cannot honour what you know")
        self.refused = f" ({'; '.join(notes)})" if notes else ""
        self.status = f"sweeping {', '.join(methods)}: 0/{self.total} points{self.refused}"
        self.progress = 0
        return methods

    @staticmethod
    def _ks(method: str, split, params: dict, n_points: int) -> list[int]:
        """The numbers of features every counting method is swept at: the current method's
        own grid with the user's k in it, or the default grid."""
        grid = k_grid(split.n_features, n_points)
        if counts_features(method):
            count = next(iter(at_k(method, 1)))
            own = params.get(count)
            if _number(own):
                grid = sorted(set(grid) | {int(own)})
        return grid

    def differences(self, metric: str):
        """The current method minus each other method swept at the same k, fold for fold
        (:meth:`explorer.experiments.Comparison.differences`), the verdicts in words, and —
        when there are none — why (``""`` while a sweep may still bring them)."""
        frame = self.frame
        if self.current is None or frame.empty or "param" not in frame or \
                f"{metric}_folds" not in frame:
            return pd.DataFrame(), [], ""
        if not counts_features(self.current):
            knob = get_method(self.current).sparsity_param
            return pd.DataFrame(), [], (f"No difference to show: {self.current} is swept "
                                        f"over its own {knob}, not at numbers of features, "
                                        "so no other method pairs with it fold for fold")
        paired = frame[frame["param"] == "k"]
        methods = tuple(m for m in self.swept if m in set(paired["method"].astype(str)))
        if self.current not in methods or len(methods) < 2:
            if self.finished:
                return pd.DataFrame(), [], (f"No difference to show: no other method that "
                                            f"can be asked for k was swept beside "
                                            f"{self.current} (add one under Compare with)")
            return pd.DataFrame(), [], ""
        result = Comparison(rows=paired, methods=methods, metrics=(metric,), cv=SWEEP_FOLDS,
                            repeats=SWEEP_REPEATS, n_rows=self.n_rows)
        table = result.differences(metric, method=self.current)
        return table, summarize(table, self.current), ""

    def marks(self, metric: str):
        """(current, choice): the user's setting and the chosen point of the swept current
        method (the best CV mean, :func:`~explorer.experiments.choose_point`), as
        (#features, mean measure) points, or None."""
        if self.current is None or self.frame.empty or metric not in self.frame:
            return None, None
        rows = self.frame[self.frame["method"].astype(str) == self.current]
        current = None
        if self.own is not None:
            mine = rows[rows["value"] == self.own[1]]
            if not mine.empty and mine["n_selected"].iloc[0] > 0:
                current = (float(mine["n_selected"].iloc[0]), float(mine[metric].iloc[0]))
        best = choose_point(rows, metric)
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
            self.finished = True
            self.status, self.progress = (f"sweep finished: {len(self.frame)} points, each "
                                          f"by {SWEEP_FOLDS}-fold CV × {SWEEP_REPEATS} "
                                          "on the same folds for every method"
                                          + self.refused), 100
        else:
            exc, _ = event.payload
            self.status = f"sweep failed: {exc}"
            return self.status
        return None

    def clear(self) -> None:
        self.frame = pd.DataFrame()
        self.finished = False
        self.pending_reset = True


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
