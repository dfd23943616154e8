"""A knob left on *auto* shows the value the fit used, and unticking auto keeps that value
(the same model), instead of a stale slider value."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page

from .test_browser import settled_status, text, wait_for, wait_text

pytestmark = pytest.mark.ui


def shown(page: Page, name: str) -> float:
    line = text(page, f".param-{name}")
    return float(re.findall(r":\s*([-+0-9.e]+)\s*$", line.strip())[-1])


def objective(line: str) -> float:
    return float(re.search(r"objective (\S+)", line).group(1))


@pytest.mark.parametrize("method, dataset, knob", [
    ("grfl", "xor&max_features=30", "lam"), ("fs-multi", "digits-3v8", "C")])
def test_auto_knob_shows_the_value_used_and_unticking_keeps_it(page: Page, server, method,
                                                               dataset, knob):
    page.goto(f"{server}/explorer?dataset={dataset}&method={method}")
    before = settled_status(page, timeout=90)
    if knob == "lam":  # GrFL says the λ it used in its explanation (its own update, which
        # may reach the page after the status line's)
        said = wait_text(page, ".explanation", "λ = ", timeout=30)
        used = float(re.search(r"λ = ([0-9.e+-]+)\)", said).group(1))
    else:  # FS-multi's auto C is 0.1·n on the training rows
        n = int(re.search(r"(\d+) × \d+", text(page, ".data-summary")).group(1))
        used = 0.1 * n
    value = wait_for(lambda: (lambda v: v if abs(v - used) <= 1e-3 * abs(used) else None)(
        shown(page, knob)), timeout=10)
    assert value == pytest.approx(used, rel=1e-3)
    page.locator(f".auto-{knob} input[type=checkbox]").uncheck()
    after = settled_status(page, timeout=90, differs_from=before)
    assert f"{knob}=" in page.url
    assert shown(page, knob) == pytest.approx(used, rel=1e-3)
    assert objective(after) == pytest.approx(objective(before), rel=1e-3)
