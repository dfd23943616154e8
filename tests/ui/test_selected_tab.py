"""The *Selected features* tab, opened after a fit of every registered method: the table shows
the model's features, the page keeps answering, and the CSV download holds every row."""

from __future__ import annotations

import csv
import io
import re
import time

import pytest
from playwright.sync_api import Page

from explorer.methods import REGISTRY

from .test_browser import settled_status, text, wait_for
from .test_truth import QUICK, SUITS

pytestmark = pytest.mark.ui

ROWS = """() => {
  const find = (root) => { const hit = root.querySelector('.view-selected'); if (hit) return hit;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) { const h = find(e.shadowRoot);
      if (h) return h; } return null; };
  const host = find(document);
  if (!host) return null;
  const root = host.shadowRoot || host;
  const head = [...root.querySelectorAll('thead th')].map(th => th.textContent.trim());
  const rows = [...root.querySelectorAll('tbody tr')];
  return {head, rows: rows.map(r => [...r.querySelectorAll('td')].map(
    td => td.textContent.trim()))};
}"""


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_selected_features_tab_renders_and_downloads(page: Page, server, method, tmp_path):
    page.goto(f"{server}/explorer?dataset={SUITS[method]}&method={method}"
              f"{QUICK.get(method, '')}")
    line = settled_status(page, timeout=60)
    n = int(re.search(r"Selected: (\d+) (?:input )?features", line).group(1))
    page.locator(".view-tabs").get_by_text("Selected features").click()
    shown = wait_for(lambda: (lambda t: t if t and len(t["rows"]) == min(n, 200) else None)(
        page.evaluate(ROWS)), timeout=10)
    rows, head = shown["rows"], shown["head"]
    assert len(rows) == min(n, 200), (len(rows), n)
    # the page still answers: a script runs and a screenshot is taken within 5 s
    start = time.time()
    assert page.evaluate("1 + 1") == 2
    page.screenshot(timeout=5000)
    assert time.time() - start < 5
    # sorted by |weight × the feature's sd|, largest first (features in different units)
    effects = [abs(float(r[head.index("weight_per_sd")])) for r in rows]
    assert effects == sorted(effects, reverse=True)
    with page.expect_download(timeout=10_000) as download:
        page.locator(".download-selected button, .download-selected a").first.click()
    path = tmp_path / "selected.csv"
    download.value.save_as(path)
    table = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(table) == n
    assert {r["name"] for r in table} >= {r[head.index("name")] for r in rows}
    assert "Selected" in text(page, ".status-line")
