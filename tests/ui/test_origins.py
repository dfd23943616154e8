"""`explorer serve --share` accepts pages only from the allowed origins: a page served under a
foreign host name that resolves to this machine is refused its websocket (it cannot fit),
while the same page under an allowed name works."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from .conftest import CHROMIUM, start_server, stop_server
from .test_browser import settled_status, status

pytestmark = [pytest.mark.ui, pytest.mark.slow]

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    secret = tmp_path_factory.mktemp("share") / "password"
    secret.write_text(PASSWORD + "\n")
    proc, url, port, log_path = start_server("--share", "--password-file", str(secret),
                                             log_name="share-origins.log")
    yield port, log_path
    stop_server(proc)


@pytest.fixture
def resolving_page(browser_type, shared):
    """A page in a chromium that resolves evil.example to this machine."""
    browser = browser_type.launch(
        executable_path=CHROMIUM,
        args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run",
              "--host-resolver-rules=MAP evil.example 127.0.0.1"])
    page = browser.new_page()
    yield page
    browser.close()


def login(page: Page, base: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=username]", "class")
    page.fill("input[name=password]", PASSWORD)
    page.locator("button, input[type=submit]").first.click()
    page.wait_for_load_state()


@pytest.mark.parametrize("host, allowed", [("evil.example", False), ("127.0.0.1", True)])
def test_share_refuses_pages_from_foreign_origins(resolving_page, shared, host, allowed):
    port, log_path = shared
    base = f"http://{host}:{port}"
    start = log_path.stat().st_size
    login(resolving_page, base)
    resolving_page.goto(f"{base}/explorer?dataset=digits-3v8&method=fisher&k=3")
    if allowed:
        assert "done" in settled_status(resolving_page, timeout=30)
    else:
        resolving_page.wait_for_timeout(6000)
        assert "done" not in status(resolving_page)
        with open(log_path) as f:
            f.seek(start)
            log = f.read()
        assert f"Refusing websocket connection from Origin 'http://{host}:{port}'" in log
