"""The page around the explorer and the lessons: Panel's FAST list template, without the web
font its design links from a CDN (offline — a classroom, a laptop on a train — every page
had a failed request for it; the system's sans-serif is used instead).

Panel reads the design's font from ``Fast._resources["font"]`` in two places (the template's
own resources, and the document's through ``config.design``), so the font entry is taken out
of the design class itself, once, when this module is imported."""

from __future__ import annotations

import panel as pn
from bokeh.core.validation import silence
from bokeh.core.validation.warnings import FIXED_SIZING_MODE
from panel.theme.fast import Fast

HEADER = "#1f4e79"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

Fast._resources = {kind: value for kind, value in Fast._resources.items() if kind != "font"}


def page_template(title: str, main: list, sidebar: list | None = None, **params):
    """A FAST list template titled ``title`` that loads nothing from outside this server.

    Without Panel's busy indicator: it follows the server-wide busy flag, so every session's
    indicator was updated whenever any session was busy (7 % of the event loop under a
    class of 30); the status line says what runs."""
    if sidebar:
        params.setdefault("sidebar_width", 340)
    params.setdefault("busy_indicator", None)
    return pn.template.FastListTemplate(title=title, main=main, sidebar=sidebar or [],
                                        header_background=HEADER, font=FONT, **params)


def serve_page(build, title: str, *extensions: str, **config) -> None:
    """What every app script does once per page: compile the kernels in the background (once
    per server process), turn a closed tab's write into a debug line, hold the allowed origins
    for same-origin pages too, load Panel's ``extensions``, then serve ``build()`` — a
    template, or a view put in the project's page template — titled ``title``."""
    from ._server import enforce_websocket_origins, quiet_closed_pages
    from ._worker import warm_up_kernels

    warm_up_kernels()
    # an image's figure is sized by its frame (HoloViews's data_aspect sets frame_width and
    # frame_height), which Bokeh's check of a fixed size does not read: one W-1005 line in
    # the server's log per page served, about a figure drawn at the size it should be
    silence(FIXED_SIZING_MODE, True)
    quiet_closed_pages()
    enforce_websocket_origins()
    pn.extension(*extensions, sizing_mode="stretch_width", **config)
    page = build()
    if not isinstance(page, pn.template.BaseTemplate):
        page = page_template(title, main=[page])
    doc = pn.state.curdoc
    if doc is None:
        page.servable(title=title)
        return
    # one walk of the model graph for the whole page instead of one per change (each slider's
    # label link, each plot): the explorer's page was built in half the time
    with doc.models.freeze():
        page.servable(title=title)

