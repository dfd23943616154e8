"""A session as text: the URL query of a view and the exported session file that
``explorer run`` replays (dataset, its knobs, method, parameters). Pure functions of the
data's origin and the method's settings, so the codec is tested without a session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import numpy as np

from ..methods import REGISTRY
from ..metrics import METRICS
from ._data_source import UPLOAD, DataSource
from ._knowledge import BAN, FACTORS, PIN, POSITIVE

SESSION_VERSION = 1
DEFAULT_BASELINES = ("l1-svm",)  # *Compare with* on a new page
COMPARE, MEASURE = "compare", "measure"  # the query's names of the comparison's settings
IMAGE = "image"  # the query's name of the image shape the user gave ("32x32", "none")


def shape_text(shape) -> str:
    """The user's image shape as the URL and the app's box write it: "32x32", or "none"."""
    return "none" if shape == "none" else f"{shape[0]}x{shape[1]}"


def to_query(dataset: str, source, settings, *, baselines=DEFAULT_BASELINES,
             metric: str | None = None, knowledge=None) -> dict[str, str]:
    """The URL query of a view of ``dataset`` (its origin ``source``, a
    :class:`~._data_source.DataSource`) fitted by ``settings`` (a
    :class:`~._method_settings.MethodSettings`): dataset, its knobs, method and the
    parameters set away from their defaults; the methods of *Compare with* and the measure
    when they are not a new page's."""
    query: dict[str, str] = {"dataset": dataset if dataset != UPLOAD
                             else (source.upload_name or UPLOAD)}
    for k, v in source.params.items():
        query[f"data.{k}"] = str(v)
    if source.image_shape is not None:
        query[IMAGE] = shape_text(source.image_shape)
    query["method"] = settings.key
    defaults = {s.name: s.default for s in settings.specs}
    for k, v in settings.params.items():
        if k in defaults and v != defaults[k]:
            query[k] = str(v)
    if tuple(baselines) != DEFAULT_BASELINES:
        query[COMPARE] = ",".join(baselines)
    if metric is not None and metric != "accuracy":
        query[MEASURE] = metric
    if knowledge:
        query.update(knowledge.to_query())
    return query


def query_string(dataset: str, source, settings, **comparison) -> str:
    return "?" + urlencode(to_query(dataset, source, settings, **comparison))


@dataclass
class Parsed:
    """A URL query read: the method and dataset it names (None: unchanged), their knobs, and
    the problems (named, left out)."""

    method: str | None = None
    dataset: str | None = None
    data_params: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    baselines: list | None = None
    metric: str | None = None
    knowledge_texts: dict = field(default_factory=dict)  # pin, ban, factors, positive
    image_shape: tuple | str | None = None  # (rows, columns), "none" (no image) or unset


def parse_query(query: dict[str, Any], *, available: list[str], method: str,
                dataset: str) -> Parsed:
    """Read a URL query (values may be strings or one-element lists) against the registry and
    the ``available`` datasets; knobs are parsed by the specs of the method and dataset the
    view will show (the query's, else the current ``method`` and ``dataset``)."""
    flat = {k: (v[0] if isinstance(v, (list, tuple)) else v) for k, v in query.items()}
    flat = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in flat.items()}
    out = Parsed()
    wanted_method = flat.pop("method", None)
    wanted_dataset = flat.pop("dataset", None)
    compared = flat.pop(COMPARE, None)
    measure = flat.pop(MEASURE, None)
    image = flat.pop(IMAGE, None)
    if image is not None:
        try:
            out.image_shape = image_setting(image)
        except ValueError as exc:
            out.problems.append(f"image: {exc}")
    out.knowledge_texts = {k: flat.pop(k) for k in (PIN, BAN, FACTORS, POSITIVE) if k in flat}
    if compared is not None:
        names = [n for n in compared.split(",") if n]
        unknown = [n for n in names if n not in REGISTRY]
        if unknown:
            out.problems.append(f"compare: unknown method(s) {', '.join(unknown)}")
        out.baselines = [n for n in names if n in REGISTRY]
    if measure is not None:
        if measure in METRICS:
            out.metric = measure
        else:
            out.problems.append(f"measure: unknown {measure!r} (known: {', '.join(METRICS)})")
    data_texts = {k[5:]: flat.pop(k) for k in list(flat) if k.startswith("data.")}
    if wanted_method is not None:
        if wanted_method in REGISTRY:
            out.method = wanted_method
        else:
            out.problems.append(f"unknown method {wanted_method!r}")
    if wanted_dataset is not None:
        if wanted_dataset in available:
            out.dataset = wanted_dataset
        elif "." in wanted_dataset:
            out.problems.append(
                f"the link names the uploaded file {wanted_dataset!r}, which only the page "
                "that uploaded it holds: upload it again (or serve it with explorer serve "
                "--data)")
        else:
            out.problems.append(f"unknown dataset {wanted_dataset!r}")
    name = out.dataset or dataset
    out.data_params = parse_specs(DataSource.specs(name), data_texts, f"dataset {name!r}",
                                  out.problems)
    key = out.method or method
    out.params = parse_specs(REGISTRY[key].param_specs, flat, key, out.problems)
    return out


def image_setting(text):
    """The user's image shape from a text: (rows, columns), "none" (not an image) or None
    (empty: the data's own, or the shape guessed for it). Raises ValueError."""
    from ..data import parse_shape

    text = "" if text is None else str(text).strip()
    if text.lower() in ("none", "no", "off"):
        return "none"
    return parse_shape(text)


def export_session(dataset: str, source, settings, *, params: dict, metric: str,
                   baselines, knowledge=None) -> dict:
    """Dataset, method and parameters (``params``: every knob's value) and what the user
    knows (``knowledge``) as JSON-ready data (``explorer run`` reads it)."""
    saved = {} if not knowledge else {"knowledge": knowledge.to_session()}
    return {**saved,
        "explorer_session": SESSION_VERSION,
        "dataset": dataset if dataset != UPLOAD else source.upload_name,
        "dataset_params": {k: jsonable(v) for k, v in source.params.items()},
        "label": source.label_column,
        **({} if source.image_shape is None else
           {"image_shape": source.image_shape if source.image_shape == "none"
            else list(source.image_shape)}),
        "method": settings.key,
        "params": {k: jsonable(v) for k, v in params.items()},
        "metric": metric,
        "baselines": list(baselines),
    }


def parse_specs(specs, texts: dict, owner: str, problems: list) -> dict:
    """Parse URL texts by their parameter specs; unknown names and bad values go to
    ``problems`` (named) and are left out."""
    by_name = {spec.name: spec for spec in specs}
    values = {}
    for name, text in texts.items():
        if name not in by_name:
            problems.append(f"{owner} has no parameter {name!r}")
            continue
        try:
            values[name] = by_name[name].parse(text)
        except ValueError as exc:
            problems.append(f"{name}: {exc}")
    return values


def jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    return value
