"""Real-browser tests: Playwright driving Debian's chromium against `panel serve` apps."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.ui


DEEP_TEXT = """e => {
  const walk = n => {
    let t = n.shadowRoot ? walk(n.shadowRoot) : "";
    for (const c of n.childNodes) {
      if (c.nodeType === 3) t += c.textContent;
      else if (c.nodeType === 1 && c.tagName !== "STYLE" && c.tagName !== "SCRIPT") t += walk(c);
    }
    return t;
  };
  return walk(e);
}"""


def text(page: Page, css: str) -> str:
    """Visible text of a Panel component, through its (nested, open) shadow roots."""
    loc = page.locator(css).first
    if loc.count() == 0:
        return ""
    return loc.evaluate(DEEP_TEXT)


def status(page: Page) -> str:
    return text(page, ".status-line")


def wait_text(page: Page, css: str, fragment: str, timeout: float = 20.0) -> str:
    return wait_for(lambda: (lambda t: t if fragment in t else None)(text(page, css)), timeout)


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not reached in time")


def settled_status(page: Page, timeout: float = 30.0, differs_from: str | None = None) -> str:
    """Wait for a finished fit (different from ``differs_from``) and return its status."""
    def settled():
        s = status(page)
        if re.search(r"Selected: \d+ (input )?features.*done", s) and s != differs_from:
            return s
        return None

    try:
        return wait_for(settled, timeout)
    except AssertionError:
        raise AssertionError(f"no finished fit; status {status(page)!r}, message "
                             f"{text(page, '.message')!r}") from None


def test_load_by_url_reproduces_the_view(page: Page, server, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5&C=10")
    line = settled_status(page)
    assert re.search(r"Selected: \d+ (input )?features", line)
    assert re.search(r"B \(features per block\):\s*5", text(page, ".param-B"))
    expect(page.locator(".select-method select")).to_have_value(re.compile("fgm"))
    assert "B=5" in page.url and "dataset=digits-3v8" in page.url
    expect(page.locator(".view-sparsity canvas").first).to_be_visible()
    shot(page)


def test_changing_a_parameter_refits_and_redraws(page: Page, server, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5")
    before = settled_status(page)
    plot = page.locator(".view-convergence").first
    image_before = plot.screenshot()
    page.locator(".param-loss select").select_option("logistic")
    after = wait_for(lambda: (lambda s: s if s != before and "done" in s else None)(
        status(page)))
    assert re.search(r"Selected: \d+ (input )?features", after)
    wait_for(lambda: plot.screenshot() != image_before, timeout=10)
    assert "loss=logistic" in page.url
    from .test_truth import FIGURE  # (that module imports this one)

    n = int(re.search(r"iteration (\d+)", after).group(1))

    def drawn_to_the_end():  # the screenshot shows the fit the status line reports
        fig = page.evaluate(FIGURE, "#features") or {"glyphs": []}
        return any(len(g["cols"].get("iteration", [])) == n for g in fig["glyphs"]) or None

    wait_for(drawn_to_the_end)
    shot(page)


def test_slider_keyboard_change_is_throttled_into_one_refit(page: Page, server):
    page.goto(f"{server}/explorer?dataset=fsa-correlated&method=fsa&k=10")
    settled_status(page)
    handle = page.locator(".param-k .noUi-handle").first
    handle.focus()
    handle.press("ArrowLeft")
    line = wait_for(lambda: (lambda s: s if "done" in s and not s.startswith(
        "Selected: 10 ") else None)(status(page)))
    n = int(re.search(r"Selected: (\d+)", line).group(1))
    assert n < 10
    assert re.search(r"k=\d+", page.url)


def test_upload_good_file_then_bad_file(page: Page, server, tmp_path, shot):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    good = tmp_path / "measurements.csv"
    good.write_text("a,b,c,d,e,f,outcome\n" + "\n".join(
        ",".join(f"{v:.4f}" for v in row) + f",{t}" for row, t in zip(X, y)))
    bad = tmp_path / "corrupted.csv"
    bad.write_text("a,b,outcome\n1,2,0\n3,4,5,1\n")
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=3")
    settled_status(page)
    page.locator(".upload-file input[type=file]").set_input_files(str(good))
    wait_text(page, ".data-summary", "measurements.csv")
    expect(page.locator(".select-label select")).to_be_visible()
    line = settled_status(page)
    assert line.startswith("Selected: 3 features")
    page.locator(".upload-file input[type=file]").set_input_files(str(bad))
    message = wait_text(page, ".message", "corrupted.csv")
    assert "ragged" in message
    # the drop zone does not say "Upload complete" beside the refusal: it is empty again
    wait_for(lambda: page.locator(".upload-file .filepond--item").count() == 0, timeout=10)
    assert "Upload complete" not in page.locator(".upload-file").inner_text()
    # the previous data is still there and usable
    assert "measurements.csv" in text(page, ".data-summary")
    shot(page)


def test_stop_cancels_a_long_fit_cleanly(page: Page, server, shot):
    # 4,096 rows: the fit starts with the session and must outlast the page's loading
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=2&max_outer=200&tol=0"
              "&inner_tol=1e-12&max_inner=5000&data.n_samples=4096")
    wait_for(lambda: "running" in status(page) and "iteration" in status(page))
    page.locator(".btn-stop button").click()
    wait_text(page, ".message", "Stopped", timeout=30)
    line = wait_text(page, ".status-line", "stopped")
    iteration = int(re.search(r"iteration (\d+)", line).group(1))
    assert iteration < 200 and "done" not in line
    shot(page)


def test_step_runs_one_outer_iteration_and_explains_it(page: Page, server, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=3")
    settled_status(page)
    page.locator(".btn-step button").click()
    explanation = wait_text(page, ".explanation", "Outer iteration 1")
    assert "worst-case analysis" in explanation
    try:
        wait_for(lambda: "paused" in status(page))
    except AssertionError:
        raise AssertionError(f"not paused after one step: {status(page)!r}") from None
    page.locator(".btn-step button").click()
    wait_text(page, ".explanation", "Outer iteration 2")
    expect(page.locator(".btn-run button")).to_have_text("Resume")
    shot(page)


def test_second_tab_stays_live_during_a_long_fit(page: Page, server, context):
    # 4,096 rows: the fit starts with the session and must outlast the page's loading
    page.goto(f"{server}/explorer?dataset=fgm-type1&method=fgm&B=2&max_outer=200&tol=0"
              "&inner_tol=1e-12&max_inner=5000&data.n_samples=4096")
    wait_for(lambda: "running" in status(page))
    other = context.new_page()
    start = time.time()
    other.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=4")
    settled_status(other, timeout=20)
    assert time.time() - start < 20
    assert "running" in status(page)  # the first tab's fit is still going
    page.locator(".btn-stop button").click()


def test_teaching_pages_step(page: Page, server, shot):
    page.goto(f"{server}/teach_fgm")
    page.locator(".btn-step button").first.click()
    wait_text(page, ".explanation", "Outer iteration 1")
    shot(page, "fgm")
    page.goto(f"{server}/teach_fsa")
    page.locator(".btn-step button").first.click()
    assert "killed" in wait_text(page, ".explanation", "Iteration 1")
    shot(page, "fsa")


def test_accuracy_tab_sweeps_in_the_background(page: Page, server, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=4")
    settled_status(page)
    assert text(page, ".sweep-status").strip() == ""  # nothing is swept until someone looks
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "sweep", timeout=20)
    done = wait_text(page, ".sweep-status", "finished", timeout=90)
    assert int(re.search(r"finished: (\d+) points", done).group(1)) >= 10
    expect(page.locator(".view-accuracy canvas").first).to_be_visible()
    shot(page)

