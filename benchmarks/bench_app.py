"""Responsiveness of the dashboard, measured in a real browser (Playwright + Debian chromium).

For each case: open the explorer by URL, let the first fit finish, then change a parameter
from the page and time (a) until the status line shows the first record of the new fit (the
first updated view) and (b) until the new fit is done. Also: while one tab runs a long fit, how
long a second tab takes to load and show its own finished fit.

Run: ``.venv/bin/python benchmarks/bench_app.py`` (serves the apps itself).
"""

from __future__ import annotations

import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _common import Table, parser, save
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.ui.test_browser import DEEP_TEXT  # noqa: E402  (the same text probe as the tests)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run"]


def serve():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    apps = sorted(str(p) for p in (ROOT / "apps").glob("*.py"))
    proc = subprocess.Popen([sys.executable, "-m", "panel", "serve", *apps, "--port", str(port),
                             "--address", "127.0.0.1", "--allow-websocket-origin",
                             f"127.0.0.1:{port}", "--check-unused-sessions", "1000",
                             "--unused-session-lifetime", "1000"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/explorer", timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("server did not start")


def status(page):
    return page.locator(".status-line").first.evaluate(DEEP_TEXT)


def wait(page, predicate, timeout=60.0):
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        s = status(page)
        if predicate(s):
            return time.perf_counter() - start, s
        time.sleep(0.01)
    raise TimeoutError(status(page))


def done(s):
    return bool(re.search(r"Selected: \d+ features.*done", s))


WATCH = """(el, [deep, before]) => {
  const text = eval(deep);
  const t0 = performance.now();
  window.__first = null; window.__done = null;
  const poll = () => {
    const s = text(el);
    const now = performance.now();
    if (window.__first === null && s !== before && s.includes('iteration')
        && !s.includes('– features')) window.__first = now - t0;
    if (window.__first !== null && /done/.test(s)) { window.__done = now - t0; return; }
    setTimeout(poll, 5);
  };
  poll();
}"""


def measure_change(page, act, repeats):
    """Time, inside the page (no driver round trips), from the input to the first status line
    of the new fit and to the finished fit."""
    firsts, totals = [], []
    for r in range(repeats):
        wait(page, done)
        page.locator(".status-line").first.evaluate(WATCH, [DEEP_TEXT, status(page)])
        act(page, r)
        page.wait_for_function("() => window.__done !== null", timeout=60000, polling=50)
        firsts.append(page.evaluate("window.__first") / 1000.0)
        totals.append(page.evaluate("window.__done") / 1000.0)
    return statistics.median(firsts), statistics.median(totals), max(firsts)


def toggle_select(css, values):
    def act(page, r):
        page.locator(f"{css} select").select_option(values[r % len(values)])
    return act


def press_slider(css):
    def act(page, r):
        handle = page.locator(f"{css} .noUi-handle").first
        handle.focus()
        handle.press("ArrowLeft" if r % 2 == 0 else "ArrowRight")
    return act


def main():
    args = parser(__doc__).parse_args()
    repeats = 3 if args.quick else 7
    proc, url = serve()
    tables = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            table = Table(f"Dashboard responsiveness in chromium (median of {repeats} changes; "
                          "target: first updated view < 0.5 s)",
                          ["data", "method", "change", "first updated view s", "worst s",
                           "fit shown done s"])
            cases = [
                ("digits-3v8", "fgm", "loss select", "dataset=digits-3v8&method=fgm&B=5",
                 toggle_select(".param-loss", ["logistic", "squared_hinge"])),
                ("digits-3v8", "fgm", "B slider (keyboard)", "dataset=digits-3v8&method=fgm&B=5",
                 press_slider(".param-B")),
                ("fsa-correlated 1,000×1,000", "fsa", "k slider (keyboard)",
                 "dataset=fsa-correlated&method=fsa&k=10", press_slider(".param-k")),
                ("fsa-correlated 1,000×1,000", "fgm", "B slider (keyboard)",
                 "dataset=fsa-correlated&method=fgm&B=10", press_slider(".param-B")),
            ]
            for name, method, change, query, act in cases:
                page = context.new_page()
                page.goto(f"{url}/explorer?{query}")
                first, total, worst = measure_change(page, act, repeats)
                table.add(name, method, change, first, worst, total)
                page.close()
            tables.append(table)

            table = Table("A second tab while the first runs a long fit (4,096-column FGM, "
                          "200 outer iterations)",
                          ["first tab", "second tab loads and shows a finished fit s",
                           "first tab still running"])
            idle = context.new_page()
            start = time.perf_counter()
            idle.goto(f"{url}/explorer?dataset=digits-3v8&method=fisher&k=4")
            wait(idle, done)
            table.add("idle (no other fit)", time.perf_counter() - start, "–")
            idle.close()
            long_page = context.new_page()
            long_page.goto(f"{url}/explorer?dataset=fgm-type1&method=fgm&B=2&max_outer=200"
                           "&tol=0&inner_tol=1e-12&max_inner=5000")
            wait(long_page, lambda s: "running" in s and "iteration" in s)
            second = context.new_page()
            start = time.perf_counter()
            second.goto(f"{url}/explorer?dataset=digits-3v8&method=fisher&k=4")
            wait(second, done)
            elapsed = time.perf_counter() - start
            table.add("FGM fitting", elapsed, "running" in status(long_page))
            long_page.locator(".btn-stop button").click()
            tables.append(table)
            browser.close()
    finally:
        proc.terminate()
    save("app" + ("-quick" if args.quick else ""), tables)


if __name__ == "__main__":
    main()
