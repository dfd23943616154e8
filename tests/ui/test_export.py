"""Every figure saves itself in one click, as PNG and as SVG, and the SVG is the figure the user
sees: its title, its axis names, its data; the PNG is that figure at three times its size on
the screen, for print (checked on real downloads in chromium)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from playwright.sync_api import Page

from .test_browser import settled_status, wait_for
from .test_truth import FIGURE

pytestmark = pytest.mark.ui


def _download(page: Page, button):
    with page.expect_download(timeout=20000) as download:
        button.click()
    return download.value


def test_every_figure_saves_as_svg_and_png(page: Page, server):
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=5")
    settled_status(page)
    wait_for(lambda: "ever selected" in (page.evaluate(FIGURE, "entries and exits") or
                                         {"title": ""})["title"], 20)
    page.wait_for_timeout(500)
    # one SVG and one PNG button per figure on the page: three convergence plots and the map
    svg_buttons = page.locator("[title='Save as SVG']")
    assert svg_buttons.count() == 4
    assert page.locator("[title='Save as PNG']").count() == svg_buttons.count()

    map_svg = _download(page, page.locator(".view-sparsity [title='Save as SVG']").first)
    assert map_svg.suggested_filename.startswith("entries-and-exits")
    assert map_svg.suggested_filename.endswith(".svg")
    text = Path(map_svg.path()).read_text(encoding="utf-8")
    assert text.startswith("<svg") and "entries and exits" in text
    # the axis's names are in the picture (fgm-type1 names its features x0, x1, …)
    assert re.search(r">x\d+<", text), "no feature name on the saved map's axis"

    objective = page.locator("[title='Save as SVG']").first  # the first convergence plot
    curve = Path(_download(page, objective).path()).read_text(encoding="utf-8")
    assert curve.startswith("<svg") and "objective" in curve and "<path" in curve

    png = _download(page, page.locator(".view-sparsity [title='Save as PNG']").first)
    assert png.suggested_filename.startswith("entries-and-exits")
    assert png.suggested_filename.endswith(".png")
    data = Path(png.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # print resolution: three pixels for every pixel of the figure on the screen
    width, height = struct.unpack(">II", data[16:24])
    svg_width, svg_height = (float(re.search(rf'<svg[^>]*\b{side}="([\d.]+)', text).group(1))
                             for side in ("width", "height"))
    assert (width, height) == (round(3 * svg_width), round(3 * svg_height))
    # the picture is drawn, not blank: many colours, as on the screen
    assert len(data) > 20_000
