"""`panel serve apps/explorer.py` → /explorer: the Feature Selection Explorer."""

import os
import sys

# Bokeh puts this script's folder first on sys.path, where this file would shadow the
# `explorer` package it serves: drop the folder and any half-imported shadow module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
if not hasattr(sys.modules.get("explorer"), "__path__"):
    sys.modules.pop("explorer", None)

import panel as pn  # noqa: E402

from explorer.ui import (  # noqa: E402
    ExplorerApp,  # noqa: E402
    enforce_websocket_origins,
    quiet_closed_pages,
    warm_up_kernels,  # noqa: E402
)

warm_up_kernels()  # once per server process, in the background
quiet_closed_pages()  # a closed tab is not a traceback in the server's log
enforce_websocket_origins()  # the allowed origins hold for same-origin pages too
pn.extension("filedropper", notifications=False, sizing_mode="stretch_width")

app = ExplorerApp(query=pn.state.session_args)  # the URL's view, drawn once
app.servable_template().servable(title="Feature Selection Explorer")
