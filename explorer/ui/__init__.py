"""The Panel dashboard. Importing this module imports Panel; the numerics never do.

``ExplorerApp`` is the whole explorer; ``ConvergenceView``, ``SparsityView``, ``AccuracyView``
and ``SelectedTable`` are usable on their own (e.g. ``ConvergenceView(estimator=fitted)`` in a
notebook). ``ExplorerState`` holds all logic without Panel.
"""

from ._live import LiveFit
from ._page import page_template
from ._server import enforce_websocket_origins, quiet_closed_pages
from ._state import ExplorerState
from ._worker import warm_up_kernels
from .app import ExplorerApp
from .views import AccuracyView, ConvergenceView, SelectedTable, SparsityView

__all__ = ["AccuracyView", "ConvergenceView", "ExplorerApp", "ExplorerState", "LiveFit",
           "SelectedTable",
           "SparsityView", "enforce_websocket_origins", "page_template", "quiet_closed_pages",
           "warm_up_kernels"]
