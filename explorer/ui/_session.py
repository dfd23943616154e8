"""A session as text: the URL query of a view and the exported session file that
``explorer run`` replays (dataset, its knobs, method, parameters)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import numpy as np
import param

from ..methods import REGISTRY

SESSION_VERSION = 1
UPLOAD = "upload"


def to_query(state) -> dict[str, str]:
    """The URL query of this view: dataset, its knobs, method and non-default params."""
    query: dict[str, str] = {"dataset": state.dataset if state.dataset != UPLOAD
                             else (state.upload_name or UPLOAD)}
    for k, v in state.dataset_params.items():
        query[f"data.{k}"] = str(v)
    query["method"] = state.method
    defaults = {s.name: s.default for s in state.method_specs()}
    for k, v in state.method_params.items():
        if k in defaults and v != defaults[k]:
            query[k] = str(v)
    return query


def query_string(state) -> str:
    return "?" + urlencode(to_query(state))


def apply_query(state, query: dict[str, Any], *, available: list[str]) -> list[str]:
    """Set the state's dataset, method and parameters from a URL query (values may be strings
    or one-element lists) and load the data; returns the problems (named, left out)."""
    flat = {k: (v[0] if isinstance(v, (list, tuple)) else v) for k, v in query.items()}
    flat = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in flat.items()}
    problems: list[str] = []
    method = flat.pop("method", None)
    dataset = flat.pop("dataset", None)
    data_params = {k[5:]: flat.pop(k) for k in list(flat) if k.startswith("data.")}
    with param.parameterized.discard_events(state):
        if method is not None:
            if method in REGISTRY:
                state.method = method
            else:
                problems.append(f"unknown method {method!r}")
        if dataset is not None:
            if dataset in available:
                state.dataset = dataset
            elif "." in dataset:
                problems.append(f"the link names the uploaded file {dataset!r}, which only the "
                                "page that uploaded it holds: upload it again (or serve it "
                                "with explorer serve --data)")
            else:
                problems.append(f"unknown dataset {dataset!r}")
    state.method_params = {}
    state.dataset_params = parse_specs(state.dataset_specs(), data_params,
                                       f"dataset {state.dataset!r}", problems)
    state.method_params = parse_specs(state.method_specs(), flat, state.method, problems)
    state.load()
    return problems


def export_session(state) -> dict:
    """Dataset, method and parameters as JSON-ready data (``explorer run`` reads it)."""
    return {
        "explorer_session": SESSION_VERSION,
        "dataset": state.dataset if state.dataset != UPLOAD else state.upload_name,
        "dataset_params": {k: jsonable(v) for k, v in state.dataset_params.items()},
        "label": state.label_column,
        "method": state.method,
        "params": {k: jsonable(v) for k, v in state.current_params().items()},
        "metric": state.metric,
        "baselines": list(state.baselines),
    }


def export_json(state) -> str:
    return json.dumps(export_session(state), indent=2)


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
