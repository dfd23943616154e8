"""`panel serve apps/explorer.py` → /explorer: the Feature Selection Explorer."""

import os
import sys

# Bokeh puts this script's folder first on sys.path, where apps/explorer.py would shadow the
# `explorer` package it serves: drop the folder and any half-imported shadow module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
if not hasattr(sys.modules.get("explorer"), "__path__"):
    sys.modules.pop("explorer", None)

import panel as pn  # noqa: E402

from explorer.ui import ExplorerApp, serve_page  # noqa: E402

# the URL's view, drawn once
serve_page(lambda: ExplorerApp(query=pn.state.session_args).servable_template(),
           "Feature Selection Explorer", "filedropper", notifications=False)
