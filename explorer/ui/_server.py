"""What the server process needs once: websocket origins checked on every connection, and a
quiet log when a browser page goes away.

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

from tornado.websocket import WebSocketClosedError

log = logging.getLogger("explorer.server")


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
