"""The explorer's state and logic as a ``param.Parameterized`` object — no Panel import.

Everything a user can do (pick data, upload a file, pick a method, move a knob, run, stop,
step, sweep, export, open a URL) is a method or a parameter here, so it is tested by setting
parameters and asserting on results, without a browser. The Panel layer only mirrors it.
"""

from __future__ import annotations

import queue
import time
from typing import Any

import pandas as pd
import param

from .. import metrics as M
from .._params import ParamSpec
from ..data import DataError, Dataset
from ..experiments import fit_kwargs
from ..methods import REGISTRY
from ..texts import explain
from . import _session, _status
from ._data_source import DataSource, available_datasets, split_for_sessions
from ._fit_session import FitSession, Update
from ._method_settings import MethodSettings
from ._session import UPLOAD
from ._sweeps import SWEEP_EVENTS, Sweeps
from ._worker import kernels_warming

BIG_DATA = 20_000_000  # n × m above which live refits start switched off


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
        self._settings = MethodSettings(self.method)
        self.data: Dataset | None = None
        self._events: queue.Queue = queue.Queue()
        self.fits = FitSession(self._events, self.notify, start_worker=start_worker)
        self.sweeps = Sweeps(self._events)
        self.pacer = _status.StatusPacer()
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
            ds = self.source.open(self.dataset)
        except (DataError, ValueError) as exc:
            self.notify(str(exc), "error")
            return False
        self._use_dataset(ds, name=ds.name or self.dataset)
        return True

    def upload(self, content: bytes, filename: str, label: str | None = None) -> bool:
        """Use an uploaded file; on a problem the message names it and the old data stays."""
        try:
            ds = self.source.read_upload(content, filename, label)
        except DataError as exc:
            self.notify(str(exc), "error")
            return False
        with param.parameterized.discard_events(self):
            self.dataset = UPLOAD
        self._use_dataset(ds, name=filename)
        return True

    def _use_dataset(self, ds: Dataset, name: str) -> None:
        self.cancel_all()
        self.data = split_for_sessions(ds)  # unchanged when already split (a shared one)
        size = self.data.n_samples * self.data.n_features
        if size > BIG_DATA and self.live:
            self.live = False
            self.notify(f"Loaded {name}: {self.data.summary()}. Large data: live refits are "
                        "off — press Run.", "info")
        else:
            self.notify(f"Loaded {name}: {self.data.summary()}", "info")
        self._reset_results()
        self.data_version += 1
        suited = self.settings.suit(self.data)
        if suited:
            self.message = f"{self.message}. {suited}"

    # ================================================================= method
    @property
    def settings(self) -> MethodSettings:
        """The current method's knob values (a new method starts from its defaults)."""
        if self._settings.key != self.method:
            self._settings = MethodSettings(self.method)
        return self._settings

    method_params = property(lambda self: self.settings.params,
                             lambda self, value: setattr(self.settings, "params", dict(value)))
    method_class = property(lambda self: self.settings.cls)

    def method_specs(self) -> tuple[ParamSpec, ...]:
        return self.settings.specs

    def current_params(self) -> dict[str, Any]:
        """Declared parameters with the user's values over the defaults (a default beyond the
        data's size cut to it)."""
        return self.settings.current(self.data)

    def set_param(self, name: str, value, *, refit: bool | None = None) -> bool:
        """Validate and set one method parameter; refits when live (or ``refit=True``)."""
        try:
            self.method_params[name] = self.settings.validate(name, value)
        except ValueError as exc:
            self.notify(str(exc), "error")
            return False
        if refit or (refit is None and self.live and self.settings.is_live(name)):
            self.fit()
        return True

    def set_dataset_param(self, name: str, value) -> bool:
        """Validate and set one knob of the catalogue entry, and rebuild the data."""
        try:
            previous = self.source.set_param(self.dataset, name, value)
        except ValueError as exc:
            self.notify(str(exc), "error")
            return False
        if not self.load():
            self.dataset_params = previous
            return False
        return True

    @param.depends("method", watch=True)
    def _on_method(self):
        self.cancel_all()
        self._settings = MethodSettings(self.method)
        self._reset_results()
        self.data_version += 1
        if self.data is not None:
            suited = self.settings.suit(self.data)
            if self._explain_compatibility() and suited:
                self.notify(suited, "info")

    @param.depends("dataset", watch=True)
    def _on_dataset(self):
        if self.dataset != UPLOAD:
            self.dataset_params = {}
            self.load()

    def _explain_compatibility(self) -> bool:
        try:
            self.settings.check(self.data)
        except DataError as exc:
            self.notify(str(exc), "error")
            return False
        return True

    # ================================================================= fitting
    def next_estimator(self, *, fresh: bool = False):
        """The estimator the next fit runs: warm from the current model only when the box is
        ticked and the model is of this method on this data (never when ``fresh``)."""
        return self.settings.estimator(self.data, last=self.estimator,
                                       version=self.data_version, fresh=fresh)

    def fit(self, *, stepping: bool = False, fresh: bool = False) -> bool:
        """Start a fit of the current method on the training part (cancels the one running).

        ``fresh=True`` never warm-starts (teaching pages' *Restart*)."""
        if self.data is None:
            self.notify("no data loaded", "error")
            return False
        if not self._explain_compatibility():
            return False
        estimator = self.next_estimator(fresh=fresh)
        self.fits.start(estimator, self.data.X, self.data.y, fit_kwargs(estimator, self.data),
                        stepping=stepping, version=self.data_version,
                        data_key=getattr(self.data, "shared_key", None),
                        label=f"{self.method} on {self.dataset}")
        self._mirror()
        self.status = "Selected: – features · running…" + (
            " (first run: compiling the numerical kernels, a few seconds once)"
            if kernels_warming() else "")
        return True

    def run(self) -> bool:
        """Run: resume a paused fit, else start a new one."""
        if self.fits.resume():
            self._mirror()
            return True
        return self.fit()

    def step(self) -> bool:
        """Teaching mode: run exactly one more outer iteration, then pause."""
        stepped = self.fits.step()
        return self.fit(stepping=True) if stepped is None else stepped

    def stop(self) -> None:
        """Cancel the fit in flight; the model of its last iteration stays."""
        self.fits.stop()

    def cancel_all(self) -> None:
        self.fits.cancel()
        self.sweeps.worker.cancel()
        self._mirror()

    def wait(self, timeout: float = 60.0) -> Update:
        """Block until the fit (and sweep) finish, then apply their events (no UI needed)."""
        deadline = time.perf_counter() + timeout
        self.fits.wait(timeout)
        self.sweeps.worker.wait(max(0.0, deadline - time.perf_counter()))
        return self.poll()

    def close(self) -> None:
        """Stop the session's threads (called when a browser tab closes)."""
        self.sweeps.worker.close()
        self.fits.close()
        self._mirror()
        _status.set_running(id(self), False)

    # the fit session's results, as the views and the codec read them
    records = property(lambda self: self.fits.records,
                       lambda self, value: setattr(self.fits, "records", value))
    estimator = property(lambda self: self.fits.estimator,
                         lambda self, value: setattr(self.fits, "estimator", value))

    def _mirror(self) -> None:
        """The widgets' running/paused fields follow the fit session."""
        self.running, self.paused = self.fits.running, self.fits.paused
        _status.set_running(id(self), self.running and not self.paused)

    # ================================================================= events
    def poll(self) -> Update:
        """Apply the workers' events on the caller's thread; return what the views need."""
        update = Update(reset=self.fits.pending_reset, sweep_reset=self.sweeps.pending_reset)
        self.fits.pending_reset = self.sweeps.pending_reset = False
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if event.kind in SWEEP_EVENTS:
                if event.token == self.sweeps.token:
                    self._sweep_event(event, update)
            else:
                self.fits.apply(event, update)
                if event.kind == "paused" and event.token == self.fits.token:
                    self._explain(event.payload)
        self._mirror()
        shown = self.pacer.after_poll(update, records=self.records, running=self.running,
                                      paused=self.paused, has_model=self.estimator is not None)
        if shown.text is not None:
            self.status = shown.text
        if shown.record is not None:
            self.n_records = len(self.records)
            self._set_status(shown.record)
        if shown.explain:
            self._explain(shown.record)
        return update

    def _set_status(self, record) -> None:
        self.status = _status.status_line(
            record, records=self.records, estimator=self.estimator, data=self.data,
            state=_status.run_state(paused=self.paused, running=self.running,
                                    stopped=self.fits.stopped),
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
        self.fits.forget()
        self.sweeps.clear()
        self.explanation = ""
        self.n_records = 0
        self.status = "Selected: 0 features"

    def show_estimator(self, estimator) -> None:
        """Display an already fitted estimator (Jupyter: ``ExplorerApp(estimator=est)``)."""
        name = getattr(estimator, "registry_name", "")
        if name in REGISTRY:
            with param.parameterized.discard_events(self):
                self.method = name
            self.method_params = {s.name: getattr(estimator, s.name)
                                  for s in self.method_specs()}
        self.fits.show(estimator)
        self.n_records = len(self.records)
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

