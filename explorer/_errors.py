"""The one exception for problems with user data."""

from __future__ import annotations


class DataError(ValueError):
    """A problem with user data: names the file (when there is one), what is wrong and where.

    Subclasses ``ValueError`` so that code written against scikit-learn's conventions keeps
    working, while the explorer can catch exactly the errors a user can fix.
    """

    def __init__(self, message: str, *, source: str | None = None):
        self.source = source
        self.problem = message
        super().__init__(f"{source}: {message}" if source else message)
