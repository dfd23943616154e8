"""The views in JupyterLab, driven in chromium: ExplorerApp around a fitted estimator keeps its
curves once the kernel is idle, and a view fed from a fit's callback shows points while the
cell is still running."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest
from playwright.sync_api import Page

from .conftest import ARTIFACTS, ROOT
from .test_browser import wait_for

pytestmark = [pytest.mark.ui, pytest.mark.slow]

CELLS = [
    "import panel as pn\npn.extension('filedropper', inline=True)\n"
    "from explorer import FGM, load\nfrom explorer.ui import ExplorerApp, ConvergenceView",
    "data = load('digits-3v8').split(test_size=0.3, seed=0)\n"
    "fgm = FGM(B=5).fit(data.X, data.y)\napp = ExplorerApp(dataset=data, estimator=fgm)\napp",
    "cv = ConvergenceView()\ncv.configure_for(FGM)\ncv",
    # the view's cell ran (and the kernel went idle) before: a callback streams from the cell
    "wide = load('fgm-type1')\n"
    "FGM(B=1, max_outer=60, tol=0).fit(wide.X, wide.y, callback=lambda r: cv.push([r]))\n"
    "print('fit over')",
    "watched = ConvergenceView()\nwatched",
    # run at once after the cell above (Run All): the fit runs in the background
    "live = watched.watch(FGM(B=1, max_outer=60, tol=0), wide.X, wide.y)",
]

# points of each figure titled ``title…`` with a column ``column``, document by document (the
# app's, then the view's)
POINTS = """([title, column]) => {
  const out = [];
  for (const doc of (window.Bokeh ? Bokeh.documents : [])) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.startsWith(title) || !m.renderers)
      continue;
    let n = 0;
    for (const r of m.renderers) {
      const d = r.data_source && r.data_source.data;
      const col = d && (d instanceof Map ? d.get(column) : d[column]);
      if (col) n = Math.max(n, col.length);
    }
    out.push(n);
  }
  return out;
}"""
OBJECTIVE = ["objective", "objective"]
KEPT = ["#features", "n_selected"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, folder / "views.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "jupyterlab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
         "--allow-root", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
         "jupyterlab.NeverCheckForUpdate"],
        cwd=folder, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5).close()
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("JupyterLab did not come up within 90 s")
    yield url, token
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _run_cell(page: Page, index: int) -> None:
    """Run one cell (Shift+Enter in it), again if JupyterLab missed the keys (a page still
    settling right after the kernel reports idle)."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(index)
    prompt = cell.locator(".jp-InputPrompt")
    for _ in range(3):
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        try:
            wait_for(lambda: prompt.inner_text().strip() not in ("[ ]:", ""), timeout=10)
            return
        except AssertionError:
            continue
    raise AssertionError(f"cell {index} did not start")


def _idle(page: Page) -> bool:
    status = page.locator(".jp-Notebook-ExecutionIndicator").first
    return status.count() > 0 and status.get_attribute("data-status") == "idle"


def test_views_in_jupyterlab(page: Page, lab):
    url, token = lab
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(60_000)
    page.goto(f"{url}/lab/tree/views.ipynb?token={token}")
    page.locator(".jp-Notebook .jp-CodeCell").first.wait_for()
    wait_for(lambda: _idle(page), timeout=60)
    for i in (0, 1):
        _run_cell(page, i)
        wait_for(lambda i=i: _idle(page) and page.locator(".jp-Notebook .jp-CodeCell").nth(
            i).locator(".jp-InputPrompt").inner_text().strip() not in ("[*]:", "[ ]:"),
            timeout=120)
    page.wait_for_timeout(3000)  # the kernel idle: the app's poll has run many times
    points = wait_for(lambda: (lambda p: p if len(p) >= 1 else None)(
        page.evaluate(POINTS, OBJECTIVE)), timeout=30)
    assert points[0] > 10, points  # the fitted model's curves are still drawn
    app_stop = page.locator(".jp-Notebook .jp-CodeCell").nth(1).locator("button", has_text="Stop")
    assert app_stop.first.is_disabled()  # nothing runs: Stop is not lit
    _run_cell(page, 2)
    wait_for(lambda: _idle(page) and len(page.evaluate(POINTS, KEPT)) == 2, timeout=60)
    _run_cell(page, 3)  # a fit of several seconds whose callback feeds the view
    prompt = page.locator(".jp-Notebook .jp-CodeCell").nth(3).locator(".jp-InputPrompt")
    seen = []
    for _ in range(2):  # two readings while the cell runs, the second with more iterations
        kept = wait_for(lambda: (lambda p: p if p[1] > (seen[-1] if seen else 0) else None)(
            page.evaluate(POINTS, KEPT)), timeout=30)
        assert "*" in prompt.inner_text(), kept  # the cell is still running
        seen.append(kept[1])
    wait_for(lambda: _idle(page), timeout=120)
    # Run All: the view's cell and the watched fit's, at once; the kernel stays free
    _run_cell(page, 4)
    _run_cell(page, 5)  # queued behind the cell above
    seen = []
    for _ in range(2):
        kept = wait_for(lambda: (lambda p: p if len(p) == 3 and p[2] > (
            seen[-1] if seen else 0) else None)(page.evaluate(POINTS, KEPT)), timeout=30)
        seen.append(kept[2])
    # the watched fit ends with every record drawn (tol=0: all 60 outer iterations)
    assert seen[0] < 60  # it streamed: the first reading came before the fit's end
    wait_for(lambda: page.evaluate(POINTS, KEPT)[2] == 60, timeout=300)
    page.screenshot(path=str(ARTIFACTS / "jupyterlab.png"))
    assert errors == [], errors
