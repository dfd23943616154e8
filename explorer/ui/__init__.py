"""The Panel dashboard. Importing a name from here imports Panel; the numerics never do.

``ExplorerApp`` is the whole explorer; ``ConvergenceView``, ``SparsityView``, ``AccuracyView``
and ``SelectedTable`` are usable on their own (e.g. ``ConvergenceView(estimator=fitted)`` in a
notebook). ``ExplorerState`` holds all logic without Panel.

The names load on first use, so that the fit worker processes (``_fit_pool``), which need only
the workers, start without the plotting stack.
"""

from importlib import import_module

_WHERE = {
    "LiveFit": "._live", "page_template": "._page", "serve_page": "._page",
    "serve_lesson": ".teaching", "enforce_websocket_origins": "._server",
    "quiet_closed_pages": "._server", "ExplorerState": "._state",
    "warm_up_kernels": "._worker", "start_fit_pool": "._fit_pool", "ExplorerApp": ".app",
    "AccuracyView": ".views", "ConvergenceView": ".views", "SelectedTable": ".views",
    "SparsityView": ".views",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
