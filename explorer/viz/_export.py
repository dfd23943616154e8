"""Every figure saves itself as PNG and as SVG: two toolbar buttons that paint the figure
through BokehJS's SVG canvas (``PlotView.export("svg")``) and download it, named after the
figure's title. The PNG is that SVG rasterised at ``PNG_SCALE`` times the figure's size on the
screen (print resolution: a 700-pixel plot becomes 2,100 pixels wide); where the browser cannot
rasterise it, Bokeh's own screen-size PNG. No server round trip and no browser driver on the
server."""

from __future__ import annotations

import base64
import re

import holoviews as hv
from bokeh.models import CustomAction, CustomJS, HoverTool, SaveTool

SVG_TAG = "save-svg"
PNG_TAG = "save-png"
PNG_SCALE = 3  # the saved PNG's pixels per screen pixel


def _icon(label: str) -> str:
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><text x="10" '
           'y="13.5" font-family="sans-serif" font-size="8" font-weight="bold" '
           f'text-anchor="middle" fill="#6b6b6b">{label}</text></svg>')
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


ICON = _icon("SVG")
PNG_ICON = _icon("PNG")
_DOWNLOAD = """
const view = cb_obj.document.views_manager.find_one(figure)
if (view == null) return
const title = (figure.title != null && figure.title.text) ? figure.title.text : "figure"
const name = title.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "").toLowerCase()
function save(blob, extension) {
  const link = document.createElement("a")
  link.href = URL.createObjectURL(blob)
  link.download = (name || "figure") + extension
  link.target = "_blank"
  link.dispatchEvent(new MouseEvent("click"))
}
"""
_SAVE = _DOWNLOAD + """
view.export("svg").to_blob().then((blob) => save(blob, ".svg"))
"""
_SAVE_PNG = _DOWNLOAD + """
const screen = () => view.export("png").to_blob().then((blob) => save(blob, ".png"))
view.export("svg").to_blob().then((svg) => {
  const url = URL.createObjectURL(svg)
  const image = new Image()
  image.onload = () => {
    const canvas = document.createElement("canvas")
    canvas.width = Math.round(image.width * scale)
    canvas.height = Math.round(image.height * scale)
    canvas.getContext("2d").drawImage(image, 0, 0, canvas.width, canvas.height)
    URL.revokeObjectURL(url)
    try {
      canvas.toBlob((png) => png != null ? save(png, ".png") : screen(), "image/png")
    } catch (error) {
      screen()
    }
  }
  image.onerror = () => { URL.revokeObjectURL(url); screen() }
  image.src = url
})
"""


def add_svg_save(plot, element) -> None:
    """HoloViews hook: give the figure its two save buttons (once), *Save as PNG* (at
    ``PNG_SCALE`` times its size on the screen) and *Save as SVG*, both saving at once under
    the figure's title, in place of Bokeh's save (screen size, asking for a name; kept in
    the model, hidden). Room for them beside a frame (a tool that does not fit folds into an
    overflow menu): the toolbar drops Bokeh's logo, and a toolbar beside the frame shows no
    hover switch (the hover stays on); one along the top keeps it."""
    figure = plot.state
    toolbar = getattr(figure, "toolbar", None)
    if toolbar is None:
        return
    title = getattr(getattr(figure, "title", None), "text", "") or ""
    for tool in toolbar.tools:
        if isinstance(tool, SaveTool):
            tool.filename = file_name(title)
            tool.visible = False
    if any(SVG_TAG in tool.tags for tool in toolbar.tools):
        return
    toolbar.logo = None
    if getattr(figure, "toolbar_location", "right") in ("right", "left"):
        for tool in toolbar.tools:
            if isinstance(tool, HoverTool):
                tool.visible = False
    figure.add_tools(
        CustomAction(description="Save as PNG", icon=PNG_ICON, tags=[PNG_TAG],
                     callback=CustomJS(args={"figure": figure, "scale": PNG_SCALE},
                                       code=_SAVE_PNG)),
        CustomAction(description="Save as SVG", icon=ICON, tags=[SVG_TAG],
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
