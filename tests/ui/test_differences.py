"""The accuracy view's differences panel: the current method minus each other method at the
same k on the same repeated folds, with its intervals and zero marked, and the verdicts in
words under it — read from the Bokeh models and the page, as a user sees them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .test_browser import settled_status, wait_for, wait_text
from .test_truth import FIGURE

pytestmark = pytest.mark.ui

ZERO_LINE = """title => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models)
    if (m.title && m.title.text && m.title.text.startsWith(title))
      return [...(m.renderers || []), ...(m.center || [])].filter(a => a.type === 'Span')
        .map(s => s.location);
  return null; }"""


def test_differences_panel_pairs_the_methods_at_the_same_k(page: Page, server, server_log,
                                                           shot):
    page.goto(f"{server}/explorer?dataset=breast-cancer&method=fgm&k=5&compare=fsa")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "finished", timeout=180)
    title = "current method minus each other one at the same k"

    def drawn():  # every k of the grid (1 … 30 in 8 steps), the user's own 5 among them
        fig = page.evaluate(FIGURE, title)
        points = [g for g in (fig or {"glyphs": []})["glyphs"] if "difference" in g["cols"]
                  and g["cols"]["difference"]]
        ks = sorted({k for g in points for k in g["cols"].get("features", [])})
        return (fig, points) if ks == [1, 2, 3, 4, 5, 7, 11, 18, 30] else None

    fig, points = wait_for(drawn, 30)
    ys = [y for g in points for y in g["cols"]["difference"]]
    assert fig["y"][0] <= min(ys) and fig["y"][1] >= max(ys)
    assert fig["y"][0] < 0 < fig["y"][1]
    assert page.evaluate(ZERO_LINE, title) == [0]
    # each point's hover carries its verdict; the words under the plot summarise them
    verdicts = [v for g in points for v in g["cols"].get("verdict", [])]
    assert all(re.search(r"(fgm|fsa|random) is ahead|no difference the data can show", v)
               for v in verdicts), verdicts
    words = wait_text(page, ".sweep-verdicts", "fgm against fsa", timeout=10)
    assert re.search(r"k = \d", words)
    assert re.search(r"(ahead|behind) at k = |no difference the data can show at k = ", words)
    expect(page.locator(".download-folds")).to_be_visible()
    shot(page)
    assert "Traceback" not in server_log()


def test_the_accuracy_bands_are_the_intervals_of_the_repeated_folds(page: Page, server):
    page.goto(f"{server}/explorer?dataset=breast-cancer&method=fsa&k=5&compare=fgm")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    done = wait_text(page, ".sweep-status", "finished", timeout=180)
    assert "each by 5-fold CV × 2 on the same folds for every method" in done

    def banded():  # the page may still be syncing the last method's band when "finished" shows
        fig = page.evaluate(FIGURE, "cross-validated measure vs #features")
        bands = [g for g in (fig or {"glyphs": []})["glyphs"]
                 if g["type"] in ("Patch", "VArea", "Area")]
        return (fig, bands) if len(bands) >= 2 and all(b["cols"]["y"] for b in bands) else None

    fig, bands = wait_for(banded, 30)
    assert "band: 95 % CI" in fig["title"]
    # a band spans its mean's interval: wider than nothing, inside [0, 1]
    for band in bands:
        ys = band["cols"]["y"]
        assert ys and 0 <= min(ys) and max(ys) <= 1, band["cols"].keys()
