"""A whole session on a machine without internet: no failed request (nothing is fetched
from outside the server), and no page or console error, on the explorer and the lessons.

(Panel rewrote the stylesheet links every model shares to its CDN once a hidden tab's table
was updated: the app fills a hidden tab when it is next shown.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from .test_browser import settled_status, wait_text

pytestmark = pytest.mark.ui


@pytest.fixture
def watched(page: Page):
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: problems.append(f"console: {m.text}")
            if m.type == "error" else None)
    page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
    page.on("request", lambda r: problems.append(f"outside request: {r.url}")
            if not r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
            else None)
    return page, problems


def visit_every_tab(page: Page) -> None:
    """The accuracy tab until its sweep finishes, the table, then back to the map."""
    tabs = page.locator(".view-tabs")
    tabs.get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "finished", timeout=120)
    tabs.get_by_text("Selected features").click()
    page.wait_for_timeout(500)
    tabs.get_by_text("Sparsity map").click()


def test_a_whole_session_offline_has_no_error_and_no_outside_request(watched, server):
    page, problems = watched
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5&feature_scaling=None")
    before = settled_status(page)
    page.locator(".param-loss select").select_option("logistic")
    settled_status(page, differs_from=before)
    visit_every_tab(page)
    page.locator(".btn-step button").click()
    wait_text(page, ".explanation", "Outer iteration 1")
    page.locator(".btn-step button").click()
    wait_text(page, ".explanation", "Outer iteration 2")
    page.locator(".select-method select").select_option("FSA (fsa)")
    page.wait_for_timeout(3000)
    for lesson in ("teach_fgm", "teach_fsa"):
        page.goto(f"{server}/{lesson}")
        page.locator(".btn-step button").first.click()
        page.wait_for_timeout(2000)
    assert problems == [], "\n".join(problems[:40])


def test_every_tab_and_a_method_change_raise_no_page_error(page: Page, server):
    """Each view's legend exists from its first draw, so no update restyles a legend that
    has no view yet (BokehJS: "cannot find a view for Legend", dozens a session)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fgm&B=5&feature_scaling=None")
    before = settled_status(page)
    visit_every_tab(page)
    page.locator(".param-loss select").select_option("logistic")
    before = settled_status(page, differs_from=before)
    page.locator(".btn-step button").click()
    wait_text(page, ".explanation", "Outer iteration 1")
    page.locator(".select-method select").select_option("FSA (fsa)")
    settled_status(page, differs_from=before, timeout=60)
    page.wait_for_timeout(1000)
    assert errors == [], errors[:10]
