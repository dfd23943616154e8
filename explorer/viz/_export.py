"""Every figure saves itself as SVG next to Bokeh's PNG save: a toolbar button that paints the
figure through BokehJS's SVG canvas (``PlotView.export("svg")``) and downloads it, named after
the figure's title. No server round trip and no browser driver on the server."""

from __future__ import annotations

import base64
import re

import holoviews as hv
from bokeh.models import CustomAction, CustomJS, HoverTool, SaveTool

SVG_TAG = "save-svg"
_ICON = ('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><text x="10" y="13.5" '
         'font-family="sans-serif" font-size="8" font-weight="bold" text-anchor="middle" '
         'fill="#6b6b6b">SVG</text></svg>')
ICON = "data:image/svg+xml;base64," + base64.b64encode(_ICON.encode()).decode()
_SAVE = """
const view = cb_obj.document.views_manager.find_one(figure)
if (view == null) return
const title = (figure.title != null && figure.title.text) ? figure.title.text : "figure"
const name = title.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "").toLowerCase()
view.export("svg").to_blob().then((blob) => {
  const link = document.createElement("a")
  link.href = URL.createObjectURL(blob)
  link.download = (name || "figure") + ".svg"
  link.target = "_blank"
  link.dispatchEvent(new MouseEvent("click"))
})
"""


def add_svg_save(plot, element) -> None:
    """HoloViews hook: give the figure a *Save as SVG* button (once) beside Bokeh's own save,
    *Save as PNG*; both save at once under the figure's title (Bokeh's asked for a name).
    Room for it beside a frame (a tool that does not fit folds into an overflow menu): the
    toolbar drops Bokeh's logo, and a toolbar beside the frame shows no hover switch (the
    hover stays on); one along the top keeps it."""
    figure = plot.state
    toolbar = getattr(figure, "toolbar", None)
    if toolbar is None:
        return
    title = getattr(getattr(figure, "title", None), "text", "") or ""
    for tool in toolbar.tools:
        if isinstance(tool, SaveTool):
            tool.description = "Save as PNG"
            tool.filename = file_name(title)
    if any(SVG_TAG in tool.tags for tool in toolbar.tools):
        return
    toolbar.logo = None
    if getattr(figure, "toolbar_location", "right") in ("right", "left"):
        for tool in toolbar.tools:
            if isinstance(tool, HoverTool):
                tool.visible = False
    figure.add_tools(CustomAction(description="Save as SVG", icon=ICON, tags=[SVG_TAG],
                                  callback=CustomJS(args={"figure": figure}, code=_SAVE)))


def file_name(title: str) -> str:
    """A figure's file name from its title, as the SVG button makes it in the browser."""
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower() or "figure"


# the element types the views draw; a figure's hooks run once per layer, the button is added once
_EVERYWHERE = False
_DRAWN = ("Area", "Bars", "Curve", "ErrorBars", "HeatMap", "Image", "Points", "Rectangles",
          "Scatter", "Segments", "Spread", "VLines", "HLines", "Labels", "Overlay")


def svg_save_everywhere() -> None:
    """Make :func:`add_svg_save` a default hook of every element type the views draw (the
    elements that set hooks of their own list it too). Once per process."""
    global _EVERYWHERE
    if _EVERYWHERE:
        return
    _EVERYWHERE = True
    hv.opts.defaults(*(getattr(hv.opts, name)(hooks=[add_svg_save]) for name in _DRAWN),
                     backend="bokeh")
