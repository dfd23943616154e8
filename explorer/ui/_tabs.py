"""The page's view tabs: each tab a named view that draws while it is shown.

A view of a hidden tab is never updated in place. A figure updated while hidden lost its view
in BokehJS ("cannot find a view for Legend" on every later update of the page), and Panel
updates a hidden tab's models outside their document and then rewrites the stylesheet links
they share with every other model to its CDN (offline, every later update requested
``loading.css`` from the internet and failed). So a tab asked to draw while hidden remembers
it (:attr:`ViewTab.stale`) and draws when it is next shown.

Without a page (a headless app, tests, a notebook's state) every tab draws at once and none
counts as *shown*: work that waits for someone to look (a sweep, a stability run's events)
does not start.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn

Action = Callable[[], None]


class ViewTab(pn.viewable.Viewer):
    """One tab of the page: ``view`` under ``title``, drawn by ``draw`` while shown.

    Parameters
    ----------
    name : str
        How the app refers to the tab (``"map"``, ``"accuracy"``, …).
    title : str
        The tab's label on the page.
    view : Viewable
        What the tab shows.
    draw : callable, optional
        Draws the view from the state (nothing to draw when omitted: the view draws itself).
    on_shown : callable, optional
        Called each time the tab is shown, after any waiting draw.
    tick : callable, optional
        Applies the view's own background events; called on every poll while shown.
    """

    def __init__(self, name: str, title: str, view, draw: Action | None = None,
                 on_shown: Action | None = None, tick: Action | None = None, **params):
        super().__init__(name=name, **params)
        self.title, self.view = title, view
        self._draw, self._on_shown, self._tick = draw, on_shown, tick
        self.stale = False  # a draw waits for the tab to be shown (or for its turn)
        self._tabs: ViewTabs | None = None

    @property
    def shown(self) -> bool:
        """Whether the page shows this tab (never without a page)."""
        return self._tabs is not None and self._tabs.showing(self.name)

    @property
    def drawable(self) -> bool:
        """Whether drawing now reaches the user: shown, or no page at all."""
        return self._tabs is None or not self._tabs.on_page or self.shown

    def mark(self) -> None:
        """There is something new to draw, at a time the caller chooses (:meth:`draw`)."""
        self.stale = True

    def draw(self) -> None:
        """Draw now if that reaches the user, else when the tab is next shown."""
        if self._draw is None:
            return
        if self.drawable:
            self._draw()
            self.stale = False
        else:
            self.stale = True

    def tick(self) -> None:
        if self._tick is not None and self.shown:
            self._tick()

    def _shown_now(self) -> None:
        if self.stale:
            self.draw()
        if self._on_shown is not None:
            self._on_shown()

    def __panel__(self):
        return self.view


class ViewTabs(pn.viewable.Viewer):
    """The page's tabs, by name; only the shown tab is in the page (Panel's dynamic tabs),
    so a hidden tab never sits over the visible plot and takes its clicks."""

    def __init__(self, *tabs: ViewTab, css_classes=(), **params):
        super().__init__(**params)
        self._tabs = {tab.name: tab for tab in tabs}
        for tab in tabs:
            tab._tabs = self
        self._css = list(css_classes)
        self.widget: pn.Tabs | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tabs)

    @property
    def on_page(self) -> bool:
        return self.widget is not None

    def __getitem__(self, name: str) -> ViewTab:
        if name not in self._tabs:
            raise KeyError(f"no tab named {name!r}; the tabs are {', '.join(self.names)}")
        return self._tabs[name]

    def showing(self, name: str) -> bool:
        """Whether the page shows the tab ``name`` (never without a page)."""
        return self.widget is not None and self.names[self.widget.active] == name

    def show(self, name: str) -> None:
        """Bring the tab ``name`` to the front (its waiting draw follows)."""
        self[name]  # an unknown name is an error with or without a page
        if self.widget is not None:
            self.widget.active = self.names.index(name)

    def tick(self) -> None:
        """Let the shown tab apply its background events (a hidden tab's wait)."""
        for tab in self._tabs.values():
            tab.tick()

    def _on_active(self, event) -> None:
        self._tabs[self.names[event.new]]._shown_now()

    def __panel__(self):
        if self.widget is None:
            self.widget = pn.Tabs(*((tab.title, tab) for tab in self._tabs.values()),
                                  dynamic=True, sizing_mode="stretch_width",
                                  css_classes=self._css)
            self.widget.param.watch(self._on_active, "active")
        return self.widget
