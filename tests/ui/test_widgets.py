"""Knob widgets built from the declared specs: ranges the data allows, readable values,
round URLs, inapplicable knobs hidden — checked on the Panel widgets, without a browser."""

from __future__ import annotations

import re

import panel as pn
import pytest

from explorer.methods import REGISTRY
from explorer.ui import ExplorerApp
from explorer.ui import _widgets as W
from explorer.ui._state import ExplorerState


def _spec(method: str, name: str):
    return {s.name: s for s in REGISTRY[method].param_specs}[name]


def _values(widget) -> list:
    slider = widget.objects[-1] if isinstance(widget, pn.Column) else widget
    if isinstance(slider, pn.widgets.DiscreteSlider):
        return list(slider.values)
    return [slider.start, slider.end]


@pytest.mark.parametrize("method, knob", [("fgm", "B"), ("fsa", "k"), ("fs-multi", "B"),
                                          ("fs-manifold", "m"), ("fisher", "k"),
                                          ("rfe", "k"), ("l1-svm", "k")])
def test_feature_count_knobs_end_at_the_number_of_features(method, knob):
    widget = W.widget_for(_spec(method, knob), _spec(method, knob).default, lambda *a: None,
                          n_samples=249, n_features=64)
    values = [v for v in _values(widget) if v is not None]
    assert max(values) == 64  # not 10⁷ on 64 pixels


def test_every_registered_knob_builds_whatever_its_options():
    """FS-Manifold's τ and ρ mix 'auto' with numbers: building them raised TypeError."""
    for cls in REGISTRY.values():
        for spec in cls.param_specs:
            W.widget_for(spec, spec.default, lambda *a: None, n_samples=100, n_features=50)
    box, tau = W.widget_for(_spec("fs-manifold", "tau"), 0.7, lambda *a: None).objects
    assert "auto" not in tau.values and 0.7 in tau.values and tau.value == 0.7
    assert not box.value


def test_small_float_defaults_are_shown_as_they_are():
    for method, name, text in [("fsa", "ridge", "0.001"), ("fgm", "inner_tol", "3e-05"),
                               ("fsa", "huber_h", "0.1")]:
        spec = _spec(method, name)
        widget = W.widget_for(spec, spec.default, lambda *a: None)
        assert isinstance(widget, pn.widgets.DiscreteSlider), (method, name)
        assert widget.value == spec.default
        assert W._fmt(widget.value) == text


def test_leaving_auto_starts_mid_range_not_at_an_extreme():
    seen = []
    spec = _spec("grfl", "lam")
    box = W.widget_for(spec, None, lambda name, value: seen.append((name, value)))
    auto, slider = box.objects
    assert auto.value and slider.disabled
    auto.value = False
    assert not slider.disabled
    (name, value), = seen
    assert name == "lam" and 1e-3 <= value <= 1e3  # not the range's end 1e-8
    auto.value = True
    assert seen[-1] == ("lam", None)


def test_log_grids_are_round_numbers_so_urls_are_too():
    spec = _spec("fgm", "C")
    box, slider = W.widget_for(spec, spec.default, lambda *a: None).objects
    numbers = slider.values
    assert box.label == "C: chosen by cross-validation" and not box.value
    for value in numbers:
        assert len(f"{value:g}".lstrip("0.").replace(".", "").rstrip("0")) <= 2, value
    state = ExplorerState(dataset="digits-3v8", live=False, start_worker=False)
    state.set_param("C", 50.0)
    assert state.query_string().endswith("C=50.0")
    assert not re.search(r"\d{6,}", state.query_string())


@pytest.mark.parametrize("method, name, word", [("fs-manifold", "tau", "auto"),
                                                ("fgm", "C", "cv")])
def test_a_costly_word_is_a_box_beside_the_slider_not_its_end(method, name, word):
    """FS-Manifold's τ = "auto" (21 s of cross-validation on 10 labelled rows) and a C's "cv"
    were the right end of their sliders, one keyboard End away; now a box stands for the
    word, the slider holds numbers only, and the box hands the slider's number back."""
    seen = []
    spec = _spec(method, name)
    box, slider = W.widget_for(spec, spec.default, lambda n, v: seen.append((n, v))).objects
    assert all(isinstance(v, (int, float)) for v in slider.values)
    assert not box.value and not slider.disabled
    box.value = True
    assert seen[-1] == (name, word) and slider.disabled
    box.value = False
    assert seen[-1] == (name, slider.value)
    ticked, _ = W.widget_for(spec, word, lambda *a: None).objects
    assert ticked.value


def test_inapplicable_knobs_are_hidden_until_they_apply():
    app = ExplorerApp(dataset="digits-3v8")
    try:
        app.state.live = False
        knobs = app._knobs
        assert not knobs["poly_gamma"].visible and not knobs["n_bins"].visible
        knobs["feature_map"].value = "poly2"
        assert knobs["poly_gamma"].visible and not knobs["n_bins"].visible
        knobs["feature_map"].value = "binned"
        assert knobs["n_bins"].visible and not knobs["poly_gamma"].visible
    finally:
        app.state.close()


def test_compare_with_never_offers_the_method_itself_and_keeps_the_users_choice():
    """With ℓ1-SVM as the method, *Compare with* neither lists nor shows ℓ1-SVM (its curve is
    the method's); the default comparison with it comes back when another method is picked."""
    app = ExplorerApp(dataset="breast-cancer")
    try:
        app.state.live = False
        select = app.baseline_select
        assert "l1-svm" in select.value and "fgm" not in select.options
        app.state.method = "l1-svm"
        assert "l1-svm" not in select.options and "l1-svm" not in select.value
        assert "fgm" in select.options
        select.value = ["rfe"]
        assert sorted(app.state.baselines) == ["l1-svm", "rfe"]
        swept = app.state.sweep_methods()
        assert swept[:2] == ["l1-svm", "rfe"] and swept.count("l1-svm") == 1
        app.state.method = "fgm"
        assert sorted(select.value) == ["l1-svm", "rfe"] and "fgm" not in select.options
        select.value = ["rfe"]
        assert app.state.baselines == ["rfe"]
    finally:
        app.state.close()


def test_a_notebooks_app_says_where_the_lessons_are_instead_of_a_dead_link():
    """``./teach_fgm`` beside a JupyterLab cell is a 404: outside a server the app says how to
    open the lessons; served, it links them."""
    app = ExplorerApp(dataset="digits-3v8")
    try:
        app.state.live = False
        said = app.lesson_link.object
        assert "](./" not in said and "explorer serve" in said and "/teach_fgm" in said
    finally:
        app.state.close()
    from explorer.ui.app import lesson_link

    assert lesson_link("FGM", served=True).startswith("[How FGM works, step by step](./teach")
