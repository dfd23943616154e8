"""`panel serve apps/teach_fsa.py` → /teach_fsa: FSA's lesson."""

import os
import sys

# Bokeh puts this script's folder first on sys.path, where apps/explorer.py would shadow the
# `explorer` package it serves: drop the folder and any half-imported shadow module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
if not hasattr(sys.modules.get("explorer"), "__path__"):
    sys.modules.pop("explorer", None)

from explorer.ui import serve_lesson  # noqa: E402

serve_lesson("teach_fsa")
