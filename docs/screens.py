"""Screenshots of the dashboard tour and the lessons for the documentation (``make docs-screens``).

Serves the explorer as ``make serve`` does, drives Debian's chromium through Playwright, and
writes the PNG files the pages show into ``docs/_static/screens``. Run it after a change to a
page, look at every picture, and commit them with the change.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "_static" / "screens"
CHROMIUM = os.environ.get("EXPLORER_CHROMIUM", "/usr/bin/chromium")
WINDOW = {"width": 1400, "height": 900}
TALL = {"width": 1400, "height": 2400}
DONE = re.compile(r"Selected: \d+ .*done")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/explorer", timeout=5):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("explorer serve did not answer within 90 s")


def settle(page, ms: int = 1500) -> None:
    page.wait_for_timeout(ms)


def save(page, name: str, *css: str) -> None:
    """The window, or the smallest rectangle around the page's components ``css`` (the
    first match of each); a tall window's blank bottom is cut off."""
    path = OUT / f"{name}.png"
    if not css:
        page.screenshot(path=str(path))
    else:
        boxes = [page.locator(c).first.bounding_box() for c in css]
        x0, y0 = min(b["x"] for b in boxes), min(b["y"] for b in boxes)
        x1 = max(b["x"] + b["width"] for b in boxes)
        y1 = max(b["y"] + b["height"] for b in boxes)
        page.screenshot(path=str(path), clip={"x": x0, "y": y0, "width": x1 - x0,
                                              "height": y1 - y0})
    trim_bottom(path)
    print(f"wrote {path.relative_to(ROOT)}")


def trim_bottom(path: Path, margin: int = 16) -> None:
    """Cut the rows below the last one that differs from the bottom row's colour."""
    image = Image.open(path).convert("RGB")
    pixels = np.asarray(image).astype(int)
    differs = np.abs(pixels - pixels[-1:, :, :]).sum(axis=(1, 2)) > 0
    last = int(np.flatnonzero(differs)[-1]) if differs.any() else pixels.shape[0] - 1
    if last + margin < pixels.shape[0] - 1:
        image.crop((0, 0, image.width, last + margin)).save(path)


def tab(page, label: str) -> None:
    page.locator(".view-tabs").get_by_text(label, exact=True).click()


def dashboard(page, url: str) -> None:
    page.goto(f"{url}/explorer?dataset=digits-3v8&method=fgm&B=5")
    expect(page.get_by_text(DONE).first).to_be_visible(timeout=60_000)
    settle(page)
    save(page, "explorer")
    save(page, "dashboard-controls", "#sidebar")
    save(page, "dashboard-convergence", ".view-convergence", ".view-kept")
    page.set_viewport_size(TALL)  # the template scrolls inside its main area: show it all
    settle(page)
    save(page, "dashboard-sparsity", ".view-tabs")
    tab(page, "Accuracy vs #features")
    expect(page.get_by_text(re.compile(r"finished: \d+ points")).first).to_be_visible(
        timeout=180_000)
    settle(page)
    save(page, "dashboard-accuracy", ".view-tabs")
    tab(page, "Selected features")
    settle(page)
    save(page, "dashboard-selected", ".view-tabs")
    tab(page, "Stability")
    page.get_by_role("button", name="Run stability").click()
    expect(page.get_by_text(re.compile(r"after 50/50 resamples")).first).to_be_visible(
        timeout=180_000)
    expect(page.locator(".view-agreement").first).to_be_visible(timeout=60_000)
    settle(page, 2500)
    save(page, "dashboard-stability", ".view-tabs")
    tab(page, "Error control")
    page.get_by_role("button", name="Run error control").click()
    expect(page.locator(".knockoff-verdict").get_by_text("Knockoffs")).to_be_visible(
        timeout=300_000)
    expect(page.locator(".view-redundancy .bk-Canvas, .view-redundancy canvas").first
           ).to_be_visible(timeout=120_000)
    settle(page, 2500)
    save(page, "dashboard-error-control", ".view-tabs")
    page.set_viewport_size(WINDOW)


def knowledge(page, url: str) -> None:
    """FSA on the digits with a pixel pinned and one excluded: the sidebar's inputs, the
    page's line, the table's marks and the map's."""
    page.set_viewport_size(TALL)
    page.goto(f"{url}/explorer?dataset=digits-3v8&method=fsa&k=6&pin=0%2C4&ban=26")
    expect(page.get_by_text(DONE).first).to_be_visible(timeout=60_000)
    expect(page.locator(".knowledge-line").get_by_text("never in")).to_be_visible()
    tab(page, "Selected features")
    settle(page)
    save(page, "dashboard-knowledge", ".knowledge-line", ".view-tabs")
    page.locator(".input-pin").scroll_into_view_if_needed()
    save(page, "dashboard-knowledge-controls", ".input-pin", ".input-ban", ".toggle-positive")
    tab(page, "Sparsity map")
    settle(page)
    save(page, "dashboard-knowledge-map", ".view-sparsity")
    page.set_viewport_size(WINDOW)


def text_data(page, url: str) -> None:
    page.goto(f"{url}/explorer?dataset=fine-foods&method=fgm&k=10")
    expect(page.get_by_text(DONE).first).to_be_visible(timeout=90_000)
    page.set_viewport_size(TALL)
    settle(page)
    save(page, "dashboard-text", ".view-tabs")
    page.set_viewport_size(WINDOW)


def uploads(page, url: str) -> None:
    """A user's own images: 15 subjects' faces as a MATLAB file through the file box, the
    shape guessed, FGM's weights on the 32 × 32 grid."""
    import tempfile

    import scipy.io

    from explorer.data import make_faces

    faces = make_faces()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "faces.mat"
        scipy.io.savemat(path, {"X": faces.X, "Y": faces.y[:, None]})
        page.goto(f"{url}/explorer?dataset=digits-3v8&method=fgm")
        expect(page.get_by_text(DONE).first).to_be_visible(timeout=60_000)
        page.locator(".upload-file input[type=file]").set_input_files(str(path))
        expect(page.locator(".data-summary").get_by_text("faces.mat")).to_be_visible(
            timeout=60_000)
        expect(page.get_by_text(DONE).first).to_be_visible(timeout=90_000)
        page.set_viewport_size(TALL)
        tab(page, "Sparsity map")
        settle(page, 2500)
        save(page, "explorer-uploaded-faces", ".data-summary", ".view-sparsity")
        page.set_viewport_size(WINDOW)


def lessons(page, url: str) -> None:
    page.goto(f"{url}/lessons")
    settle(page, 2500)
    save(page, "lessons")
    page.goto(f"{url}/teach_fgm")
    step = page.get_by_role("button", name="Step")
    expect(step).to_be_enabled(timeout=60_000)
    for _ in range(3):
        step.click()
        settle(page, 1500)
    page.set_viewport_size(TALL)
    settle(page)
    save(page, "teach-fgm")
    page.set_viewport_size(WINDOW)
    page.goto(f"{url}/teach_fsa")
    expect(page.get_by_role("button", name="Step")).to_be_enabled(timeout=60_000)
    page.get_by_role("button", name="Run to the end").click()
    settle(page, 6000)
    page.set_viewport_size(TALL)
    settle(page)
    save(page, "teach-fsa")
    page.set_viewport_size(WINDOW)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("dashboard", "knowledge", "text", "uploads",
                                           "lessons"),
                        action="append",
                        help="one part of the tour (repeatable; default: all)")
    args = parser.parse_args(argv)
    parts = {"dashboard": dashboard, "knowledge": knowledge, "text": text_data,
             "uploads": uploads, "lessons": lessons}
    chosen = args.only or list(parts)
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing: install Debian's chromium package (`make chromium`)")
    OUT.mkdir(parents=True, exist_ok=True)
    port = free_port()
    proc = serve(port)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport=WINDOW)
            for name in chosen:
                parts[name](page, f"http://127.0.0.1:{port}")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
