"""The dashboard tells the truth, checked in a real browser (Playwright + Debian chromium).

Each test reads what a user sees: the status text, and the plots' real ranges and data taken
from the Bokeh models in the page — not only that a widget exists.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import psutil
import pytest
from playwright.sync_api import Page, expect

from explorer.methods import REGISTRY

from .conftest import ROOT, start_server, stop_server
from .test_browser import settled_status, status, text, wait_for, wait_text

pytestmark = pytest.mark.ui

# a dataset that suits each registered method (binary, regression, semi-supervised, …)
SUITS = {
    "fgm": "digits-3v8", "fs-multi": "digits-3v8", "grfl": "xor", "fsa": "fsa-correlated",
    "fs-manifold": "digits-3v8-semi", "l1-svm": "digits-3v8", "l1-logreg": "digits-3v8",
    "rfe": "digits-3v8", "fisher": "digits-3v8", "lasso": "fsa-regression",
    "abess": "digits-3v8", "abess-reg": "fsa-regression", "random": "digits-3v8",
}

FIGURE = """title => {
  const grab = v => (v && v.shape) ? {values: Array.from(v), shape: Array.from(v.shape)}
                                   : Array.from(v);
  let found = null;
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers) continue;
    const glyphs = [];
    for (const r of m.renderers) {
      if (!r.data_source || !r.glyph) continue;
      const d = r.data_source.data;
      const entries = d instanceof Map ? [...d.entries()] : Object.entries(d);
      const cols = {};
      for (const [k, v] of entries) cols[k] = k === 'image' ? grab(v[0]) : Array.from(v);
      glyphs.push({type: r.glyph.type, cols});
    }
    found = {title: m.title.text, x: [m.x_range.start, m.x_range.end],
             y: [m.y_range.start, m.y_range.end], yscale: m.y_scale.type,
             xscale: m.x_scale.type, glyphs};
  }
  return found;
}"""


# what of a figure's drawn lines and markers its legend hides, in screen pixels: each line
# sampled 16 times per segment, mapped through the frame's own scales, against the legend
# view's box (null without a legend)
UNDER_LEGEND = """title => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers) continue;
    const legend = (m.center || []).find(a => a.type === 'Legend');
    const view = Bokeh.index.find_one(m);
    if (!legend || !view || !legend.items.length) return null;
    const box = Bokeh.index.find_one(legend).bbox;
    const xs = view.frame.x_scale, ys = view.frame.y_scale;
    const hidden = [];
    let drawn = 0;
    for (const r of m.renderers) {
      if (!r.data_source || !r.glyph || !r.visible || !r.glyph.x || !r.glyph.y) continue;
      const d = r.data_source.data, get = k => d instanceof Map ? d.get(k) : d[k];
      const X = get(r.glyph.x.field), Y = get(r.glyph.y.field);
      if (!X || !Y) continue;
      const sx = Array.from(X, v => xs.compute(v)), sy = Array.from(Y, v => ys.compute(v));
      const points = [];
      for (let i = 0; i < sx.length; i++) {
        points.push([sx[i], sy[i], X[i], Y[i]]);
        if (r.glyph.type === 'Line' && i + 1 < sx.length) for (let t = 1; t < 16; t++)
          points.push([sx[i] + (sx[i + 1] - sx[i]) * t / 16,
                       sy[i] + (sy[i + 1] - sy[i]) * t / 16, X[i], Y[i]]);
      }
      for (const [a, b, x, y] of points) {
        if (!isFinite(a) || !isFinite(b)) continue;
        drawn++;
        if (a >= box.left && a <= box.right && b >= box.top && b <= box.bottom)
          hidden.push([r.glyph.type, r.glyph.y.field, x, y]);
      }
    }
    return {location: legend.location, drawn, hidden};
  }
  return null;
}"""


# the labels of a figure's legend (drawn on the canvas, not in the page's text)
LEGEND_LABELS = """title => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers) continue;
    const legend = (m.center || []).find(a => a.type === 'Legend');
    return legend ? legend.items.map(i => (i.label && i.label.value) || String(i.label)) : [];
  }
  return null;
}"""


def assert_legend_hides_nothing(page: Page, title: str, timeout: float = 10.0) -> None:
    """The figure's legend (if it has one) hides no drawn line or marker, once the last
    update has been drawn (the legend moves with the data)."""
    seen = []

    def clear():
        seen.append(page.evaluate(UNDER_LEGEND, title))
        return seen[-1] is None or (seen[-1]["drawn"] and not seen[-1]["hidden"])

    try:
        wait_for(clear, timeout)
    except AssertionError:
        raise AssertionError(f"{title}: the legend hides {seen[-1]}") from None


def label(method: str) -> str:
    """The method's entry in the *Method* select."""
    return f"{REGISTRY[method].display_name or method} ({method})"


def _plain(value):
    return value["values"] if isinstance(value, dict) else value


def figure(page: Page, title: str, timeout: float = 20.0) -> dict:
    """The newest Bokeh figure whose title starts with ``title``: ranges and glyph data."""
    return wait_for(lambda: page.evaluate(FIGURE, title), timeout)


@pytest.fixture
def console(page: Page):
    """Browser console errors, except a failed load of an external (CDN) resource: this
    machine has no internet, and Panel links a few stylesheets from its CDN
    (holoviz/panel#7073)."""
    errors: list[str] = []
    failed_external = []
    page.on("requestfailed", lambda r: failed_external.append(r.url)
            if not r.url.startswith("http://127.0.0.1") else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    def real_errors() -> list[str]:
        return [e for e in errors if "net::ERR_NAME_NOT_RESOLVED" not in e]

    return real_errors


AXIS_LABELS = """title => {
  let found = null;
  for (const doc of Bokeh.documents) for (const m of doc.all_models)
    if (m.title && m.title.text && m.title.text.startsWith(title) && m.below &&
        Bokeh.index.find_one(m))
      found = m.below.map(a => a.axis_label || "").join(" ");
  return found; }"""


def assert_clean_log(server_log) -> None:
    """No traceback or error in the server's log — including tornado's report of a write to
    the websocket of a page the previous test closed, which the apps turn into a debug line
    (`explorer.ui._server.quiet_closed_pages`)."""
    log = server_log()
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
    # nor a Bokeh validation warning about a model of the page (W-1005: a fixed-size figure
    # without width and height, one line per page served for the weight images)
    assert not re.search(r"\bW-1\d{3} \(", log), log[-3000:]


# ------------------------------------------------------------------ 1 · every method, live
# GrFL's default (100 generated features) takes ~25 s on xor here: the URL test uses fewer
QUICK = {"grfl": "&max_features=30"}


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_every_method_fits_from_the_url(page: Page, server, server_log, console, method):
    page.goto(f"{server}/explorer?dataset={SUITS[method]}&method={method}"
              f"{QUICK.get(method, '')}")
    line = settled_status(page, timeout=60)
    assert re.search(r"Selected: \d+ (input )?features", line)
    expect(page.locator(".select-method select")).to_have_value(label(method))
    knob = REGISTRY[method].sparsity_param
    expect(page.locator(f".param-{knob}").first).to_be_visible()
    assert f"method={method}" in page.url
    fig, values = wait_for(lambda: objective_drawn(page))
    # a log axis around every objective drawn, whether one record (the baselines) or 500
    assert fig["yscale"] == "LogScale"
    assert 0 < fig["y"][0] < min(values) and max(values) < fig["y"][1], (fig["y"], values)
    # FSA's kept count and schedule fall by decades: a log axis around them; a path's count
    # grows on a linear one
    def kept_covered():  # (the plot's update may trail the status line)
        fig = page.evaluate(FIGURE, "#features") or {"glyphs": []}
        counts = [v for g in fig["glyphs"] for key in ("n_selected", "M_e")
                  for v in g["cols"].get(key, [])
                  if isinstance(v, (int, float)) and math.isfinite(v)]
        return fig if counts and fig["y"][0] <= min(counts) and max(counts) <= fig["y"][1] \
            else None

    kept = wait_for(kept_covered)
    assert kept["yscale"] == ("LogScale" if REGISTRY[method].has_schedule else "LinearScale")
    # each legend sits where it hides no line or marker (FS-multi's upper bound ran under it)
    for title in ("objective", "#features"):
        assert_legend_hides_nothing(page, title)
    assert_clean_log(server_log)
    assert console() == []


def objective_drawn(page: Page):
    """(figure, objective values drawn) of the objective plot, once it has points."""
    fig = page.evaluate(FIGURE, "objective")
    values = [v for g in (fig or {}).get("glyphs", []) for v in g["cols"].get("objective", [])
              if isinstance(v, (int, float)) and math.isfinite(v)]
    return (fig, values) if values else None


def test_every_method_selectable_in_the_sidebar(page: Page, server, server_log, console, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher")
    line = settled_status(page)
    for method in sorted(set(REGISTRY) - {"fisher"}):
        if SUITS[method] != page.locator(".select-dataset select").input_value():
            # the previous method may not suit the new data (it says so); no wait for a fit
            page.locator(".select-dataset select").select_option(SUITS[method])
            wait_text(page, ".data-summary", SUITS[method])
        page.locator(".select-method select").select_option(label(method))
        # the server applies the choice (knobs, URL, status reset) in one callback: until the
        # URL says so, a finished fit of the previous method on the new data can still show
        expect(page).to_have_url(re.compile(rf"[?&]method={re.escape(method)}(&|$)"),
                                 timeout=20000)
        knob = REGISTRY[method].sparsity_param
        expect(page.locator(f".param-{knob}").first).to_be_visible(timeout=20000)
        if method in QUICK:  # a slow default: fitting live is enough, the URL test finishes it
            line = wait_for(lambda: (lambda s: s if "running" in s and "iteration" in s
                                     else None)(status(page)), 60)
        else:
            line = settled_status(page, timeout=90, differs_from=line)
        assert f"method={method}" in page.url, (method, page.url)
        if method == "fs-manifold":
            shot(page, "fs-manifold")
    assert_clean_log(server_log)
    assert console() == []


def test_fs_manifold_tau_moves_from_the_url(page: Page, server):
    page.goto(f"{server}/explorer?dataset=digits-3v8-semi&method=fs-manifold&tau=0.7")
    settled_status(page, timeout=90)
    expect(page.locator(".select-method select")).to_have_value(label("fs-manifold"))
    assert re.search(r"τ \(manifold weight\):\s*0\.7", text(page, ".param-tau"))
    wait_text(page, ".explanation", "(τ = 0.7")  # its own update, after the status line's


def test_fsa_regression_is_accepted(page: Page, server):
    page.goto(f"{server}/explorer?dataset=fsa-regression&method=fsa&loss=squared")
    line = settled_status(page, timeout=60)
    assert "test RMSE" in line and "classifier" not in text(page, ".message")


# ------------------------------------------------------------------ 2 · one setting, one result
def _model(line: str) -> tuple[str, str]:
    m = re.search(r"Selected: (\d+) features · objective (\S+)", line)
    return m.group(1), m.group(2)


def test_slider_path_url_and_export_give_the_same_model(page: Page, server, context,
                                                        tmp_path):
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=10")
    line = settled_status(page)
    handle = page.locator(".param-B .noUi-handle").first
    for _ in range(2):  # 10 → 7 → 5 on the rounded grid
        handle.focus()
        handle.press("ArrowLeft")
        line = settled_status(page, differs_from=line)
    wait_for(lambda: "B=5" in page.url)
    assert re.search(r"B \(features per block\):\s*5\b", text(page, ".param-B"))
    by_slider = _model(line)

    fresh = context.new_page()
    fresh.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=5")
    assert _model(settled_status(fresh)) == by_slider

    with page.expect_download() as download:
        page.locator(".btn-export button").click()
    session = tmp_path / "session.json"
    download.value.save_as(session)
    out = subprocess.run([sys.executable, "-m", "explorer.cli", "run", str(session)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"selected {by_slider[0]} features" in out.stdout


# ------------------------------------------------------------------ 3 · the sparsity map
def test_sparsity_map_spans_the_selected_features(page: Page, server, shot):
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=5")
    n = int(re.search(r"Selected: (\d+)", settled_status(page)).group(1))
    fig = wait_for(lambda: (lambda f: f if f and f["x"][1] >= n else None)(
        page.evaluate(FIGURE, "entries and exits")))
    ever = int(re.search(r"(\d+) features ever selected", fig["title"]).group(1))
    assert ever >= n
    assert fig["x"][0] <= 0 and fig["x"][1] >= ever  # every drawn feature is on the axis
    assert fig["y"][1] >= 15  # 15 outer iterations
    width = page.locator(".view-sparsity").first.bounding_box()["width"]
    assert width > 600
    shot(page)


LEGEND_AND_FRAME = """title => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title)) continue;
    const sides = [...(m.center || []), ...(m.below || []), ...(m.above || []),
                   ...(m.left || []), ...(m.right || [])];
    const legend = sides.find(a => a.type === 'Legend');
    const view = Bokeh.index.find_one(m);
    if (!legend || !view || !legend.items.length) return null;
    const box = Bokeh.index.find_one(legend).bbox, f = view.frame.bbox;
    return {legend: [box.left, box.top, box.right, box.bottom],
            frame: [f.left, f.top, f.right, f.bottom]};
  }
  return null;
}"""


def test_the_map_legend_covers_no_cell(page: Page, server, shot):
    """The map's legend (true features' marks) sits outside its frame: inside, top right, it
    covered the latest iterations' last entries (a refinement's added features)."""
    page.goto(f"{server}/explorer?dataset=text-like&method=fgm&B=4&refine=auto&k=20")
    assert re.search(r"Selected: 20 features", settled_status(page))
    boxes = wait_for(lambda: page.evaluate(LEGEND_AND_FRAME, "entries and exits"))
    (left, top, right, bottom), (f_left, f_top, f_right, f_bottom) = \
        boxes["legend"], boxes["frame"]
    assert right <= f_left or left >= f_right or bottom <= f_top or top >= f_bottom, boxes
    shot(page)


def test_grouped_map_counts_agree_with_the_status(page: Page, server):
    page.goto(f"{server}/explorer?dataset=fgm-groups&method=fgm")
    n = int(re.search(r"Selected: (\d+)", settled_status(page, timeout=60)).group(1))
    fig = wait_for(lambda: (lambda f: f if f and "ever selected" in f["title"] and
                            int(re.search(r"(\d+) features ever", f["title"]).group(1)) >= n
                            else None)(page.evaluate(FIGURE, "entries and exits")))
    shown = re.search(r"(\d+) (?:of the (\d+) )?features ever selected", fig["title"])
    assert fig["x"][1] >= int(shown.group(1))


def test_weight_image_marks_sit_on_the_largest_weights(page: Page, server, shot):
    """Signed weights over the mean image: red and blue both appear, the largest |w| is a
    marked pixel, the mean image lies under them, and the blank corner pixel that the norm
    scaling magnifies is explained under the picture."""
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&feature_scaling=norm")
    settled_status(page)
    fig = wait_for(lambda: (lambda f: f if f and any(
        g["type"] == "Scatter" and len(g["cols"].get("x", [])) for g in f["glyphs"])
        else None)(page.evaluate(FIGURE, "w (red +, blue −), iteration")))
    base, weights = [g["cols"]["image"] for g in fig["glyphs"] if g["type"] == "Image"]
    mean = np.array(base["values"], dtype=float)
    assert mean.max() > 10 and mean.min() >= 0  # the average digit (pixels 0–16) underneath
    grid = np.array(weights["values"], dtype=float).reshape(weights["shape"])  # row 0 at bottom
    assert np.nanmin(grid) < 0 < np.nanmax(grid)  # signed, both signs present
    row, col = np.unravel_index(np.nanargmax(np.abs(grid)), grid.shape)
    marks = next(g for g in fig["glyphs"] if g["type"] == "Scatter"
                 and len(g["cols"].get("x", [])))["cols"]
    centres = set(zip(np.round(marks["x"], 3), np.round(marks["y"], 3)))
    assert (col + 0.5, row + 0.5) in centres  # the largest |w| is a marked, selected pixel
    note = wait_text(page, ".weight-note", "Blank pixels selected")
    assert "feature_scaling = 'norm'" in note and "r0c7" in note
    shot(page)


def test_a_refinement_is_drawn_apart_from_the_path(page: Page, server, server_log, shot):
    """FGM(refine='auto') ends with a refit of the ℓ2 model on the kept features: its
    objective (the status line's) is another function than the path's, so it is its own line,
    starting after the path's last step at the pruned path model's value, and both fit in the
    plot's range."""
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5&refine=auto&k=5")
    line = settled_status(page)
    objective = float(re.search(r"objective ([-\d.e+]+)", line).group(1))

    def two_lines():
        fig = page.evaluate(FIGURE, "objective")
        lines = [g["cols"] for g in (fig or {}).get("glyphs", [])
                 if g["type"] == "Line" and len(g["cols"].get("objective", []))]
        return (fig, lines) if len(lines) == 2 else None

    fig, lines = wait_for(two_lines)
    path, refit = sorted(lines, key=lambda cols: cols["step"][0])
    assert refit["objective"][-1] == pytest.approx(objective, rel=1e-3)
    assert path["step"][-1] < refit["step"][0]
    # the refit starts from the pruned path model, not from the empty model the path began at
    # (it was a vertical spike from the path's first value, squeezing the path's curve)
    assert refit["objective"][0] < 0.5 * path["objective"][0]
    values = path["objective"] + refit["objective"]
    assert fig["y"][0] <= min(values) and fig["y"][1] >= max(values)
    assert "Refinement" in text(page, ".explanation")
    assert_clean_log(server_log)
    shot(page)


def test_a_one_vs_rest_fit_shows_the_models_selection_and_its_classes(page: Page, server,
                                                                      server_log, shot):
    """10 digit classes with FGM (a binary method: one fit per class, one after another): the
    status counts the model's features, the union of the ten fits' (it showed the last
    class's count); the plots mark where each class's fit starts; the weight image says
    whose weights it shows."""
    page.goto(f"{server}/explorer?dataset=digits&method=fgm&B=2&max_outer=3")
    line = settled_status(page)
    found = re.search(r"Selected: (\d+) features \(the union over 10 one-vs-rest fits; "
                      r"class 9: (\d+)\) · class 9's objective", line)
    assert found, line
    union, last = int(found.group(1)), int(found.group(2))
    assert 2 <= last <= 6 and last < union <= 10 * 6  # 3 blocks of 2 at most per class

    def spans(title, x):  # once the plot has drawn the last class's records
        fig = page.evaluate(FIGURE, title)
        got = [g["cols"][x] for g in (fig or {}).get("glyphs", [])
               if g["type"] == "VSpan" and len(g["cols"].get(x, [])) == 9]
        return (fig, got[0]) if got else None

    fig, starts = wait_for(lambda: spans("objective", "step"))
    assert starts == sorted(starts)
    assert fig["x"][0] <= starts[0] and starts[-1] <= fig["x"][1]
    kept, iterations = wait_for(lambda: spans("#features", "iteration"))
    assert kept["x"][0] <= iterations[0]
    assert iterations[-1] <= kept["x"][1]
    # named by the x axis, not by a legend entry that comes with the second class (BokehJS
    # lost that legend's view: "cannot find a view for Legend" page errors)
    assert not any("class" in str(x) for x in page.evaluate(LEGEND_LABELS, "objective"))
    assert "dotted: the next class" in page.evaluate(AXIS_LABELS, "objective")
    assert figure(page, "class 9 vs rest: w (red +, blue −)")
    assert text(page, ".explanation").startswith("Class 9 against the rest")
    assert_clean_log(server_log)
    shot(page)


def test_a_refit_draws_the_new_fit_only(page: Page, server, server_log, shot):
    """One setting → one result on screen: after a parameter change the plots hold the new
    fit's records only — the browser's data sources, not only the server's buffers (the
    previous fit's points used to stay, appended before the new ones) — and the upper bound
    is one step line over every outer iteration."""
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    before = settled_status(page)
    page.locator(".param-loss select").select_option("logistic")
    line = wait_for(lambda: (lambda s: s if s != before and "done" in s else None)(
        status(page)))
    n = int(re.search(r"iteration (\d+)", line).group(1))
    selected = int(re.search(r"Selected: (\d+)", line).group(1))

    def kept():  # the browser may still be drawing the previous fit's stream: wait it out
        fig = page.evaluate(FIGURE, "#features")
        rows = [g["cols"] for g in (fig or {}).get("glyphs", []) if g["type"] == "Line"]
        return rows if rows and all(len(r["iteration"]) == n and r["n_selected"][-1] == selected
                                    for r in rows) else None

    for cols in wait_for(kept):
        assert cols["iteration"] == list(range(1, n + 1))
    fig = figure(page, "certified gap")
    for glyph in fig["glyphs"]:
        outer = glyph["cols"].get("outer", [])
        assert outer == sorted(set(outer)) and len(outer) <= n
    fig = figure(page, "objective")
    upper = [g["cols"] for g in fig["glyphs"] if g["type"] == "Line" and "upper" in g["cols"]]
    assert len(upper) == 1
    steps = upper[0]["step"]
    assert steps == sorted(steps) and len(steps) == 2 * len(set(steps)) - 1
    assert_clean_log(server_log)
    shot(page)


@pytest.mark.parametrize("B, points", [(64, 1), (10, 4)])
def test_the_gap_plot_shows_every_gap_on_whole_decades(page: Page, server, shot, B, points):
    """The certified gap's log axis spans whole decades around every point, off its edges: a
    fit certified in one outer iteration (B = 64 takes every pixel at once; its gap closes to
    the plot's floor of 1e-12) was drawn outside Bokeh's default range of [0.01, 1.2]."""
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B={B}&feature_scaling=None")
    settled_status(page)

    def drawn():
        fig = page.evaluate(FIGURE, "certified gap")
        gaps = [v for g in (fig or {}).get("glyphs", []) if g["type"] == "Scatter"
                for v in g["cols"].get("relative_gap", [])]
        return (fig, gaps) if len(gaps) == points else None

    fig, gaps = wait_for(drawn)
    low, high = fig["y"]
    assert low < min(gaps) and max(gaps) < high, (fig["y"], gaps)
    for end in (low, high):
        assert np.log10(end) == pytest.approx(round(np.log10(end)), abs=1e-9)
    assert high / low >= 10
    if B == 64:
        assert gaps == [pytest.approx(1e-12)]
    # an iteration axis is ticked at whole numbers only (no "outer iteration 0.5")
    intervals = page.evaluate("""() => {
      const out = {};
      for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (m.title && m.title.text && m.below)
          out[m.title.text] = m.below.filter(a => a.ticker).map(a => a.ticker.min_interval);
      return out;
    }""")
    for title in ("certified gap", "#features", "objective"):
        assert [v for k, v in intervals.items() if k.startswith(title)][-1] == [1], intervals
    shot(page)


# ------------------------------------------------------------------ 4 · accuracy vs #features
def test_accuracy_plot_covers_every_point(page: Page, server, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "finished", timeout=120)

    def covered():
        fig = page.evaluate(FIGURE, "cross-validated measure vs #features")
        xs = [v for g in fig["glyphs"] for v in g["cols"].get("swept_n_selected", [])]
        ys = [v for g in fig["glyphs"] for v in g["cols"].get("accuracy", [])]
        if len(xs) < 10:
            return None
        return fig, xs, ys

    fig, xs, ys = wait_for(covered, 20)
    assert fig["x"][0] <= min(xs) and fig["x"][1] >= max(xs), (fig["x"], min(xs), max(xs))
    assert fig["y"][0] <= min(ys) and fig["y"][1] >= max(ys), (fig["y"], min(ys), max(ys))
    assert max(xs) > 30  # both methods' points, beyond the per-iteration plot's range
    assert_legend_hides_nothing(page, "cross-validated measure vs #features")
    shot(page)


def test_accuracy_view_draws_bands_on_a_log_axis_with_the_current_setting(page: Page, server,
                                                                          shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=7")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "finished", timeout=120)

    def drawn():
        fig = page.evaluate(FIGURE, "cross-validated measure vs #features")
        stars = [g for g in fig["glyphs"] if g["type"] == "Scatter"
                 and g["cols"].get("swept_n_selected") == [7]]
        bands = [g for g in fig["glyphs"] if g["type"] in ("Patch", "VArea", "Area")]
        return (fig, stars, bands) if stars and len(bands) >= 2 else None

    fig, stars, bands = wait_for(drawn, 20)
    assert fig["xscale"] == "LogScale" and fig["x"][0] > 0
    assert fig["x"][0] <= 7 <= fig["x"][1]
    labels = page.evaluate("""title => {
      for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (m.title && m.title.text && m.title.text.startsWith(title))
          return (m.center || []).filter(a => a.type === 'Legend')
            .flatMap(l => l.items.map(i => i.label && i.label.value));
      return null; }""", "cross-validated measure vs #features")
    assert {"current setting", "chosen: best CV mean", "fisher"} <= set(labels), labels
    expect(page.locator(".download-sweep")).to_be_visible()
    shot(page)


# ------------------------------------------------------------------ 5 · hidden tabs
def test_hidden_tabs_do_not_take_the_sparsity_maps_clicks(page: Page, server):
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=5")
    settled_status(page)
    expect(page.locator(".view-selected")).to_have_count(0)  # not in the page while hidden
    # the fitted map (not the empty one drawn before the fit), laid out with its legend
    wait_for(lambda: "ever selected" in (page.evaluate(FIGURE, "entries and exits") or
                                         {"title": ""})["title"], 20)
    page.wait_for_timeout(500)
    # on the toolbar itself, not folded into its overflow menu
    for tool in (page.locator(".view-sparsity .bk-tool-icon-reset").first,
                 page.locator(".view-sparsity [title='Save as PNG']").first,
                 page.locator(".view-sparsity [title='Save as SVG']").first):
        tool.click(trial=True, timeout=5000)  # fails if another element would receive the click
    # the hover answers over the map and names the feature under the mouse
    box = page.locator(".view-sparsity canvas").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.1, box["y"] + box["height"] * 0.4)
    expect(page.locator(".bk-tooltip-content").filter(has_text="feature:").first).to_contain_text(
        re.compile(r"feature: x\d+"), timeout=5000)


def test_switching_tabs_around_fits_throws_nothing_in_the_page(page: Page, server):
    """The map's legend (true features) exists from the first, empty map: added later, to a
    figure whose tab was then hidden, it had no view, and BokehJS threw "cannot find a view
    for Legend" on every later layout (86 times in this walk)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=5")
    settled_status(page)
    wait_for(lambda: "ever selected" in (page.evaluate(FIGURE, "entries and exits") or
                                         {"title": ""})["title"], 20)
    for tab in ("Accuracy vs #features", "Selected features", "Sparsity map", "Stability",
                "Sparsity map", "Selected features"):
        page.locator(".view-tabs").get_by_text(tab).click()
        page.wait_for_timeout(700)
    page.get_by_role("button", name="Run").click()
    page.wait_for_timeout(3000)
    page.locator(".view-tabs").get_by_text("Sparsity map").click()
    page.wait_for_timeout(1500)
    assert not errors, errors[:3]


# ------------------------------------------------------------------ 8 · Stop
CLICK_STOP = """() => {
  // press Stop as a user's click does (Playwright's click first waits for the busy page to
  // settle, which adds ~0.4 s that no user sees), then time until the status says stopped
  const deep = n => { let t = n.shadowRoot ? deep(n.shadowRoot) : "";
    for (const c of n.childNodes) t += c.nodeType === 3 ? c.textContent
      : (c.nodeType === 1 ? deep(c) : ""); return t; };
  const find = (root, sel) => { const hit = root.querySelector(sel); if (hit) return hit;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) {
      const h = find(e.shadowRoot, sel); if (h) return h; }
    return null; };
  const status = find(document, '.status-line');
  const host = find(document, '.btn-stop');
  const button = (host.shadowRoot || host).querySelector('button');
  window.__stopped = null;
  const t0 = performance.now();
  const poll = () => {
    if (/stopped/.test(deep(status))) { window.__stopped = performance.now() - t0; return; }
    setTimeout(poll, 5);
  };
  button.click();
  poll();
}"""


def test_stop_lands_within_an_inner_step_and_says_stopped(page: Page, server, shot):
    # 4,096 rows: the fit starts with the session and must outlast the page's loading
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=2&max_outer=200&tol=0"
              "&inner_tol=1e-12&max_inner=5000&data.n_samples=4096")

    def iteration():
        m = re.search(r"iteration (\d+) .*running", status(page))
        return int(m.group(1)) if m else None

    first = wait_for(iteration, timeout=60)
    # past the first draw of what the fit recorded before the page was there
    wait_for(lambda: (iteration() or 0) >= first + 4, timeout=60)
    page.evaluate(CLICK_STOP)
    page.wait_for_function("() => window.__stopped !== null", timeout=30000, polling=20)
    latency = page.evaluate("window.__stopped") / 1000
    # was 3.4–3.8 s (and "done"); target 0.5 s, whose median bench_app.py reports: the
    # bound catches the old wait, not a loaded 2-core host's 1.2 s (seen once in CI)
    assert latency < 2.5, latency
    line = status(page)
    assert "stopped" in line and "done" not in line
    shot(page)


# ------------------------------------------------------------------ 12 · serving a class
def _listening(pid: int, port: int) -> set[str]:
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return {c.laddr.ip for p in procs for c in p.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port}


def test_explorer_serve_listens_on_localhost_only(served):
    proc, url, port, _ = served
    addresses = _listening(proc.pid, port)
    assert addresses and addresses <= {"127.0.0.1", "::1"}, addresses


def test_upload_above_the_limit_is_refused_with_a_message(page: Page, tmp_path, shot):
    proc, url, port, _ = start_server("--max-upload-mb", "0.01", log_name="small-upload.log")
    try:
        big = tmp_path / "big.csv"
        rng = np.random.default_rng(0)
        big.write_text("a,b,c,label\n" + "\n".join(
            f"{a:.6f},{b:.6f},{c:.6f},{int(a > 0)}" for a, b, c in rng.normal(size=(600, 3))))
        page.goto(f"{url}/explorer?dataset=digits-3v8&method=fisher&k=3")
        settled_status(page)
        assert "up to 0.01 MB" in text(page, ".upload-help")
        page.locator(".upload-file input[type=file]").set_input_files(str(big))
        message = wait_text(page, ".message", "big.csv")
        assert "upload limit of 0.01 MB" in message and "--data" in message
        assert "digits-3v8" in text(page, ".data-summary")  # the old data stays
        shot(page)
    finally:
        stop_server(proc)


# ------------------------------------------------------------------ teaching pages
def test_teaching_restart_starts_from_scratch(page: Page, server, shot):
    page.goto(f"{server}/teach_fgm")
    page.locator(".btn-step button").first.click()
    first = wait_text(page, ".explanation", "Outer iteration 1")
    page.locator(".btn-step button").first.click()
    wait_text(page, ".explanation", "Outer iteration 2")
    page.locator(".btn-reset button").first.click()
    again = wait_text(page, ".explanation", "Outer iteration 1")
    assert again == first  # the same first block, not a warm start from the last model
    shot(page)
