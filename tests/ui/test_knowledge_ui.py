"""What the user knows, in the page: pin a feature from the *Selected features* table, ban
another by a click on the sparsity map; the URL carries both, and reloading it gives the same
model."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .test_browser import settled_status, text, wait_for, wait_text
from .test_selected_tab import ROWS
from .test_truth import FIGURE

pytestmark = pytest.mark.ui

# the page coordinates of the data point (x, y) of the figure titled ``title``
SCREEN_POINT = """([title, x, y]) => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers) continue;
    const view = Bokeh.index.find_one(m);
    if (!view) continue;
    const canvas = view.canvas_view.el.querySelector('canvas') || view.canvas_view.el;
    const box = canvas.getBoundingClientRect();
    return [box.left + view.frame.x_scale.compute(x), box.top + view.frame.y_scale.compute(y)];
  }
  return null;
}"""

# the (x, y) of the markers of one kind (``marker``) in the figure titled ``title``
MARKS = """([title, marker]) => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers) continue;
    for (const r of m.renderers) {
      const mk = r.glyph && r.glyph.marker;
      if (!mk || (mk.value ?? mk) !== marker) continue;
      const d = r.data_source.data, get = k => Array.from(d instanceof Map ? d.get(k) : d[k]);
      return {title: m.title.text, x: get('x'), y: get('y')};
    }
  }
  return null;
}"""


def pixel(name: str) -> tuple[int, int]:
    row, col = map(int, re.fullmatch(r"r(\d)c(\d)", name).groups())
    return row, col


def names_in_table(page: Page) -> list[str] | None:
    table = page.evaluate(ROWS)
    if not table or "name" not in table["head"]:
        return None
    column = table["head"].index("name")
    return sorted(row[column] for row in table["rows"])


def selected(page: Page, until=lambda names: True) -> list[str]:
    """The names in the *Selected features* table, once ``until(names)`` holds (the table is
    redrawn a moment after the fit's status line)."""
    page.locator(".view-tabs").get_by_text("Selected features").click()
    return wait_for(lambda: (lambda n: n if n and until(n) else None)(names_in_table(page)),
                    15)


def test_pin_from_the_table_ban_from_the_map_and_reload(page: Page, server, server_log, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fsa&k=6")
    first = settled_status(page, timeout=60)
    before = selected(page)
    # pin: a feature the model did not choose, typed by name; then one of its own from the
    # table, which stays in whatever else changes
    page.locator(".input-pin input").fill("r0c0")
    page.locator(".input-pin input").press("Enter")
    settled_status(page, timeout=60, differs_from=first)
    selected(page, until=lambda names: "r0c0" in names)
    # any feature of the data, typed: one the model did not choose (r7c7, the corner)
    assert "r7c7" not in selected(page)
    page.locator(".pick-feature input").click()
    page.locator(".pick-feature input").type("r7c", delay=50)
    page.locator(".pick-feature").get_by_text("r7c7 (63)").click()
    page.locator(".btn-pin button").click()
    name = "r7c7"
    wait_text(page, ".knowledge-line", name, timeout=15)
    # (pinning a feature the model holds may leave the model, and its status line, as it was)
    third = settled_status(page, timeout=60)
    assert re.search(rf"always in: .*{name}", text(page, ".knowledge-line"))
    # ban: a click on the map on a pixel the model holds (not one of the pinned)
    held = [n for n in selected(page) if n not in ("r0c0", name)]
    row, col = map(int, re.fullmatch(r"r(\d)c(\d)", held[0]).groups())
    page.locator(".view-tabs").get_by_text("Sparsity map").click()
    page.locator(".map-click").get_by_text("click: exclude").click()
    wait_for(lambda: page.evaluate(FIGURE, "w (red +, blue −)"), 20)
    title = page.evaluate(FIGURE, "w (red +, blue −)")["title"]
    page.locator(".view-sparsity").first.scroll_into_view_if_needed()
    x, y = wait_for(lambda: page.evaluate(SCREEN_POINT, [title, col + 0.5, 8 - row - 0.5]), 10)
    page.mouse.click(x, y)
    settled_status(page, timeout=60, differs_from=third)
    wait_text(page, ".knowledge-line", f"never in: {held[0]}", timeout=15)
    chosen = selected(page, until=lambda names: held[0] not in names)
    assert "r0c0" in chosen and name in chosen and held[0] not in chosen
    assert len(chosen) == 6 and chosen != before
    table = page.evaluate(ROWS)
    assert "given" in table["head"]
    # the map marks what the user gave: diamonds on the pinned pixels, crossed squares on
    # the banned one, said in its title
    page.locator(".view-tabs").get_by_text("Sparsity map").click()

    def marks(marker):
        found = page.evaluate(MARKS, ["w (red +, blue −)", marker])
        return None if not found else found

    # the tab shows the map of the ban's fit once drawn (a hidden tab's map redraws when shown)
    pins = wait_for(lambda: (lambda f: f if f and len(f["x"]) == 2 and "⊠ excluded" in
                             f["title"] else None)(marks("diamond")), 30)
    assert "◆ always in, ⊠ excluded" in pins["title"]
    centre = {(c + 0.5, 8 - r - 0.5) for r, c in map(pixel, ["r0c0", name])}
    assert set(zip(pins["x"], pins["y"])) == centre
    bans = marks("square_x")
    assert list(zip(bans["x"], bans["y"])) == [(col + 0.5, 8 - row - 0.5)]
    # the URL carries both; a new page from it gives the same model
    wait_for(lambda: "pin=" in page.url and f"ban={8 * row + col}" in page.url, 10)
    assert re.search(r"pin=0%2C\d+|pin=\d+%2C0", page.url), page.url
    shot(page)
    url = page.url
    again = page.context.new_page()
    again.goto(url)
    settled_status(again, timeout=60)
    assert selected(again) == chosen
    expect(again.locator(".input-ban input")).to_have_value(held[0])
    again.close()
    assert "Traceback" not in server_log()


def test_a_method_that_cannot_honour_the_knowledge_says_so(page: Page, server):
    page.goto(f"{server}/explorer?dataset=breast-cancer&method=grfl&pin=3")
    wait_text(page, ".message", "GrFL cannot honour always_include", timeout=30)
