"""Browser-test plumbing: Debian's chromium for Playwright, and the real apps served by
``panel serve`` in a subprocess (polled until live)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("EXPLORER_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server():
    """The explorer and teaching pages, served exactly as `make serve` does."""
    port = _free_port()
    apps = sorted(str(p) for p in (ROOT / "apps").glob("*.py"))
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", *apps, "--port", str(port), "--address",
         "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}", "--index", "explorer",
         # as `make serve`: a closed tab's session (and its worker threads) ends within ~2 s
         "--check-unused-sessions", "1000", "--unused-session-lifetime", "1000"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"panel serve exited with {proc.returncode}; see {log.name}")
        try:
            with urllib.request.urlopen(url + "/explorer", timeout=5) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        raise RuntimeError("panel serve did not come up within 90 s")
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def shot(request):
    """Save a screenshot of a page as a test artifact."""
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, suffix: str = ""):
        name = request.node.name.replace("/", "_") + (f"-{suffix}" if suffix else "")
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    return take
