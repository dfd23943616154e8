"""Every widget of the explorer is built here, from declared :class:`ParamSpec` data.

Keeping construction in one module is deliberate: Panel's roadmap moves widgets to
panel-material-ui, and this is the only file that would change.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import panel as pn

from .._params import ParamSpec

AUTO = "auto (paper)"
NONE = "none"


def _fmt(value) -> str:
    if value is None:
        return AUTO
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _log_options(spec: ParamSpec, value, n: int = 33, integer: bool = False) -> dict:
    low = spec.low if spec.low and spec.low > 0 else 1e-4
    high = spec.high if spec.high else low * 1e4
    grid = np.geomspace(low, high, n)
    if integer:
        grid = np.unique(np.round(grid).astype(int))
    values = set(grid.tolist())
    for extra in (spec.default, value):
        if extra is not None:
            values.add(int(extra) if integer else float(extra))
    options = {_fmt(v): v for v in sorted(values)}
    if spec.nullable:
        options = {AUTO: None, **options}
    return options


def widget_for(spec: ParamSpec, value, on_change: Callable[[str, object], None]):
    """A widget for one parameter; ``on_change(name, value)`` fires on the settled value
    (sliders report ``value_throttled``: a drag refits once, at release)."""
    kwargs = dict(label=spec.label, css_classes=[f"param-{spec.name}"],
                  sizing_mode="stretch_width")
    if spec.kind == "bool":
        widget = pn.widgets.Checkbox(value=bool(value), **kwargs)
        watch = "value"
    elif spec.kind == "choice":
        # None cannot be a Select value in the browser: it travels as the label "none"
        options = [NONE if c is None else str(c) for c in spec.choices]
        widget = pn.widgets.Select(options=options, value=NONE if value is None else str(value),
                                   **kwargs)
        watch = "value"
    elif spec.extra.get("options"):
        values = sorted(set(spec.extra["options"]) | {v for v in (value, spec.default)
                                                        if v is not None})
        options = {_fmt(v): v for v in values}
        widget = pn.widgets.DiscreteSlider(options=options, value=value, **kwargs)
        watch = "value_throttled"
    elif spec.log or spec.nullable or (spec.kind == "int" and spec.high and spec.high > 1000):
        options = _log_options(spec, value, integer=spec.kind == "int")
        current = value if value in options.values() else spec.default
        widget = pn.widgets.DiscreteSlider(options=options, value=current, **kwargs)
        watch = "value_throttled"
    elif spec.kind == "int":
        widget = pn.widgets.IntSlider(start=int(spec.low or 0), end=int(spec.high or 100),
                                      value=int(value), step=int(spec.step or 1), **kwargs)
        watch = "value_throttled"
    else:
        low = spec.low if spec.low is not None else 0.0
        high = spec.high if spec.high is not None else max(1.0, 10 * abs(spec.default or 1))
        widget = pn.widgets.FloatSlider(start=low, end=high, value=float(value),
                                        step=spec.step or (high - low) / 100, **kwargs)
        watch = "value_throttled"

    if spec.help and "description" in widget.param:
        widget.description = spec.help

    def changed(event):
        value = event.new
        if spec.kind == "choice":
            value = next((c for c in spec.choices if (NONE if c is None else str(c)) == value),
                         value)
        on_change(spec.name, value)

    widget.param.watch(changed, watch)
    return widget


def widgets_for(specs, values: dict, on_change) -> list:
    return [widget_for(s, values.get(s.name, s.default), on_change) for s in specs]


def select(name: str, options, value, css: str, **kw):
    return pn.widgets.Select(label=name, options=options, value=value, css_classes=[css],
                             sizing_mode="stretch_width", **kw)


def button(label: str, css: str, color: str = "default", **kw):
    return pn.widgets.Button(label=label, color=color, css_classes=[css], **kw)


def checkbox(label: str, value: bool, css: str):
    return pn.widgets.Checkbox(label=label, value=value, css_classes=[css])


def multi_choice(label: str, options, value, css: str):
    return pn.widgets.MultiChoice(label=label, options=options, value=value, css_classes=[css],
                                  sizing_mode="stretch_width")


def file_input(css: str):
    return pn.widgets.FileInput(accept=".csv,.tsv,.svm,.svmlight,.libsvm,.txt,.npz,.parquet,.pq,"
                                       ".gz,.bz2", css_classes=[css], sizing_mode="stretch_width")


def download(label: str, filename: str, callback, css: str):
    return pn.widgets.FileDownload(label=label, filename=filename, callback=callback,
                                   css_classes=[css], color="default", embed=False)


def table(frame, css: str):
    return pn.widgets.Tabulator(frame, css_classes=[css], pagination="local", page_size=15,
                                sizing_mode="stretch_width", disabled=True, show_index=False)


def progress(css: str):
    return pn.indicators.Progress(value=0, max=100, css_classes=[css], sizing_mode="stretch_width",
                                  height=12)
