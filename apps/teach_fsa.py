"""`panel serve apps/teach_fsa.py` → /teach_fsa: FSA step by step (teaching mode)."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
if not hasattr(sys.modules.get("explorer"), "__path__"):
    sys.modules.pop("explorer", None)

import panel as pn  # noqa: E402

from explorer.ui import (  # noqa: E402
    enforce_websocket_origins,
    page_template,
    quiet_closed_pages,
    warm_up_kernels,  # noqa: E402
)
from explorer.ui.teaching import FSATeachingPage  # noqa: E402

warm_up_kernels()  # once per server process, in the background
quiet_closed_pages()  # a closed tab is not a traceback in the server's log
enforce_websocket_origins()  # the allowed origins hold for same-origin pages too
pn.extension(sizing_mode="stretch_width")

page = FSATeachingPage()
page_template(page.title, main=[page]).servable(title=page.title)
