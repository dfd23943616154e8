"""Closing a browser tab ends its session and stops the session's worker threads."""

from __future__ import annotations

import socket
import threading
import time

import panel as pn
import pytest

from explorer.ui import ExplorerApp

pytestmark = pytest.mark.ui


def _fit_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "explorer-fit" and t.is_alive())


def test_closing_the_tab_stops_the_session_worker(browser):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = _fit_threads()
    server = pn.serve({"explorer": lambda: ExplorerApp().servable_template()}, port=port,
                      address="127.0.0.1", show=False, threaded=True, start=True,
                      websocket_origin=[f"127.0.0.1:{port}"],
                      check_unused_sessions_milliseconds=500,
                      unused_session_lifetime_milliseconds=500)
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/explorer?dataset=digits-2v3&method=fisher")
        deadline = time.time() + 30
        while _fit_threads() <= before and time.time() < deadline:
            time.sleep(0.1)
        assert _fit_threads() == before + 1
        page.close()
        deadline = time.time() + 30
        while _fit_threads() > before and time.time() < deadline:
            time.sleep(0.2)
        assert _fit_threads() == before, "the closed tab's worker thread is still alive"
    finally:
        server.stop()
