"""The explorer's state and logic as a ``param.Parameterized`` object — no Panel import.

Everything a user can do (pick data, upload a file, pick a method, move a knob, run, stop,
step, sweep, export, open a URL) is a method or a parameter here, so it is tested by setting
parameters and asserting on results, without a browser. The Panel layer only mirrors it.
"""

from __future__ import annotations

import logging
import queue
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import param

from .. import metrics as M
from .._params import ParamSpec
from ..data import DataError, Dataset
from ..experiments import check_compatible, fit_kwargs, settings_for_task
from ..methods import REGISTRY, get_method
from ..texts import explain
from . import _session, _status
from ._data_source import DataSource, available_datasets
from ._session import UPLOAD
from ._sweeps import SWEEP_EVENTS, Sweeps
from ._worker import FitRequest, FitWorker, kernels_warming

log = logging.getLogger("explorer.ui")

BIG_DATA = 20_000_000  # n × m above which live refits start switched off


@dataclass
class Update:
    """What changed since the last :meth:`ExplorerState.poll` (for the views)."""

    records: list = field(default_factory=list)
    reset: bool = False
    finished: bool = False
    sweep_rows: list = field(default_factory=list)
    sweep_reset: bool = False


class ExplorerState(param.Parameterized):
    """Data, method, parameters, the running fit and the sweep of one explorer session."""

    dataset = param.String(default="digits-3v8", doc="catalogue name, or 'upload'")
    method = param.Selector(default="fgm", objects=sorted(REGISTRY), doc="registered method")
    live = param.Boolean(default=True, doc="refit as soon as a parameter moves")
    metric = param.Selector(default="accuracy", objects=list(M.METRICS), doc="sweep measure")
    baselines = param.ListSelector(default=["l1-svm"], objects=sorted(REGISTRY),
                                   doc="methods swept next to the current one")
    status = param.String(default="Selected: 0 features", doc="the status line")
    message = param.String(default="", doc="the last notice for the user")
    message_level = param.Selector(default="info", objects=["info", "warning", "error"])
    running = param.Boolean(default=False)
    paused = param.Boolean(default=False)
    explanation = param.String(default="", doc="teaching text for the last iteration")
    sweep_status = param.String(default="")
    sweep_progress = param.Integer(default=0, bounds=(0, 100))
    data_version = param.Integer(default=0, doc="bumps when the data or method changes")
    n_records = param.Integer(default=0)

    def __init__(self, *, dataset: Dataset | str | None = None, estimator=None,
                 start_worker: bool = True, **params):
        super().__init__(**params)
        self.source = DataSource()
        self.method_params: dict[str, Any] = {}
        self.data: Dataset | None = None
        self.records: list = []
        self.estimator = None
        self._events: queue.Queue = queue.Queue()
        self._worker = FitWorker(self._events) if start_worker else None
        self.sweeps = Sweeps(self._events)
        self._token = 0
        self._fit_started = 0.0
        self._pending_reset = False
        self._stopped = False
        if isinstance(dataset, Dataset):
            self._use_dataset(dataset, name=dataset.name or "dataset")
        elif dataset is not None:
            self.dataset = dataset
            self.load()
        if estimator is not None:
            self.show_estimator(estimator)

    # ================================================================= data
    # the source's fields, as the URL codec, the session export and the app read them
    dataset_params = property(lambda self: self.source.params,
                              lambda self, value: setattr(self.source, "params", value))
    label_column = property(lambda self: self.source.label_column)
    upload_bytes = property(lambda self: self.source.upload_bytes)
    upload_name = property(lambda self: self.source.upload_name)

    def dataset_specs(self) -> tuple[ParamSpec, ...]:
        """Knobs of the current catalogue entry (sizes, seed, noise); none for files."""
        return self.source.specs(self.dataset)

    def load(self) -> bool:
        """(Re)build the current dataset; on a data problem keep the previous one."""
        try:
            ds = self.source.build(self.dataset)
        except (DataError, ValueError) as exc:
            self.notify(str(exc), "error")
            return False
        self._use_dataset(ds, name=ds.name or self.dataset)
        return True

    def upload(self, content: bytes, filename: str, label: str | None = None) -> bool:
        """Use an uploaded file; on a problem the message names it and the old data stays."""
        if self.source.too_large(len(content)):
            self.refuse_upload(filename, len(content))
            return False
        try:
            ds = self.source.read_upload(content, filename, label)
        except DataError as exc:
            self.notify(str(exc), "error")
            return False
        with param.parameterized.discard_events(self):
            self.dataset = UPLOAD
        self._use_dataset(ds, name=filename)
        return True

    def used_auto_values(self) -> dict[str, Any]:
        """The values the fitted model used for the knobs left on *auto* (its ``<name>_``
        attributes: GrFL's λ = 0.1·λ_max, FS-multi's C = 0.1·n, FSA's η, …)."""
        if self.estimator is None:
            return {}
        params = self.current_params()
        return {spec.name: getattr(self.estimator, spec.name + "_")
                for spec in self.method_specs()
                if spec.nullable and params.get(spec.name) is None
                and hasattr(self.estimator, spec.name + "_")}

    def refuse_upload(self, filename: str, size: float) -> None:
        """Say that ``filename`` (about ``size`` bytes) is above the upload limit; the data
        in use stays."""
        self.notify(self.source.refusal(filename, size), "error")

    def table_columns(self) -> list[str]:
        """Column names of the uploaded table (to choose the label column)."""
        return self.source.table_columns()

    def _use_dataset(self, ds: Dataset, name: str) -> None:
        self.cancel_all()
        self.data = ds.split(test_size=0.3, seed=0)
        size = self.data.n_samples * self.data.n_features
        if size > BIG_DATA and self.live:
            self.live = False
            self.notify(f"Loaded {name}: {self.data.summary()}. Large data: live refits are "
                        "off — press Run.", "info")
        else:
            self.notify(f"Loaded {name}: {self.data.summary()}", "info")
        self._reset_results()
        self.data_version += 1
        suited = self._suit_the_target()
        if suited:
            self.message = f"{self.message}. {suited}"

    def _suit_the_target(self) -> str:
        """Set the one choice (FSA's loss) that makes the method solve the loaded data's task
        when the current settings do not (FSA on a ranking dataset: loss = 'ranking'), and say
        so; "" when nothing changed. The widgets, URL and exported session show the setting."""
        if self.data is None:
            return ""
        try:
            fix = settings_for_task(self.method, self.data.task, self.current_params())
        except (TypeError, ValueError):
            return ""
        if not fix:
            return ""
        self.method_params.update(fix)
        changes = ", ".join(f"{name} = {value!r}" for name, value in fix.items())
        return f"{self.method_class.display_name}'s {changes} for this {self.data.task} target"

    # ================================================================= method
    @property
    def method_class(self):
        return get_method(self.method)

    def method_specs(self) -> tuple[ParamSpec, ...]:
        return self.method_class.param_specs

    def current_params(self) -> dict[str, Any]:
        """Declared parameters with the user's values over the defaults; a default beyond the
        data's size is cut to it (FS-Manifold's m = 20 on the 13 features of wine), as the
        widget's range is (a value the user sets is checked by the fit)."""
        sizes = {} if self.data is None else \
            dict(n_samples=self.data.n_samples, n_features=self.data.n_features)
        values = {s.name: _within(s, s.default, **sizes) for s in self.method_specs()}
        values.update({k: v for k, v in self.method_params.items() if k in values})
        return values

    def _validated(self, specs, name, value, what, owner):
        """(True, value checked against its spec) or (False, None) with the error notified."""
        if name not in specs:
            self.notify(f"{what} has no parameter {name!r}", "error")
            return False, None
        try:
            return True, specs[name].validate(value, owner=owner)
        except ValueError as exc:
            self.notify(str(exc), "error")
            return False, None

    def set_param(self, name: str, value, *, refit: bool | None = None) -> bool:
        """Validate and set one method parameter; refits when live (or ``refit=True``)."""
        specs = {s.name: s for s in self.method_specs()}
        ok, value = self._validated(specs, name, value, self.method, self.method)
        if not ok:
            return False
        self.method_params[name] = value
        if refit or (refit is None and self.live and specs[name].live):
            self.fit()
        return True

    def set_dataset_param(self, name: str, value) -> bool:
        specs = {s.name: s for s in self.dataset_specs()}
        ok, value = self._validated(specs, name, value, f"dataset {self.dataset!r}",
                                    self.dataset)
        if not ok:
            return False
        previous = dict(self.dataset_params)
        self.dataset_params[name] = value
        if not self.load():
            self.dataset_params = previous
            return False
        return True

    @param.depends("method", watch=True)
    def _on_method(self):
        self.cancel_all()
        self.method_params = {}
        self._reset_results()
        self.data_version += 1
        if self.data is not None:
            suited = self._suit_the_target()
            if self._explain_compatibility() and suited:
                self.notify(suited, "info")

    @param.depends("dataset", watch=True)
    def _on_dataset(self):
        if self.dataset != UPLOAD:
            self.dataset_params = {}
            self.load()

    def _explain_compatibility(self) -> bool:
        try:
            check_compatible(self.method, self.data, self.current_params())
        except DataError as exc:
            self.notify(str(exc), "error")
            return False
        return True

    # ================================================================= fitting
    def _make_estimator(self, *, fresh: bool = False):
        """The estimator of the current settings. It starts from the previous model only
        when the user asked for it (``warm_start`` ticked) and the previous model was fitted
        on the same data by the same method; its records then say ``warm_start``."""
        cls = self.method_class
        params = self.current_params()
        estimator = cls(**params)
        last = self.estimator
        if not fresh and params.get("warm_start") and cls.supports_warm_start \
                and type(last) is cls \
                and getattr(last, "_fitted_version", None) == self.data_version:
            estimator.continue_from(last)
        return estimator

    def fit(self, *, stepping: bool = False, fresh: bool = False) -> bool:
        """Start a fit of the current method on the training part (cancels the one running).

        ``fresh=True`` never warm-starts (teaching pages' *Restart*)."""
        if self.data is None:
            self.notify("no data loaded", "error")
            return False
        if not self._explain_compatibility():
            return False
        self._token += 1
        estimator = self._make_estimator(fresh=fresh)
        version = self.data_version

        def make():
            estimator._fitted_version = version
            return estimator

        self._pending_reset = True
        self.records = []
        self.running = True
        self.paused = False
        self._fit_started = time.perf_counter()
        request = FitRequest(self._token, make, self.data.X, self.data.y,
                             fit_kwargs(estimator, self.data),
                             stepping=stepping)
        if self._worker is None:
            raise RuntimeError("this state was created without a worker")
        self._worker.submit(request)
        self._stopped = False
        self.status = "Selected: – features · running…" + (
            " (first run: compiling the numerical kernels, a few seconds once)"
            if kernels_warming() else "")
        return True

    def run(self) -> bool:
        """Run: resume a paused fit, else start a new one."""
        if self._worker is not None and self._worker.resume():
            self.paused = False
            return True
        return self.fit()

    def step(self) -> bool:
        """Teaching mode: run exactly one more outer iteration, then pause."""
        if self._worker is not None and self._worker.paused:
            return self._worker.step()
        return self.fit(stepping=True)

    def stop(self) -> None:
        """Cancel the fit in flight; the model of its last iteration stays."""
        if self._worker is not None:
            self._worker.stop()

    def cancel_all(self) -> None:
        self._token += 1
        if self._worker is not None:
            self._worker.stop()
        self.sweeps.worker.cancel()
        self.running = False
        self.paused = False

    def wait(self, timeout: float = 60.0) -> Update:
        """Block until the fit (and sweep) finish, then apply their events (no UI needed)."""
        deadline = time.perf_counter() + timeout
        if self._worker is not None:
            self._worker.wait(timeout)
        self.sweeps.worker.wait(max(0.0, deadline - time.perf_counter()))
        return self.poll()

    def close(self) -> None:
        """Stop the session's threads (called when a browser tab closes)."""
        self.cancel_all()
        if self._worker is not None:
            self._worker.close()

    # ================================================================= events
    def poll(self) -> Update:
        """Apply the worker's events on the caller's thread; return what the views need."""
        update = Update(reset=self._pending_reset, sweep_reset=self.sweeps.pending_reset)
        self._pending_reset = self.sweeps.pending_reset = False
        failed = False
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if event.kind in SWEEP_EVENTS:
                if event.token != self.sweeps.token:
                    continue
                self._sweep_event(event, update)
                continue
            if event.token != self._token:
                continue
            if event.kind == "record":
                record = event.payload
                if record.iteration == 0 and self.records:
                    self.records = []  # the method restarted its run
                    update.reset = True
                    update.records = []
                self.records.append(record)
                update.records.append(record)
            elif event.kind == "warning":
                self.notify(str(event.payload), "warning")
            elif event.kind == "paused":
                self.paused = True
                self._explain(event.payload)
            elif event.kind in ("done", "stopped"):
                self.estimator = event.payload
                self.running = False
                self.paused = False
                self._stopped = event.kind == "stopped"
                update.finished = True
                if event.kind == "stopped":
                    self.notify("Stopped: the model of the last finished iteration is kept.",
                                "info")
            elif event.kind == "cancelled":  # stopped before its turn at the CPU came
                self.running = False
                self.paused = False
                update.finished = True
                self.status = "Selected: – features · stopped before it started"
            elif event.kind == "error":
                exc, trace = event.payload
                self.running = False
                self.paused = False
                log.error("fit of %s on %s failed:\n%s", self.method, self.dataset, trace)
                self.notify(f"The fit failed: {type(exc).__name__}: {exc}", "error")
                update.finished = failed = True
        if failed:
            self.status = "Selected: – features · failed (see the message)"
        elif update.records:
            self.n_records = len(self.records)
            last = update.records[-1]
            self._set_status(last)
            if self.paused or not self.running:
                self._explain(last)
        elif update.finished and self.records and self.estimator is not None:
            # the fit's end came in a later poll than its last record: explain that record now
            self._set_status(self.records[-1])
            self._explain(self.records[-1])
        return update

    def _set_status(self, record) -> None:
        self.status = _status.status_line(
            record, records=self.records, estimator=self.estimator, data=self.data,
            state=_status.run_state(paused=self.paused, running=self.running,
                                    stopped=self._stopped),
            scored=not self.running)

    def _explain(self, record) -> None:
        names = self.data.names() if self.data is not None else None
        self.explanation = explain(self.method, record, names) or (
            f"Iteration {record.iteration + 1}: objective {record.objective:.5g}, "
            f"{record.n_selected} features.")

    def notify(self, text: str, level: str = "info") -> None:
        self.message_level = level
        self.message = text

    # ================================================================= sweeps
    @property
    def sweep_frame(self) -> pd.DataFrame:
        return self.sweeps.frame

    def sweep_methods(self) -> list[str]:
        return self.sweeps.methods(self)

    def sweep(self, n_points: int = 8) -> bool:
        """Start the background accuracy-versus-#features sweep of the method and baselines."""
        if self.data is None:
            return False
        methods = self.sweeps.start(self, n_points)
        self.sweep_status = f"sweeping {', '.join(methods)}: 0/{self.sweeps.total} points"
        self.sweep_progress = 0
        return True

    def _sweep_event(self, event, update: Update) -> None:
        status, progress, error = self.sweeps.apply(event, update)
        self.sweep_status = status
        if error is None:
            self.sweep_progress = progress
        else:
            self.notify(error, "error")

    # ================================================================= results
    def _reset_results(self) -> None:
        self.records = []
        self.estimator = None
        self.sweeps.clear()
        self.explanation = ""
        self.n_records = 0
        self.status = "Selected: 0 features"
        self._pending_reset = True

    def show_estimator(self, estimator) -> None:
        """Display an already fitted estimator (Jupyter: ``ExplorerApp(estimator=est)``)."""
        name = getattr(estimator, "registry_name", "")
        if name in REGISTRY:
            with param.parameterized.discard_events(self):
                self.method = name
            self.method_params = {s.name: getattr(estimator, s.name)
                                  for s in self.method_specs()}
        self.estimator = estimator
        self.records = list(getattr(estimator, "history_", []))
        self.n_records = len(self.records)
        # the views draw these records themselves; no fit is starting, so the next poll must
        # not tell them to start over (it emptied the curves once a notebook went idle)
        self._pending_reset = False
        if self.records:
            self._set_status(self.records[-1])
            self.status = self.status.replace(" · running…", "")

    def selected_frame(self) -> pd.DataFrame:
        from ..viz import selected_table

        if self.estimator is None:
            return pd.DataFrame(columns=["feature", "name", "weight", "abs_weight"])
        return selected_table(self.estimator, self.data)

    def headline_scores(self) -> dict[str, float]:
        """The current model's main test measures, as the status line shows them."""
        return _status.headline_scores(self.estimator, self.data)

    def test_scores(self, names=None) -> dict[str, float]:
        """Measures of the current model on the test part."""
        return _status.test_scores(self.estimator, self.data, names)

    # ================================================================= URL + sessions
    def to_query(self) -> dict[str, str]:
        return _session.to_query(self)

    def query_string(self) -> str:
        return _session.query_string(self)

    def from_query(self, query: dict[str, Any], *, fit: bool = True) -> list[str]:
        """Apply a URL query (values may be strings or one-element lists); returns problems."""
        problems = _session.apply_query(self, query, available=available_datasets())
        if problems:
            self.notify("Ignored in the URL: " + "; ".join(problems), "warning")
        if fit and self.live:
            self.fit()
        return problems

    def export_session(self) -> dict:
        return _session.export_session(self)

    def export_json(self) -> str:
        return _session.export_json(self)


def _within(spec: ParamSpec, value, n_samples: int | None = None,
            n_features: int | None = None):
    """A numeric default cut to the upper end of its range on data of this size."""
    high = spec.high_for(n_samples, n_features) if spec.bound else None
    if high is None or spec.kind not in ("int", "float") or value is None or value <= high:
        return value
    return int(high) if spec.kind == "int" else float(high)
