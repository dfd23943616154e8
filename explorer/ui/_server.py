"""What the server process needs once: a quiet log when a browser page goes away.

Bokeh writes document updates to each page's websocket without waiting for the write. When a
student closes a tab (or the browser drops the connection) during an update, tornado's write
fails with ``WebSocketClosedError`` and asyncio logs "Task exception was never retrieved" with
two tracebacks — nothing went wrong in the explorer, but a teacher reading the log of a shared
server cannot tell. :func:`quiet_closed_pages` turns exactly that report into one debug line and
leaves every other exception to the handler that was there before.
"""

from __future__ import annotations

import asyncio
import logging

from tornado.websocket import WebSocketClosedError

log = logging.getLogger("explorer.server")


def quiet_closed_pages(loop: asyncio.AbstractEventLoop | None = None) -> bool:
    """Install the closed-page filter on ``loop`` (default: the running loop, i.e. the Bokeh
    server's when called from an app script); once per loop. Returns whether a loop was
    found."""
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not inside a server (a notebook cell, a plain script)
            return False
    previous = loop.get_exception_handler()
    if getattr(previous, "explorer_closed_pages", False):
        return True

    def handler(loop, context):
        if isinstance(context.get("exception"), WebSocketClosedError):
            log.debug("a page closed while the server wrote to it: %s", context.get("message"))
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.explorer_closed_pages = True
    loop.set_exception_handler(handler)
    return True
