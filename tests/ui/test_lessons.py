"""Every lesson in a real browser: the index links each one, each Step changes the explanation
and a plot (read from the page's Bokeh models), Restart starts afresh, the data line names the
data and counts the true features found, and the server's log stays clean."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page

from explorer.ui.teaching.index import LESSONS
from tests.ui.test_browser import text, wait_for, wait_text
from tests.ui.test_honest_views import CUT_TITLES
from tests.ui.test_truth import assert_clean_log, figure

pytestmark = pytest.mark.ui

# (lesson, explanation of step 1, a figure title that names the step, what the data line says)
STEPS = {
    "teach_grfl": ("Iteration", "1 · step", "true features: 2"),
    "teach_fs_multi": ("Outer iteration", "1 · step", "digits-9vr"),
    "teach_fs_manifold": ("Iteration", "1 · iteration", "transductive"),
    "teach_fgm": ("Outer iteration", "1 · iteration", "digits-3v8"),
    "teach_fsa": ("Iteration", "2 · gradient step", "true features: 10"),
}


def _step(page: Page, n: int, lead: str) -> str:
    page.locator(".btn-step button").first.click()
    return wait_text(page, ".explanation", f"{lead} {n}", timeout=60)


def test_the_index_links_every_lesson_and_the_explorer_links_the_index(page: Page, server,
                                                                       shot):
    page.goto(f"{server}/lessons")
    index = wait_text(page, ".lesson-index", "Lessons")
    links = page.locator(".lesson-index a").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))")
    assert {f"./{lesson.path}" for lesson in LESSONS} <= set(links)
    for lesson in LESSONS:
        assert lesson.method in index and lesson.dataset in index
    shot(page, "index")
    page.goto(f"{server}/explorer?dataset=xor&method=grfl&max_features=5")
    wait_text(page, ".lesson-link", "all lessons")
    hrefs = page.locator(".lesson-link a").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))")
    assert hrefs == ["./teach_grfl", "./lessons"]


@pytest.mark.parametrize("lesson", ["teach_grfl", "teach_fs_multi", "teach_fs_manifold"])
def test_each_new_lesson_steps_and_restarts(page: Page, server, server_log, shot, lesson):
    lead, title, data = STEPS[lesson]
    page.goto(f"{server}/{lesson}")
    wait_text(page, ".lesson-data", data)
    first = _step(page, 1, lead)
    one = figure(page, title, timeout=30)
    second = _step(page, 2, lead)
    assert second != first
    two = wait_for(lambda: (lambda f: f if f and f["title"] != one["title"] else None)(
        figure(page, title.split(" · ")[0] + " · ")), 30)
    assert two["glyphs"] != one["glyphs"] or two["title"] != one["title"]
    shot(page, lesson)
    page.locator(".btn-reset button").first.click()
    again = wait_text(page, ".explanation", f"{lead} 1", timeout=60)
    assert again == first  # from scratch, not from the last model
    assert_clean_log(server_log)


def test_grfl_lesson_draws_the_draw_the_slice_and_the_group_norms(page: Page, server):
    page.goto(f"{server}/teach_grfl")
    _step(page, 1, "Iteration")
    _step(page, 2, "Iteration")
    draw = figure(page, "1 · step 2")
    bars = next(g for g in draw["glyphs"] if g["type"] == "VBar")
    values = next(v for k, v in bars["cols"].items() if k.startswith("violation"))
    assert len(values) >= 5 and values[0] == max(values) and values[0] > 1  # it entered
    slice_ = figure(page, "2 · f(x) on the plane (x0, x1)")
    image = next(g for g in slice_["glyphs"] if g["type"] == "Image")
    assert image["cols"]["image"]["shape"] == [60, 60]

    def learned():
        norms = figure(page, "3 · master after")
        columns = next(g for g in norms["glyphs"] if g["type"] == "VBar")["cols"]
        return len(columns["learned_feature"]) == 2  # two steps, two learned features

    assert wait_for(learned, 20)
    found = text(page, ".lesson-data")
    assert re.search(r"found so far: \d", found)


def test_fs_multi_lesson_shows_the_labelings_confusion_table(page: Page, server):
    page.goto(f"{server}/teach_fs_multi")
    _step(page, 1, "Outer iteration")
    heat = figure(page, "1 · step 1: most violated ȳ")
    labels = next(g for g in heat["glyphs"] if g["type"] == "Text")
    counts = [int(c) for c in labels["cols"]["count"]]
    assert sum(counts) == 1257  # every training row of digits-9vr, once
    gaps = figure(page, "3 · the bundle's certified gap")
    assert gaps["yscale"] == "LogScale"


def test_fs_manifold_lesson_says_what_tau_does(page: Page, server):
    page.goto(f"{server}/teach_fs_manifold")
    _step(page, 1, "Iteration")
    note = wait_text(page, ".tau-note", "τ")
    assert "manifold term" in note or "τ = 0" in note
    weights = figure(page, "2 · p (Σp = 10)")
    image = next(g for g in weights["glyphs"] if g["type"] == "Image")
    values = image["cols"]["image"]["values"]
    assert abs(sum(values) - 10) < 1e-6 and min(values) >= -1e-9 and max(values) <= 1 + 1e-9



# each marker of a figure (by title) in page pixels, and the box of the pane that shows it
MARKS_ON_PAGE = """title => {
  let found = null;
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers) continue;
    const view = Bokeh.index.find_one(m);
    if (!view) continue;  // an earlier step's figure, no longer drawn
    const canvas = view.el.getBoundingClientRect();
    const xs = view.frame.x_scale, ys = view.frame.y_scale;
    const points = [];
    for (const r of m.renderers) {
      if (!r.glyph || r.glyph.type !== 'Scatter') continue;
      const d = r.data_source.data, get = k => d instanceof Map ? d.get(k) : d[k];
      const X = get(r.glyph.x.field), Y = get(r.glyph.y.field);
      for (let i = 0; i < X.length; i++)
        points.push([canvas.left + xs.compute(X[i]), canvas.top + ys.compute(Y[i])]);
    }
    found = points;
  }
  return found; }"""


def test_fs_manifold_lessons_p_image_shows_every_column_and_mark(page: Page, server, shot):
    """The p image was cropped at 1,600 px: columns 0–5 of 8 shown, 2 of the 10 red marks
    off the canvas. Every mark lies inside the pane that shows the image."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{server}/teach_fs_manifold")
    for n in (1, 2, 3):
        _step(page, n, "Iteration")
    marks = wait_for(lambda: page.evaluate(MARKS_ON_PAGE, "2 · p (Σp = 10)"), 20)
    assert len(marks) == 10
    # the pane is laid out again after the step's redraw (under load its box was read
    # while it had none): wait for it, then read the marks it now shows
    box = wait_for(lambda: page.locator(".view-weights").first.bounding_box(), 20)
    marks = wait_for(lambda: page.evaluate(MARKS_ON_PAGE, "2 · p (Σp = 10)"), 20)
    assert len(marks) == 10
    for x, y in marks:
        assert box["x"] <= x <= box["x"] + box["width"], (x, box)
        assert box["y"] <= y <= box["y"] + box["height"], (y, box)
    weights = figure(page, "2 · p (Σp = 10)")
    assert weights["x"][0] <= 0 and weights["x"][1] >= 8
    shot(page, "p-image")


def test_a_lesson_that_has_ended_stays_ended_until_restart(page: Page, server, server_log):
    """Step after the last iteration used to start a new fit without a word: the page went back
    to iteration 1. The ended fit stays, says why it ended, and only Restart starts again."""
    page.goto(f"{server}/teach_fs_multi")
    wait_text(page, ".lesson-data", "digits-9vr")
    step = page.locator(".btn-step button").first
    for n in range(1, 13):
        step.click()
        said = wait_for(lambda n=n: (lambda t: t if f"Outer iteration {n}:" in t
                                     or "has ended" in t else None)(text(page, ".explanation")),
                        60)
        if "has ended" in said:
            break
    assert "has ended" in said, "the lesson never said that its fit ended"
    iterations = int(re.search(r"ended after (\d+) iteration", said).group(1))
    assert f"Outer iteration {iterations}:" in said  # the last iteration's account stays
    assert step.is_disabled() and page.locator(".btn-run button").first.is_disabled()
    assert "done" in text(page, ".status-line")
    page.locator(".btn-reset button").first.click()
    wait_text(page, ".explanation", "Outer iteration 1:", timeout=60)
    assert not step.is_disabled()
    assert_clean_log(server_log)


def _overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] - 1 and b["x"] < a["x"] + a["width"] - 1
            and a["y"] < b["y"] + b["height"] - 1 and b["y"] < a["y"] + a["height"] - 1)


@pytest.mark.parametrize("width", [1400, 1100])
def test_a_lessons_panels_never_run_into_each_other(page: Page, server, width):
    """At 1,100 px the FGM lesson's weight map, its click modes and colorbar ran over the
    master's plot beside it: panels wrap before their content overflows."""
    page.set_viewport_size({"width": width, "height": 1400})
    page.goto(f"{server}/teach_fgm")
    _step(page, 1, "Outer iteration")
    figure(page, "3 · master after", timeout=30)
    boxes = {css: page.locator(css).first.bounding_box()
             for css in (".view-scores", ".map-click", ".view-sparsity", ".view-norms")}
    assert all(boxes.values()), boxes
    for a, b in [(".view-scores", ".map-click"), (".view-scores", ".view-sparsity"),
                 (".map-click", ".view-norms"), (".view-sparsity", ".view-norms"),
                 (".view-scores", ".view-norms")]:
        assert not _overlap(boxes[a], boxes[b]), (a, b, boxes)
    assert page.evaluate(CUT_TITLES) == []
