"""A page closed during an update is not a traceback in the server's log (no browser needed:
the report goes through the event loop's exception handler, driven here directly)."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading

from tornado.websocket import WebSocketClosedError

from explorer.ui._server import quiet_closed_pages


async def _write_to_a_closed_page():
    raise WebSocketClosedError()


async def _fail_otherwise():
    raise ValueError("a real problem")


def _in_own_thread(fn):
    """Run ``fn`` in a fresh thread: no event loop runs there (the browser tests' Playwright
    keeps one running in the main thread)."""
    out, errors = [], []

    def target():
        try:
            out.append(fn())
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(30)
    if errors:
        raise errors[0]
    return out[0]


def _abandon(loop, coroutine):
    """A task that fails and whose exception nobody retrieves, as Bokeh's unawaited writes."""
    task = loop.create_task(coroutine())
    loop.run_until_complete(asyncio.sleep(0.01))
    assert task.done()
    del task
    gc.collect()  # the task reports its unretrieved exception when it is collected


def test_a_closed_page_is_one_debug_line_and_other_errors_still_show(caplog):
    def run():
        loop = asyncio.new_event_loop()
        try:
            assert quiet_closed_pages(loop)
            assert quiet_closed_pages(loop)  # once per loop: the second call adds no layer
            _abandon(loop, _write_to_a_closed_page)
            _abandon(loop, _fail_otherwise)
        finally:
            loop.close()

    with caplog.at_level(logging.DEBUG):
        _in_own_thread(run)
    asyncio_errors = [r for r in caplog.records
                      if r.name == "asyncio" and r.levelno >= logging.WARNING]
    assert len(asyncio_errors) == 1  # the ValueError, reported as asyncio always did
    assert asyncio_errors[0].levelno == logging.ERROR
    assert "a real problem" in str(asyncio_errors[0].exc_info[1])
    quiet = [r for r in caplog.records if r.name == "explorer.server"]
    assert len(quiet) == 1 and quiet[0].levelno == logging.DEBUG
    assert "closed" in quiet[0].getMessage()


def test_the_handler_before_it_still_gets_everything_else():
    loop = asyncio.new_event_loop()
    seen = []
    try:
        loop.set_exception_handler(lambda _loop, context: seen.append(context["message"]))
        quiet_closed_pages(loop)
        loop.call_exception_handler({"message": "closed", "exception": WebSocketClosedError()})
        loop.call_exception_handler({"message": "other", "exception": ValueError("x")})
        assert seen == ["other"]
    finally:
        loop.close()


def test_outside_a_server_there_is_no_loop_to_quiet():
    # a plain call (notebook cell, script) with no loop running: nothing installed
    assert _in_own_thread(quiet_closed_pages) is False
