"""The page around the explorer and the lessons: Panel's FAST list template, without the web
font its design links from a CDN (offline — a classroom, a laptop on a train — every page
had a failed request for it; the system's sans-serif is used instead).

Panel reads the design's font from ``Fast._resources["font"]`` in two places (the template's
own resources, and the document's through ``config.design``), so the font entry is taken out
of the design class itself, once, when this module is imported."""

from __future__ import annotations

import panel as pn
from panel.theme.fast import Fast

HEADER = "#1f4e79"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

Fast._resources = {kind: value for kind, value in Fast._resources.items() if kind != "font"}


def page_template(title: str, main: list, sidebar: list | None = None, **params):
    """A FAST list template titled ``title`` that loads nothing from outside this server."""
    if sidebar:
        params.setdefault("sidebar_width", 340)
    return pn.template.FastListTemplate(title=title, main=main, sidebar=sidebar or [],
                                        header_background=HEADER, font=FONT, **params)
