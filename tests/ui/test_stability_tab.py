"""The Stability tab: Φ̂ with its interval fills in as resamples arrive, the frequency picture
and the agreement of the compared methods, with what the server logs free of tracebacks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .test_browser import settled_status, text, wait_for, wait_text
from .test_truth import FIGURE

pytestmark = pytest.mark.ui


def test_stability_fills_in_phi_and_the_agreement(page: Page, server, server_log, shot):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&k=10")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Stability").click()
    button = page.locator(".btn-stability button")
    expect(button).to_be_visible()
    button.click()
    first = wait_for(lambda: re.search(r"Φ̂ = ([\d.]+) \(95 % interval ([\d.-]+) – ([\d.]+)\) "
                                       r"after (\d+)/50", text(page, ".stability-status")), 10)
    # Φ̂ is shown while the resamples run, not only at the end (their speed is measured by
    # benchmarks/bench_stability.py, not here)
    assert 2 <= int(first.group(4)) < 50
    low, phi, high = float(first.group(2)), float(first.group(1)), float(first.group(3))
    assert low <= phi <= high
    line = wait_text(page, ".stability-status", "mean Jaccard", timeout=60)
    assert "after 50/50 resamples" in line
    curve = wait_for(lambda: page.evaluate(FIGURE, "Φ̂ and its 95 % interval"), 10)
    xs = [v for g in curve["glyphs"] for v in g["cols"].get("resamples", [])]
    assert max(xs) == 50 and curve["y"][0] < 0 < 1 < curve["y"][1]
    wait_for(lambda: page.evaluate(FIGURE, "selection frequency on the image grid"), 10)
    lists = wait_text(page, ".agreement-lists", "Jaccard", timeout=30)
    assert "fgm" in lists and "l1-svm" in lists and "only fgm" in lists
    assert re.search(r"r\dc\d", lists)  # the pixels' names
    heat = wait_for(lambda: page.evaluate(FIGURE, "agreement at the same k"), 10)
    assert heat is not None
    expect(page.locator(".download-stability")).to_be_visible()
    shot(page)
    assert "Traceback" not in server_log()
