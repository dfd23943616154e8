"""What the page says agrees with itself and with the model: bounds never below the
objective's floor, one meaning of "feature", the dataset's names in the words, and no
convergence plots of one dot for a method fitted in one call."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .test_browser import settled_status, status, text, wait_for, wait_text

pytestmark = pytest.mark.ui

BOUNDS = re.compile(r"Bounds on the optimum: \[([^,]+), ([^\]]+)\]")


def test_a_method_fitted_in_one_call_gets_a_sentence_not_three_dots(page: Page, server):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=5")
    settled_status(page)
    note = wait_text(page, ".convergence-note", "fitted in one call")
    assert "5 features" in note
    expect(page.locator(".view-convergence").first).to_be_hidden()
    # an iterative method draws its curves again
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    settled_status(page)
    expect(page.locator(".view-convergence").first).to_be_visible()
    expect(page.locator(".convergence-note").first).to_be_hidden()


def test_fgm_bounds_never_fall_below_the_objectives_floor(page: Page, server):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    settled_status(page)
    lower, upper = map(float, BOUNDS.search(text(page, ".explanation")).groups())
    assert 0 <= lower <= upper
    assert "stops on the objective's relative change" in text(page, ".explanation")
    for n in (1, 2, 3):  # Step mode: coarse masters, the bound still certified and ≥ 0
        page.locator(".btn-step button").click()
        explanation = wait_text(page, ".explanation", f"Outer iteration {n}")
        wait_for(lambda: "paused" in status(page))
        lower, upper = map(float, BOUNDS.search(explanation).groups())
        assert 0 <= lower <= upper, explanation


def test_explanation_names_features_as_the_table_does(page: Page, server):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    settled_status(page)
    explanation = text(page, ".explanation")
    assert re.search(r"\br\dc\d\b", explanation), explanation  # pixels r{row}c{col}
    assert not re.search(r"\bx\d+\b", explanation), explanation


def test_grfl_counts_input_variables_everywhere(page: Page, server):
    page.goto(f"{server}/explorer?dataset=xor&method=grfl&max_features=30")
    line = settled_status(page, timeout=90)
    n_input, n_learned = map(int, re.search(
        r"Selected: (\d+) input features \(through (\d+) learned features\)", line).groups())
    assert 0 < n_input <= 20 and n_learned > 0  # xor has 20 input variables
    page.locator(".view-tabs").get_by_text("Selected features").click()
    from .test_selected_tab import ROWS

    shown = wait_for(lambda: (lambda t: t if t and t["rows"] else None)(page.evaluate(ROWS)),
                     timeout=10)
    assert len(shown["rows"]) == n_input
    assert f"over {n_input} input variable" in text(page, ".explanation")


def test_each_step_draws_its_own_iteration_within_a_second(page: Page, server):
    from .test_truth import FIGURE

    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=3")
    settled_status(page)

    def drawn(n):
        kept = page.evaluate(FIGURE, "#features") or {"glyphs": []}
        iterations = [len(g["cols"].get("iteration", [])) for g in kept["glyphs"]]
        image = page.evaluate(FIGURE, "w (red +, blue −)") or {"title": ""}
        return (n in iterations and f"iteration {n}" in image["title"]) or None

    for n in (1, 2, 3):
        page.locator(".btn-step button").click()
        wait_for(lambda n=n: f"iteration {n} " in status(page) and "paused" in status(page),
                 timeout=20)
        try:
            wait_for(lambda n=n: drawn(n), timeout=1.0, interval=0.05)
        except AssertionError:
            kept = page.evaluate(FIGURE, "#features") or {"glyphs": []}
            image = page.evaluate(FIGURE, "w (red +, blue −)") or {"title": ""}
            raise AssertionError(
                f"step {n} not drawn within a second: status {status(page)!r}, kept "
                f"{[len(g['cols'].get('iteration', [])) for g in kept['glyphs']]}, "
                f"map {image['title']!r}") from None


# every drawn figure's title against the room it has: from the frame's left edge to the
# canvas's right edge (Bokeh draws a title on the canvas and cuts what does not fit); the
# width as drawn is read from the title's view (BokehJS's own text box: not public API)
CUT_TITLES = """only => {
  only = only || [];  // the titles to check (their starts); none given: every title
  const cut = [];
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.renderers) continue;
    if (only.length && !only.some(p => m.title.text.startsWith(p))) continue;
    const view = Bokeh.index.find_one(m), title = Bokeh.index.find_one(m.title);
    if (!view || !title || !view.bbox || view.bbox.width <= 0) continue;  // a hidden tab's
    const width = title._text_box.size().width;  // as drawn (its font is relative to the page)
    const room = view.bbox.width - view.frame.bbox.left;
    if (width > room) cut.push([m.title.text, Math.round(width), Math.round(room)]);
  }
  return cut;
}"""


def test_the_accuracy_tabs_titles_fit_a_1100_px_window(page: Page, server):
    """The accuracy plot's title ran out at "(band: 95 % interval of th" at 1,100 px."""
    page.set_viewport_size({"width": 1100, "height": 1400})
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "finished", timeout=120)
    page.wait_for_timeout(1500)
    from explorer.ui.views import AccuracyView

    only = [AccuracyView.TITLE, AccuracyView.DIFFERENCES_TITLE, "seconds per fit"]
    assert page.evaluate(CUT_TITLES, only) == []


def test_the_convergence_titles_fit_a_1100_px_window(page: Page, server):
    """The three convergence plots share a row: below about 1,250 px their titles were cut
    ("objective per inne")."""
    from explorer.ui.views import ConvergenceView

    page.set_viewport_size({"width": 1100, "height": 1200})
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    settled_status(page)
    page.wait_for_timeout(1500)
    only = list(ConvergenceView.TITLES)
    drawn = page.evaluate("""only => {
      const seen = [];
      for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (m.title && m.title.text && only.some(p => m.title.text === p)) seen.push(m.title.text);
      return seen;
    }""", only)
    assert len(set(drawn)) == 3, drawn  # objective, certified gap, #features
    assert page.evaluate(CUT_TITLES, only) == []
