"""The data layer's name for :class:`explorer._errors.DataError` (defined below the kernels,
which raise it for a dask X's bad entries)."""

from __future__ import annotations

from .._errors import DataError

__all__ = ["DataError"]
