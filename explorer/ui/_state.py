"""The explorer's state — no Panel import. Everything a user can do (pick data, upload, pick a
method, move a knob, run, stop, step, sweep, export, open a URL) is a method or a parameter
here or of its owners, each tested without a browser: ``source`` (the data's origin),
``settings`` (the method's values), ``fits`` (the fit in flight), ``sweeps``, ``feedback`` (the
words on the page) and the URL and session codec (:mod:`._session`). What is left here is
their coordination: which change cancels, resets or refits what."""

from __future__ import annotations

import queue
import time
from typing import Any

import param

from .. import metrics as M
from ..data import Dataset
from ..experiments import fit_kwargs
from ..methods import REGISTRY
from . import _session, _status
from ._data_source import UPLOAD, DataSource, available_datasets, split_for_sessions
from ._fit_session import FitSession, Update, drain
from ._knowledge import UserKnowledge, honoured, read_factors
from ._method_settings import MethodSettings
from ._sweeps import SWEEP_EVENTS, Sweeps
from ._worker import kernels_warming, warming_progress

BIG_DATA = 20_000_000  # n × m above which live refits start switched off


class ExplorerState(param.Parameterized):
    """Data, method, parameters, the running fit and the sweep of one explorer session."""

    dataset = param.String(default="digits-3v8", doc="catalogue name, or 'upload'")
    method = param.Selector(default="fgm", objects=sorted(REGISTRY), doc="registered method")
    live = param.Boolean(default=True, doc="refit as soon as a parameter moves")
    metric = param.Selector(default="accuracy", objects=list(M.METRICS), doc="sweep measure")
    baselines = param.ListSelector(default=["l1-svm"], objects=sorted(REGISTRY),
                                   doc="methods swept next to the current one")
    data_version = param.Integer(default=0, doc="bumps when the data or method changes")
    knowledge_version = param.Integer(default=0, doc="bumps when what the user knows changes")

    def __init__(self, *, dataset: Dataset | str | None = None, estimator=None,
                 start_worker: bool = True, **params):
        # the methods registered now, not when this module was imported (a method added
        # after the app's import is listed too)
        self.param.method.objects = sorted(REGISTRY)
        self.param.baselines.objects = sorted(REGISTRY)
        super().__init__(**params)
        self.source = DataSource()
        self._settings = MethodSettings(self.method)
        self.data: Dataset | None = None
        self._events: queue.Queue = queue.Queue()
        self.feedback = _status.Feedback()
        self.fits = FitSession(self._events, self.feedback.fit_notice,
                               start_worker=start_worker)
        self.sweeps = Sweeps(self._events)
        self.known = UserKnowledge()  # pinned, banned, penalty factors, sign: every fit's
        if isinstance(dataset, Dataset):
            self._use_dataset(dataset, name=dataset.name or "dataset")
        elif dataset is not None:
            self.dataset = dataset
            self.load()
        if estimator is not None:
            self.show_estimator(estimator)

    def load(self) -> bool:
        """(Re)build the current dataset; on a data problem keep the previous one."""
        ds = self.feedback.reported(self.source.open, self.dataset)
        if ds is not None:
            self._use_dataset(ds, name=ds.name or self.dataset)
        return ds is not None

    def upload(self, content: bytes, filename: str, label: str | None = None) -> bool:
        """Use an uploaded file; on a problem the message names it and the old data stays."""
        ds = self.feedback.reported(self.source.read_upload, content, filename, label)
        if ds is None:
            return False
        with param.parameterized.discard_events(self):
            self.dataset = UPLOAD
        self._use_dataset(ds, name=filename)
        return True

    def _use_dataset(self, ds: Dataset, name: str) -> None:
        self.cancel_all()
        same = self.data is not None and self.data.n_features == ds.n_features and \
            self.data.names() == ds.names()
        if not same and self.known:  # another dataset's features: pins and bans do not carry
            self.known.clear()
            self.knowledge_version += 1
        self.data = split_for_sessions(ds)  # unchanged when already split (a shared one)
        notice = f"Loaded {name}: {self.data.summary()}"
        if self.data.n_samples * self.data.n_features > BIG_DATA and self.live:
            self.live = False
            notice += ". Large data: live refits are off — press Run."
        suited = self.settings.suit(self.data)
        self.feedback.notify(notice + (f". {suited}" if suited else ""), "info")
        self._reset_results()
        self.data_version += 1

    def set_image_shape(self, text) -> bool:
        """Draw the data as images of the shape a text gives ("32x32"; "none": not as
        images; empty: the data's own, or the shape guessed for a file of pixels), and
        rebuild the data; a shape that does not fit the features is named, nothing changes."""
        try:
            shape = _session.image_setting(text)
        except ValueError as exc:
            self.feedback.notify(f"Image shape: {exc}", "error")
            return False
        if shape == self.source.image_shape:
            return True
        if isinstance(shape, tuple) and self.data is not None and \
                shape[0] * shape[1] != self.data.n_features:
            self.feedback.notify(f"Image shape: {shape[0]} × {shape[1]} has "
                                 f"{shape[0] * shape[1]:,} pixels and the data have "
                                 f"{self.data.n_features:,} features", "error")
            return False
        previous, self.source.image_shape = self.source.image_shape, shape
        if not self.load():
            self.source.image_shape = previous
            return False
        return True

    def set_dataset_param(self, name: str, value) -> bool:
        """Validate and set one knob of the catalogue entry, and rebuild the data."""
        previous = self.feedback.reported(self.source.set_param, self.dataset, name, value)
        if previous is not None and not self.load():
            self.source.params = previous
            return False
        return previous is not None

    @param.depends("dataset", watch=True)
    def _on_dataset(self):
        if self.dataset != UPLOAD:
            self.source.params = {}
            self.source.image_shape = None  # another dataset: its own shape, or a guess
            self.load()

    @property
    def settings(self) -> MethodSettings:
        """The current method's knob values (a new method starts from its defaults)."""
        if self._settings.key != self.method:
            self._settings = MethodSettings(self.method)
        return self._settings

    def current_params(self) -> dict[str, Any]:
        """Declared parameters with the user's values over the defaults (a default beyond the
        data's size cut to it)."""
        return self.settings.current(self.data)

    def set_param(self, name: str, value, *, refit: bool | None = None) -> bool:
        """Validate and set one method parameter; refits when live (or ``refit=True``)."""
        try:
            self.settings.set(name, value)
        except ValueError as exc:
            self.feedback.notify(str(exc), "error")
            return False
        if refit or (refit is None and self.live and self.settings.is_live(name)):
            self.fit()
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
                self.feedback.notify(suited, "info")

    def _explain_compatibility(self) -> bool:
        if self.feedback.reported(self.settings.check, self.data, of_a_fit=True) is None:
            return False
        refused = honoured(self.method, self.known)
        if refused:
            self.feedback.fit_notice(f"{refused}: pick a method that does, or take it back "
                                     "under What you know", "error")
            return False
        return True

    # ------------------------------------------------------------------ knowledge
    def knowledge_params(self) -> dict:
        """What the user knows, as the estimator parameters every fit is given."""
        return self.known.params()

    def change_knowledge(self, edit, *args) -> None:
        """Apply ``edit`` (a :class:`UserKnowledge` method, e.g. ``known.pin``) and refit
        when live; the sweeps and resampling runs start over with it."""
        edit(*args)
        self._knowledge_changed()

    def set_features(self, kind: str, text: str) -> bool:
        """Pin (``kind`` "pinned") or ban ("banned") the features a text names — names or
        numbers, comma-separated; an unknown one is named and nothing changes. A feature
        named for one is taken from the other."""
        names = self.data.names() if self.data is not None else []
        position = {str(name): j for j, name in enumerate(names)}
        chosen = []
        for item in (t.strip() for t in str(text or "").split(",")):
            if not item:
                continue
            if item in position:
                chosen.append(position[item])
            elif item.isdigit() and int(item) < len(names):
                chosen.append(int(item))
            else:
                self.feedback.notify(f"What you know: no feature named {item!r} in this "
                                     "dataset", "error")
                return False
        chosen = sorted(set(chosen))
        if chosen == sorted(getattr(self.known, kind)):
            return True
        other = "banned" if kind == "pinned" else "pinned"
        setattr(self.known, kind, chosen)
        setattr(self.known, other, [j for j in getattr(self.known, other) if j not in chosen])
        self._knowledge_changed()
        return True

    def set_positive(self, value: bool) -> None:
        if bool(value) != self.known.positive:
            self.known.positive = bool(value)
            self._knowledge_changed()

    def set_factors(self, content: bytes | None) -> bool:
        """Penalty factors from a CSV file of name, factor (None: none); a bad file is named
        and the factors stay as they were."""
        if content is None:
            self.known.factors = {}
        else:
            factors = self.feedback.reported(read_factors, content, self.data.names())
            if factors is None:
                return False
            self.known.factors = factors
        self._knowledge_changed()
        return True

    def _knowledge_changed(self) -> None:
        self.sweeps.worker.cancel()
        self.sweeps.clear()
        self.knowledge_version += 1
        if self.live and self.data is not None:
            self.fit()

    def next_estimator(self, *, fresh: bool = False):
        """The estimator the next fit runs: warm from the current model only when the box is
        ticked and the model is of this method on this data (never when ``fresh``)."""
        return self.settings.estimator(self.data, last=self.estimator,
                                       version=self.data_version, fresh=fresh)

    def fit(self, *, stepping: bool = False, fresh: bool = False) -> bool:
        """Start a fit of the current method on the training part (cancels the one running);
        ``fresh=True`` never warm-starts (teaching pages' *Restart*)."""
        if not self._explain_compatibility():  # nothing of an earlier setting stays on the page
            self.fits.cancel()
            self.fits.forget()
            self.feedback.refused()
            return False
        self.feedback.fit_starting()
        estimator = self.next_estimator(fresh=fresh)
        estimator.set_params(**self.knowledge_params())
        self.fits.start(estimator, self.data.X, self.data.y, fit_kwargs(estimator, self.data),
                        stepping=stepping, version=self.data_version,
                        data_key=getattr(self.data, "shared_key", None),
                        label=f"{self.method} on {self.dataset}")
        self.feedback.starting(compiling=kernels_warming(), done=warming_progress())
        return True

    def run(self) -> bool:
        """Run: resume a paused fit, else start a new one."""
        return self.fits.resume() or self.fit()

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

    records = property(lambda self: self.fits.records, doc="the fit session's records")
    estimator = property(lambda self: self.fits.estimator, doc="the fit session's model")

    def poll(self) -> Update:
        """Apply the workers' events on the caller's thread; return what the views need."""
        update = Update(reset=self.fits.pending_reset, sweep_reset=self.sweeps.pending_reset)
        self.fits.pending_reset = self.sweeps.pending_reset = False
        for event in drain(self._events):
            if event.kind in SWEEP_EVENTS:
                if event.token == self.sweeps.token:
                    error = self.sweeps.apply(event, update)
                    if error is not None:
                        self.feedback.notify(error, "error")
            else:
                self.fits.apply(event, update)
                if event.kind == "paused" and event.token == self.fits.token:
                    self.feedback.explain(self.method, event.payload, self.data)
        self.feedback.after_poll(update, self.fits, self.data, self.method,
                                 warming=warming_progress() if kernels_warming() else None)
        return update

    def sweep_methods(self) -> list[str]:
        """The current method and the chosen baselines that can run on the data."""
        return self.sweeps.methods(self.method, self.baselines, self.data,
                                   self.current_params(), self.known)

    def sweep(self, n_points: int = 8) -> bool:
        """Start the background accuracy-versus-#features sweep of the method and baselines."""
        if self.data is not None:
            self.sweeps.start(self.method, self.baselines, self.data, self.current_params(),
                              n_points, knowledge=self.known)
        return self.data is not None

    def _reset_results(self) -> None:
        self.fits.forget()
        self.sweeps.clear()
        self.feedback.clear()

    def show_estimator(self, estimator) -> None:
        """Display an already fitted estimator (Jupyter: ``ExplorerApp(estimator=est)``)."""
        name = getattr(estimator, "registry_name", "")
        if name in REGISTRY:
            with param.parameterized.discard_events(self):
                self.method = name
            self.settings.params = {s.name: getattr(estimator, s.name)
                                    for s in self.settings.specs}
        self.fits.show(estimator)
        if self.records:
            self.feedback.show(self.records[-1], self.fits, self.data)

    def query_string(self) -> str:
        return _session.query_string(self.dataset, self.source, self.settings,
                                     baselines=self.baselines, metric=self.metric,
                                     knowledge=self.known)

    def from_query(self, query: dict[str, Any], *, fit: bool = True) -> list[str]:
        """Apply a URL query (values may be strings or one-element lists); returns problems."""
        parsed = _session.parse_query(query, available=available_datasets(),
                                      method=self.method, dataset=self.dataset)
        with param.parameterized.discard_events(self):
            self.method = parsed.method or self.method
            self.dataset = parsed.dataset or self.dataset
        self.settings.params = parsed.params
        self.source.params = parsed.data_params
        self.source.image_shape = None
        if parsed.baselines is not None:
            self.baselines = parsed.baselines
        self.load()
        self._within_data(parsed)
        shape = parsed.image_shape
        if shape is not None and self.data is not None:
            if isinstance(shape, tuple) and shape[0] * shape[1] != self.data.n_features:
                parsed.problems.append(f"image: {shape[0]} × {shape[1]} has "
                                       f"{shape[0] * shape[1]:,} pixels and the data have "
                                       f"{self.data.n_features:,} features")
            else:
                self.source.image_shape = shape
                self.load()
        if parsed.knowledge_texts:
            self.known = UserKnowledge.from_texts(
                parsed.knowledge_texts, self.data.n_features if self.data else None,
                parsed.problems)
            self.knowledge_version += 1
        if parsed.metric is not None:
            if parsed.metric in M.metrics_for(self.data.task if self.data else "classification"):
                self.metric = parsed.metric
            else:
                parsed.problems.append(f"measure: {parsed.metric!r} does not apply to this "
                                       "dataset's target")
        if parsed.problems:
            self.feedback.notify("Ignored in the URL: " + "; ".join(parsed.problems), "warning")
        if fit and self.live:
            self.fit()
        return parsed.problems

    def _within_data(self, parsed) -> None:
        """A URL's knob beyond what the data allow (k = 99999 on 64 features) is left out and
        named, as a value below a knob's range is (k = 0)."""
        if self.data is None:
            return
        specs = {spec.name: spec for spec in self.settings.specs}
        for name, value in list(self.settings.params.items()):
            spec = specs.get(name)
            if spec is None or not spec.bound or spec.kind not in ("int", "float") or \
                    not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            high = spec.high_for(self.data.n_samples, self.data.n_features)
            if high is not None and value > high:
                del self.settings.params[name]
                what = {"n_features": "features", "n_samples": "rows"}.get(spec.bound, "")
                parsed.problems.append(f"{name}: {value:g} is above the {high:g} {what} of "
                                       "this dataset")

    def export_session(self) -> dict:
        return _session.export_session(self.dataset, self.source, self.settings,
                                       params=self.current_params(), metric=self.metric,
                                       baselines=self.baselines, knowledge=self.known)
