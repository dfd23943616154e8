"""The session's method and the user's knob values: the declared parameters with the user's
values over the defaults, their validation, the estimator they make and the settings a task
needs (the state owns the widgets' fields and messages; this part owns the values)."""

from __future__ import annotations

from typing import Any

from .._params import ParamSpec
from ..data import DataError, Dataset
from ..experiments import check_compatible, settings_for_task
from ..methods import get_method


class MethodSettings:
    """The registered method ``key`` and the values the user set (``params``)."""

    def __init__(self, key: str, params: dict[str, Any] | None = None):
        self.key = key
        self.params: dict[str, Any] = dict(params or {})

    @property
    def cls(self):
        return get_method(self.key)

    @property
    def specs(self) -> tuple[ParamSpec, ...]:
        return self.cls.param_specs

    def current(self, data: Dataset | None) -> dict[str, Any]:
        """Declared parameters with the user's values over the defaults; a default beyond the
        data's size is cut to it (FS-Manifold's m = 20 on the 13 features of wine), as the
        widget's range is (a value the user sets is checked by the fit)."""
        sizes = {} if data is None else dict(n_samples=data.n_samples,
                                             n_features=data.n_features)
        values = {s.name: _within(s, s.default, **sizes) for s in self.specs}
        values.update({k: v for k, v in self.params.items() if k in values})
        return values

    def validate(self, name: str, value):
        """``value`` checked against the knob's spec; a ValueError names the problem."""
        specs = {s.name: s for s in self.specs}
        if name not in specs:
            raise ValueError(f"{self.key} has no parameter {name!r}")
        return specs[name].validate(value, owner=self.key)

    def set(self, name: str, value) -> None:
        """Set the knob ``name`` to ``value`` checked by :meth:`validate` (a ValueError keeps
        the old value)."""
        self.params[name] = self.validate(name, value)

    def is_live(self, name: str) -> bool:
        """Whether moving this knob refits at once (the spec's ``live``)."""
        return {s.name: s for s in self.specs}[name].live

    def check(self, data: Dataset | None) -> None:
        """Raise the DataError that says why the method cannot fit this data (or none)."""
        if data is None:
            raise DataError("no data loaded")
        check_compatible(self.key, data, self.current(data))

    def estimator(self, data: Dataset, *, last=None, version=None, fresh: bool = False):
        """The estimator of the current values. It starts from the previous model ``last``
        only when the user asked for it (``warm_start`` ticked) and ``last`` was fitted on the
        same data (``version``) by the same method; its records then say ``warm_start``."""
        cls = self.cls
        params = self.current(data)
        estimator = cls(**params)
        if not fresh and params.get("warm_start") and cls.supports_warm_start \
                and type(last) is cls and getattr(last, "_fitted_version", None) == version:
            estimator.continue_from(last)
        return estimator

    def suit(self, data: Dataset | None) -> str:
        """Set the one choice (FSA's loss) that makes the method solve the data's task when
        the current values do not (FSA on a ranking dataset: loss = 'ranking'), and say so;
        "" when nothing changed. The widgets, URL and exported session show the setting."""
        if data is None:
            return ""
        try:
            fix = settings_for_task(self.key, data.task, self.current(data))
        except (TypeError, ValueError):
            return ""
        if not fix:
            return ""
        self.params.update(fix)
        changes = ", ".join(f"{name} = {value!r}" for name, value in fix.items())
        return f"{self.cls.display_name}'s {changes} for this {data.task} target"

    def used_auto_values(self, estimator, data: Dataset | None) -> dict[str, Any]:
        """The values the fitted model used for the knobs left on *auto* or a word (its
        ``<name>_`` attributes: GrFL's λ = 0.1·λ_max, FS-multi's C = 0.1·n, FSA's η, the C
        that "cv" chose, FS-Manifold's τ, …)."""
        if estimator is None:
            return {}
        params = self.current(data)
        return {spec.name: getattr(estimator, spec.name + "_") for spec in self.specs
                if (spec.nullable and params.get(spec.name) is None
                    or isinstance(params.get(spec.name), str) and spec.kind != "choice")
                and hasattr(estimator, spec.name + "_")}


def _within(spec: ParamSpec, value, n_samples: int | None = None,
            n_features: int | None = None):
    """A numeric default cut to the upper end of its range on data of this size."""
    high = spec.high_for(n_samples, n_features) if spec.bound else None
    if high is None or spec.kind not in ("int", "float") or value is None or value <= high:
        return value
    return int(high) if spec.kind == "int" else float(high)
