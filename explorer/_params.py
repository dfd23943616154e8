"""Declarative parameter specifications.

A method (or a catalogue generator) declares its tunable parameters as plain data so that the
UI builds widgets from them, the URL query and session files round-trip them, and validation
speaks with one voice. Nothing here knows about Panel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["float", "int", "choice", "bool"]


@dataclass(frozen=True)
class ParamSpec:
    """One tunable parameter: what it is called, its range, its default and a line of help.

    Parameters
    ----------
    name : str
        Keyword of the estimator's ``__init__`` (or of the generator).
    label : str
        Short human label (shown next to the widget).
    default : Any
        The default value (the same as the ``__init__`` default).
    kind : {"float", "int", "choice", "bool"}
        Widget and validation type.
    low, high : float, optional
        Inclusive bounds for numbers (``None`` = unbounded on that side).
    log : bool
        Whether a slider should move on a log scale.
    choices : tuple
        Allowed values for ``kind="choice"``.
    help : str
        One line shown as a tooltip.
    nullable : bool
        ``None`` is an accepted value (meaning "the paper's default", documented in ``help``).
    auto : str
        What the UI calls ``None`` for a nullable parameter.
    live : bool
        Moving the widget refits immediately (otherwise it waits for Run).
    step : float, optional
        A linear slider's step (default: a hundredth of its range).
    extra : mapping
        Words the value may also be (``allow_strings``, e.g. a C's "cv"), a slider's own
        values (``options``) and the label of the word's box (``word_label``).
    bound : {"n_features", "n_samples"}, optional
        The data caps the value (B, k, m ≤ the number of features): widgets end there.
    when : mapping of parameter name to allowed values
        The parameter only matters when each named parameter has one of the given values
        (``{"feature_map": ("poly2",)}``); the UI hides it otherwise.
    """

    name: str
    label: str
    default: Any
    kind: Kind = "float"
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple = ()
    help: str = ""
    nullable: bool = False
    auto: str = "auto (paper)"
    live: bool = True
    step: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    bound: Literal["n_features", "n_samples"] | None = None
    when: Mapping[str, tuple] = field(default_factory=dict)

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Whether this parameter has an effect given the other parameters' ``values``."""
        return all(values.get(name) in allowed for name, allowed in self.when.items())

    def high_for(self, n_samples: int | None, n_features: int | None) -> float | None:
        """The upper end of the range on data of this size (``bound`` applied)."""
        cap = {"n_features": n_features, "n_samples": n_samples}.get(self.bound or "")
        if cap is None:
            return self.high
        return cap if self.high is None else min(self.high, cap)

    def validate(self, value: Any, owner: str = "") -> Any:
        """Return ``value`` coerced to the declared kind, or raise ``ValueError`` saying why."""
        where = f"{owner}: " if owner else ""
        if value is None:
            if self.nullable:
                return None
            raise ValueError(f"{where}{self.name} must not be None")
        if self.kind == "choice":
            if value not in self.choices:
                allowed = ", ".join(repr(c) for c in self.choices)
                raise ValueError(f"{where}{self.name}={value!r} is not one of {allowed}")
            return value
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                return value.lower() in ("true", "1")
            raise ValueError(f"{where}{self.name} must be True or False, got {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            if self.extra.get("allow_strings") and isinstance(value, str):
                if value in self.extra["allow_strings"]:
                    return value
            raise ValueError(f"{where}{self.name} must be a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"{where}{self.name} must be finite, got {value!r}")
        if self.kind == "int":
            if number != int(number):
                raise ValueError(f"{where}{self.name} must be an integer, got {value!r}")
            number = int(number)
        if self.low is not None and number < self.low:
            raise ValueError(f"{where}{self.name}={value!r} is below its minimum {self.low}")
        if self.high is not None and number > self.high:
            raise ValueError(f"{where}{self.name}={value!r} is above its maximum {self.high}")
        return number

    def parse(self, text: str) -> Any:
        """Parse a value written as text (URL query, command line) and validate it."""
        if text in ("None", "none", "null", "") and self.nullable:
            return None
        if self.kind in ("float", "int"):
            allowed = self.extra.get("allow_strings", ())
            if text in allowed:
                return text
            return self.validate(float(text) if self.kind == "float" else _int(text))
        if self.kind == "choice":
            for choice in self.choices:
                if str(choice) == text:
                    return choice
            return self.validate(text)
        return self.validate(text)


def _int(text: str) -> int:
    value = float(text)
    if value != int(value):
        raise ValueError(f"expected an integer, got {text!r}")
    return int(value)


def specs_by_name(specs: Iterable[ParamSpec]) -> dict[str, ParamSpec]:
    """Index a sequence of specs by parameter name."""
    return {spec.name: spec for spec in specs}


def cv_choice() -> dict:
    """A C parameter's ``extra``: the value "cv" — chosen by cross-validation
    (:mod:`explorer.methods._cv`) — accepted, and offered as a box beside the slider."""
    return {"allow_strings": ("cv",), "words": ("cv",),
            "word_label": "chosen by cross-validation"}
