"""Lessons: each method one outer iteration at a time, from the real solver's records.

Each lesson is a :class:`StepPage` over an :class:`~explorer.ui.ExplorerState` in step mode;
``LESSONS`` lists them for the index page (``/lessons``) and the explorer's link."""

from .._page import serve_page
from ._step import StepPage
from .fgm import FGMTeachingPage
from .fs_manifold import FSManifoldTeachingPage
from .fs_multi import FSMultiTeachingPage
from .fsa import FSATeachingPage
from .grfl import GrFLTeachingPage
from .index import LESSONS, Lesson, index_page

PAGES = {"teach_fgm": FGMTeachingPage, "teach_fsa": FSATeachingPage,
         "teach_grfl": GrFLTeachingPage, "teach_fs_multi": FSMultiTeachingPage,
         "teach_fs_manifold": FSManifoldTeachingPage}


def serve_lesson(path: str) -> None:
    """Serve the lesson at ``/<path>`` (``teach_fgm`` …) or the lessons' index (``lessons``)."""
    if path == "lessons":
        serve_page(index_page, "Lessons")
        return
    page = PAGES[path]()
    serve_page(lambda: page, page.title)


__all__ = ["LESSONS", "PAGES", "FGMTeachingPage", "FSATeachingPage", "FSManifoldTeachingPage",
           "FSMultiTeachingPage", "GrFLTeachingPage", "Lesson", "StepPage", "index_page",
           "serve_lesson"]
