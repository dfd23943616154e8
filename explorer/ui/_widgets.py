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
    """A value as a slider shows it: ``auto`` for None, 4 significant digits for floats."""
    if value is None:
        return AUTO
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def nice_grid(low: float, high: float, integer: bool = False) -> list:
    """Round values from ``low`` to ``high`` on a log scale: 1-2-5 per decade over wide
    ranges, 1-1.5-2-3-5-7 over narrow ones (so a URL carries ``C=50``, not ``C=39.2418…``)."""
    low = max(low, 1.0 if integer else 1e-12)
    decades = np.log10(high / low) if high > low else 0.0
    mantissas = (1.0, 2.0, 5.0) if decades > 4 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    values = {float(low), float(high)}
    for e in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1):
        for m in mantissas:
            v = float(f"{m * 10.0 ** e:.3g}")
            if low <= v <= high:
                values.add(v)
    if integer:
        return sorted({int(round(v)) for v in values})
    return sorted(values)


def _numeric_options(spec: ParamSpec, value, high, integer: bool) -> list:
    """The discrete values of a log-scale (or very wide) numeric knob."""
    low = spec.low if spec.low is not None else 0.0
    if high is None:
        high = max(low * 1e4, 10 * abs(spec.default or 1.0))
    values = nice_grid(low if low > 0 else (1 if integer else min(1e-6, high / 1e6)),
                       high, integer)
    if low == 0:
        values = [0 if integer else 0.0] + values
    for extra in (spec.default, value):
        if isinstance(extra, (int, float)) and not isinstance(extra, bool):
            values.append(int(extra) if integer else float(extra))
    return sorted(set(values))


def _discrete_slider(options: list, value, words=(), **kwargs):
    """A slider over the numbers ``options`` then the ``words`` (a C's "cv"); a number not
    on the grid snaps to the nearest one on a log scale."""
    labels = {_fmt(v): v for v in [*options, *words]}
    if value not in labels.values():
        value = min(options, key=lambda v: abs(np.log10(max(abs(v), 1e-300)) -
                                               np.log10(max(abs(value), 1e-300))))
    return pn.widgets.DiscreteSlider(options=labels, value=value, **kwargs)


def _needs_grid(spec: ParamSpec, high) -> bool:
    if spec.log:
        return True
    low = spec.low or 0.0
    if high is None:
        return False
    if spec.kind == "int":
        return high - low > 1000
    if low == 0 and high >= 100:  # 0, then a log grid: a linear 0…1e8 slider is unusable
        return True
    default = abs(spec.default) if isinstance(spec.default, (int, float)) else 1.0
    # a linear float slider whose default sits below 1 % of the range would show it as 0
    return default > 0 and default < 0.01 * (high - low)


def widget_for(spec: ParamSpec, value, on_change: Callable[[str, object], None], *,
               n_samples: int | None = None, n_features: int | None = None):
    """A widget for one parameter; ``on_change(name, value)`` fires on the settled value
    (sliders report ``value_throttled``: a drag refits once, at release).

    Ranges end where the data does (``spec.bound``: B, k, m ≤ the number of features), log
    parameters move on a rounded log grid, and a parameter whose ``None`` means "the paper's
    default" gets an *auto* box next to its slider, so leaving auto never jumps to an extreme.
    """
    kwargs = dict(label=spec.label, sizing_mode="stretch_width")
    css = [f"param-{spec.name}"]
    integer = spec.kind == "int"
    high = spec.high_for(n_samples, n_features)
    if spec.kind == "bool":
        widget = pn.widgets.Checkbox(value=bool(value), css_classes=css, **kwargs)
        watch = "value"
    elif spec.kind == "choice":
        # None cannot be a Select value in the browser: it travels as the label "none"
        options = [NONE if c is None else str(c) for c in spec.choices]
        widget = pn.widgets.Select(options=options, value=NONE if value is None else str(value),
                                   css_classes=css, **kwargs)
        watch = "value"
    else:
        slider_value = value
        if value is None or isinstance(value, str):
            slider_value = spec.default if isinstance(spec.default, (int, float)) else None
        word = _word(spec)
        if spec.extra.get("options"):
            numbers = sorted({v for v in (*spec.extra["options"], value, spec.default)
                              if isinstance(v, (int, float)) and not isinstance(v, bool)})
            if slider_value is None:
                slider_value = numbers[len(numbers) // 2]
            widget = pn.widgets.DiscreteSlider(options={_fmt(v): v for v in numbers},
                                               value=slider_value, css_classes=css, **kwargs)
        elif _needs_grid(spec, high):
            options = _numeric_options(spec, slider_value, high, integer)
            if slider_value is None:  # auto: park the slider mid-range until it is used
                slider_value = options[len(options) // 2]
            widget = _discrete_slider(options, slider_value, css_classes=css, **kwargs)
        elif integer:
            end = int(high if high is not None else 100)
            start = int(spec.low or 0)
            current = int(slider_value if slider_value is not None else start)
            widget = pn.widgets.IntSlider(start=start, end=max(end, current, start + 1),
                                          value=current, step=int(spec.step or 1),
                                          css_classes=css, **kwargs)
        else:
            low = spec.low if spec.low is not None else 0.0
            top = high if high is not None else max(1.0, 10 * abs(spec.default or 1))
            current = float(slider_value if slider_value is not None else low)
            step = spec.step or (top - low) / 100
            widget = pn.widgets.FloatSlider(start=low, end=top, value=current, step=step,
                                            format=_number_format(step),
                                            css_classes=css, **kwargs)
        watch = "value_throttled"
        if spec.nullable:
            return _with_auto(spec, widget, value is None, on_change, css)
        if word is not None:  # C's "cv", τ's "auto": a box, never a slider's end
            return _with_auto(spec, widget, value == word, on_change, css, word=word)

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


def _number_format(step: float) -> str:
    """A numbro format with as many decimals as the step needs (``0.00`` for 0.01)."""
    decimals = int(min(6, max(0, -np.floor(np.log10(step))))) if step > 0 else 2
    return "0" if decimals == 0 else "0." + "0" * decimals


def show_used(knob, value) -> bool:
    """Make a nullable knob's disabled slider (the *auto* box's, :func:`_with_auto`) show the
    value the last fit used, so it never shows a value that is not in use and unticking
    auto starts from it. Returns False for a widget that is not an *auto* knob."""
    if not isinstance(knob, pn.Column) or len(knob.objects) != 2 or \
            not isinstance(knob.objects[0], pn.widgets.Checkbox):
        return False
    slider = knob.objects[1]
    if not isinstance(value, (int, float, np.integer, np.floating)) or \
            isinstance(value, bool) or not np.isfinite(value):
        return False
    if isinstance(slider, pn.widgets.DiscreteSlider):
        options = dict(slider.options)
        numbers = [v for v in options.values() if isinstance(v, (int, float))]
        value = int(value) if numbers and all(isinstance(v, int) for v in numbers) \
            else float(value)
        if value not in options.values():
            options[_fmt(value)] = value
            slider.options = dict(sorted(options.items(), key=lambda kv: (
                not isinstance(kv[1], (int, float)),
                kv[1] if isinstance(kv[1], (int, float)) else 0)))
        slider.value = value
    elif isinstance(slider, (pn.widgets.IntSlider, pn.widgets.FloatSlider)):
        value = int(value) if isinstance(slider, pn.widgets.IntSlider) else float(value)
        slider.start, slider.end = min(slider.start, value), max(slider.end, value)
        slider.value = value
    else:
        return False
    return True


def _word(spec: ParamSpec) -> str | None:
    """The word a numeric knob also takes (C's "cv", FS-Manifold's τ and ρ "auto"), if any."""
    words = [v for v in spec.extra.get("options", ()) if isinstance(v, str)] or \
        list(spec.extra.get("words", ()))
    return words[0] if words else None


WORD_LABELS = {"cv": "chosen by cross-validation", "auto": "auto"}


def _with_auto(spec: ParamSpec, slider, auto: bool, on_change, css, word=None):
    """A nullable knob: an *auto* box (value None) and the slider it disables; with ``word``
    the box stands for that value instead (a C's "cv": cross-validation a keyboard's End on
    the slider used to start, 21 s of it for FS-Manifold's τ)."""
    said = spec.auto if word is None else spec.extra.get("word_label",
                                                         WORD_LABELS.get(word, word))
    box = pn.widgets.Checkbox(label=f"{spec.label}: {said}", value=auto,
                              css_classes=[f"auto-{spec.name}"])
    slider.disabled = auto
    if spec.help:
        slider.description = spec.help

    def on_box(event):
        slider.disabled = event.new
        on_change(spec.name, word if event.new else slider.value)

    def on_slider(event):
        if not box.value:
            on_change(spec.name, event.new)

    box.param.watch(on_box, "value")
    slider.param.watch(on_slider, "value_throttled")
    return pn.Column(box, slider, css_classes=css, sizing_mode="stretch_width", margin=0)


def widgets_for(specs, values: dict, on_change, **sizes) -> dict:
    """One widget per spec, by parameter name, hidden where it does not apply."""
    widgets = {}
    for s in specs:
        w = widget_for(s, values.get(s.name, s.default), on_change, **sizes)
        w.visible = s.applies(values)
        widgets[s.name] = w
    return widgets


def select(name: str, options, value, css: str, **kw):
    kw.setdefault("sizing_mode", "stretch_width")
    return pn.widgets.Select(label=name, options=options, value=value, css_classes=[css], **kw)


def button(label: str, css: str, color: str = "default", **kw):
    return pn.widgets.Button(label=label, color=color, css_classes=[css], **kw)


def stop_button(css: str, label: str = "Stop"):
    """A Stop button, red only while there is something to stop (enabled): a disabled red
    button read as still running after a run had ended."""
    stop = pn.widgets.Button(label=label, color="danger", css_classes=[css])

    def follow(event):
        stop.color = "default" if event.new else "danger"

    stop.param.watch(follow, "disabled")
    return stop


def autocomplete(label: str, options, css: str, **kw):
    """A text box that completes to one of ``options`` as the user types (any part of the
    text, case-insensitive)."""
    return pn.widgets.AutocompleteInput(label=label, options=list(options), restrict=True,
                                        case_sensitive=False, search_strategy="includes",
                                        min_characters=1, css_classes=[css], **kw)


def checkbox(label: str, value: bool, css: str):
    return pn.widgets.Checkbox(label=label, value=value, css_classes=[css])


def multi_choice(label: str, options, value, css: str):
    return pn.widgets.MultiChoice(label=label, options=options, value=value, css_classes=[css],
                                  sizing_mode="stretch_width")


# every file is sent: the server's loaders name the format they could not read in words (the
# browser's check of the file's MIME type refused MATLAB files as "File is of invalid type ·
# Expects text/csv, …", and a browser often reports no type at all for .svm or .npz)
UPLOAD_TYPES: list[str] = []
UPLOAD_CHUNK = 2 * 1024 * 1024


class BoundedFileDropper(pn.widgets.FileDropper):
    """A file upload that travels in chunks of ``UPLOAD_CHUNK`` bytes (a whole file in one
    websocket message closed the connection above ~53 MB, silently) and refuses a file
    above ``limit_bytes`` at its first chunk: ``on_too_large(name, approx_bytes)`` is called
    and the rest of its chunks are dropped, never held in memory; ``on_refused_sent(name)``
    once the browser has sent its last chunk (its drop zone then reads "Upload complete")."""

    def __init__(self, limit_bytes: float, on_too_large, on_refused_sent=None, **params):
        super().__init__(**params)
        self._limit = limit_bytes
        self._on_too_large = on_too_large
        self._on_refused_sent = on_refused_sent
        self._refused: set[str] = set()

    def _process_event(self, event):
        data = event.data
        if event.event_name == "upload_event":
            name = data["name"]
            if data["chunk"] == 1:
                self._refused.discard(name)
                if (data["total_chunks"] - 1) * self.chunk_size >= self._limit:
                    self._refused.add(name)
                    self._on_too_large(name, data["total_chunks"] * self.chunk_size)
            if name in self._refused:
                if data["chunk"] == data["total_chunks"] and self._on_refused_sent:
                    self._on_refused_sent(name)
                return
        super()._process_event(event)


class UploadBox(pn.viewable.Viewer):
    """The upload drop zone in a box of its own, so that a refused file can be taken off the
    page: the browser's drop zone says "Upload complete" for every file it sent, also one the
    server refused (too large, unreadable) beside the refusal in red — :meth:`clear` puts an
    empty drop zone in its place. ``on_file(*_)`` is called when a file arrived (read it
    from :attr:`value`)."""

    def __init__(self, css: str, limit_bytes: float, on_too_large, on_file):
        super().__init__()
        self._make = lambda: BoundedFileDropper(
            limit_bytes, on_too_large, self._later_clear, accepted_filetypes=UPLOAD_TYPES,
            chunk_size=UPLOAD_CHUNK, multiple=False, layout="compact", css_classes=[css],
            sizing_mode="stretch_width", width=None)
        self._on_file = on_file
        self.dropper = self._fresh()
        self._box = pn.Column(self.dropper, sizing_mode="stretch_width", margin=0)

    def _fresh(self) -> BoundedFileDropper:
        dropper = self._make()
        dropper.param.watch(self._on_file, "value")
        return dropper

    @property
    def value(self) -> dict:
        return self.dropper.value

    def clear(self) -> None:
        """An empty drop zone instead of the one showing the refused file."""
        self.dropper = self._fresh()
        self._box.objects = [self.dropper]

    def _later_clear(self, _name: str) -> None:
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.add_next_tick_callback(self.clear)  # after the event that said so
        else:
            self.clear()

    def __panel__(self):
        return self._box


def download(label: str, filename: str, callback, css: str):
    return pn.widgets.FileDownload(label=label, filename=filename, callback=callback,
                                   css_classes=[css], color="default", embed=False)


def progress(css: str):
    return pn.indicators.Progress(value=0, max=100, css_classes=[css], sizing_mode="stretch_width",
                                  height=12)
