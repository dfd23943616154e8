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


def start_server(*extra: str, env: dict | None = None, log_name: str = "server.log",
                 port: int | None = None):
    """`explorer serve` (what `make serve` runs) on ``port`` (default: a free one), polled
    until it answers. Returns (process, base URL, port, log path)."""
    port = _free_port() if port is None else port
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / log_name
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port),
                             *extra], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            log.close()
            raise RuntimeError(f"explorer serve exited with {proc.returncode}: "
                               f"{log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/login" if "--share" in extra
                                        else url + "/explorer", timeout=5) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        raise RuntimeError("explorer serve did not come up within 90 s")
    proc.log_file = log
    return proc, url, port, log_path


def stop_server(proc) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    proc.log_file.close()


@pytest.fixture(scope="session")
def served():
    """The explorer and teaching pages, served exactly as `make serve` does."""
    proc, url, port, log_path = start_server()
    yield proc, url, port, log_path
    stop_server(proc)


@pytest.fixture(scope="session")
def server(served):
    return served[1]


@pytest.fixture
def server_log(served):
    """The server's log from this point on (tests assert it has no traceback)."""
    path = served[3]
    start = path.stat().st_size

    def read() -> str:
        with open(path) as f:
            f.seek(start)
            return f.read()

    return read


@pytest.fixture
def shot(request):
    """Save a screenshot of a page as a test artifact."""
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, suffix: str = ""):
        name = request.node.name.replace("/", "_") + (f"-{suffix}" if suffix else "")
        # the template scrolls inside its main area, which a full-page shot does not unroll:
        # a tall window shows every view
        size = page.viewport_size
        page.set_viewport_size({"width": size["width"], "height": 2600})
        page.wait_for_timeout(800)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        page.set_viewport_size(size)

    return take
