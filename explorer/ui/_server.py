"""The server's plumbing, for the explorer's page and the lessons alike: websocket origins
checked on every connection, a quiet log when a browser page goes away, and a session's
polling of its workers (:func:`poll_every`, :func:`in_server`).

Tornado (6.5 and later) lets a websocket through without asking the handler's
``check_origin`` when the browser marks it ``Sec-Fetch-Site: same-origin`` — and a page
served under any host name that resolves to this machine (``http://evil.example:5006``) is
"same origin" with its own websocket. Bokeh's ``--allow-websocket-origin`` list, which is how
``explorer serve`` (and ``--share``) restricts who may connect, was then never consulted.
:func:`enforce_websocket_origins` makes every websocket with an ``Origin`` header go through
Bokeh's check, and answers a page asked under a host name outside the list with a page that
says why (the page was blank: its websocket was refused after its HTML had been served).

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

import panel as pn
from tornado.websocket import WebSocketClosedError

log = logging.getLogger("explorer.server")

POLL_MS = 50  # how often a page applies its workers' events


def enforce_websocket_origins() -> None:
    """Check every browser websocket's ``Origin`` against Bokeh's allowed origins, and answer
    a logged-in request for a page under a host name outside them with 403 and why (once per
    process; idempotent). A client that sends no ``Origin`` is not a browser page and is
    left to the login, as before."""
    from bokeh.server.views.ws import WSHandler
    from panel.io.server import DocHandler

    if getattr(WSHandler, "explorer_origins_enforced", False):
        return

    def check_cross_origin(self, check):
        origin = self.request.headers.get("Origin")
        if origin is None or check(origin):
            return None
        return f"Origin {origin!r} not allowed"

    WSHandler._check_cross_origin = check_cross_origin
    WSHandler.explorer_origins_enforced = True
    DocHandler.get = _refusing_foreign_hosts(DocHandler.get)


def _refusing_foreign_hosts(get):
    """``DocHandler.get`` that, once the user is logged in, answers a page asked at a host
    the websocket would refuse with a 403 page naming the addresses that work."""
    import functools
    import html

    from bokeh.server.util import check_allowlist

    @functools.wraps(get)
    async def refusing_get(self, *args, **kwargs):
        origins = sorted(self.application.websocket_origins)
        host = self.request.host
        if self.current_user and origins and not check_allowlist(host, origins):
            log.warning("refused a page asked at %r: not among the allowed origins", host)
            self.set_status(403)
            self.set_header("Content-Type", "text/html; charset=utf-8")
            links = "".join(f'<li><a href="http://{html.escape(o)}{html.escape(self.request.uri)}">'
                            f"{html.escape(o)}</a></li>" for o in origins)
            self.finish(
                "<!doctype html><meta charset='utf-8'><title>Not served at this address</title>"
                "<style>body{font-family:sans-serif;max-width:46em;margin:3em auto;"
                "line-height:1.5}h1{font-size:1.4em}</style>"
                f"<h1>This server does not serve pages at {html.escape(host)}</h1>"
                "<p>The explorer accepts pages only at the addresses it was started with (a page "
                "at another name could not fit or redraw). Open it at one of these:</p>"
                f"<ul>{links}</ul><p>To serve it at this name too, add "
                f"<code>--origin {html.escape(host)}</code> to the <code>explorer serve "
                "--share</code> command, with an <code>--origin</code> for each address "
                "above that should keep working.</p>")
            return None
        return await get(self, *args, **kwargs)

    return refusing_get


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


def in_server() -> bool:
    """True inside a ``panel serve`` session (``pn.state.served`` only answers for the
    calling script's own frame, so library code asks the document instead)."""
    doc = pn.state.curdoc
    return doc is not None and getattr(doc, "session_context", None) is not None


def poll_every(callback, period_ms: int = POLL_MS):
    """Run ``callback`` on the session's event loop every ``period_ms`` as a *background*
    periodic callback: Panel otherwise marks the whole server busy around every call, and with
    20 sessions polling 20 times a second toggling the busy indicators took most of the loop."""
    from panel.io.callbacks import PeriodicCallback

    def tick():
        flush_stuck_writes(pn.state.curdoc)
        return callback()

    periodic = PeriodicCallback(callback=tick, period=period_ms, background=True)
    periodic.start()
    return periodic


def flush_stuck_writes(doc) -> bool:
    """Send the patches Panel queued for ``doc`` and then left behind; True if there were.

    Panel (1.9) queues a patch it cannot write at once (the socket busy) in a per-document
    list and marks the document as writing; its writer clears that mark when it finishes. A
    patch queued while an earlier writer was still finishing lost its mark and no writer came
    for it: the page kept the sweep's "13/16 points" after the sweep had finished, until the
    user's next click wrote something else (one first sweep in five). Each poll hands such
    orphans to Panel's writer again."""
    try:
        from panel.io import document as io_document

        pending = io_document._WRITE_MSGS.get(doc)
        if not pending or doc in io_document._WRITE_BLOCK:
            return False
        io_document._WRITE_BLOCK[doc] = True
        io_document._dispatch_write_task(doc, io_document._dispatch_msgs, doc)
        return True
    except (AttributeError, ImportError, TypeError):  # another Panel: nothing to hand over
        return False
