"""Checks shared by the loaders and the estimators: every failure is a located ``DataError``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels import total
from ._errors import DataError
from ._named import plain

FLOAT_DTYPES = (np.float64, np.float32)


class DataTypeError(DataError, TypeError):
    """Values of the wrong Python type (a dict in a matrix): both a DataError and a TypeError."""


def as_matrix(X, *, what: str = "X", source: str | None = None, copy: bool = False,
              finite: bool = True):
    """Return ``X`` as a float32/float64 ndarray or CSR/CSC matrix, checked finite (unless
    ``finite`` is False: a caller whose next pass reads every entry checks there instead).

    Sparse input stays sparse (COO/LIL/… become CSR; CSR and CSC are kept as they are).
    Integer and boolean input becomes float64; float32 stays float32. Values stored at an
    address that is not a multiple of their size (arrays unpickled from a dask.distributed
    message, odd offsets in a file) are copied: BLAS refuses them and numpy's fallback
    products are 20× slower.
    """
    X = plain(X)  # a dataset's named matrix: its values (the estimator reads its names)
    if _is_sparse_frame(X):  # a pandas frame of sparse columns stays sparse
        X = X.sparse.to_coo().tocsr()
    if sp.issparse(X):
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
        if X.dtype not in FLOAT_DTYPES:
            if not np.issubdtype(X.dtype, np.number) and X.dtype != np.bool_:
                raise DataError(f"{what} has non-numeric dtype {X.dtype}", source=source)
            X = X.astype(np.float64)
        elif copy or not X.data.flags.aligned:
            X = X.copy()
        if X.ndim != 2:
            raise DataError(f"{what} must be 2-dimensional", source=source)
        if finite:
            check_finite(X, what=what, source=source)
        return X
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged nested lists and the like
        raise DataError(f"{what} is not a rectangular numeric array ({exc})",
                        source=source) from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except TypeError as exc:
            raise DataTypeError(f"{what} contains values that are not numbers ({exc})",
                                source=source) from None
        except ValueError:
            raise DataError(f"{what} contains non-numeric values", source=source) from None
    if arr.dtype.kind in "US":
        raise DataError(f"{what} contains text, not numbers", source=source)
    if arr.dtype.kind == "c":
        raise DataError(f"{what} is complex. Complex data not supported", source=source)
    if arr.dtype not in FLOAT_DTYPES:
        if arr.dtype.kind not in "biuf":
            raise DataError(f"{what} has non-numeric dtype {arr.dtype}", source=source)
        arr = arr.astype(np.float64)
    elif copy or not arr.flags.aligned:
        arr = arr.copy()
    if arr.ndim == 1:
        raise DataError(
            f"{what} is 1-dimensional with {arr.shape[0]} values; expected a 2-D matrix. "
            "Reshape your data: reshape(-1, 1) for a single feature, reshape(1, -1) for a "
            "single sample",
            source=source,
        )
    if arr.ndim != 2:
        raise DataError(f"{what} must be 2-dimensional, got shape {arr.shape}", source=source)
    if finite:
        check_finite(arr, what=what, source=source)
    return arr


def _is_sparse_frame(X) -> bool:
    """A pandas DataFrame whose columns are all sparse (``set_output(transform="pandas")`` of
    a sparse selection, ``pd.DataFrame.sparse.from_spmatrix``)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "sparse") or getattr(X, "ndim", 0) != 2:
        return False
    import pandas as pd

    return len(dtypes) > 0 and all(isinstance(t, pd.SparseDtype) for t in dtypes)


def check_finite(X, *, what: str = "X", source: str | None = None) -> None:
    """Raise a ``DataError`` naming the first NaN/inf entry (row and column, 1-based)."""
    values = X.data if sp.issparse(X) else X
    if values.size == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(_total(values)) or np.isfinite(values).all():
            return  # a finite sum has no NaN or inf; one that overflowed is checked in full
    bad = np.flatnonzero(~np.isfinite(values.ravel()))[0]
    value = values.ravel()[bad]
    kind = "missing value (NaN)" if np.isnan(value) else "infinite value"
    if sp.issparse(X):
        major = int(np.searchsorted(X.indptr, bad, side="right") - 1)
        minor = int(X.indices[bad])
        row, col = (major, minor) if X.format == "csr" else (minor, major)
    else:
        row, col = np.unravel_index(bad, X.shape)
    raise DataError(f"{what} has a {kind} at row {row + 1}, column {col + 1}", source=source)


def _total(values) -> float:
    """The sum of all entries, NaN or inf if any is: a contiguous float matrix by
    :func:`explorer.kernels.total` (threaded, compiled; 2–5× numpy's single-threaded sum)."""
    if values.dtype in (np.float32, np.float64) and \
            (values.flags.c_contiguous or values.flags.f_contiguous):
        return total(values)
    return float(values.sum(dtype=np.float64))


def check_rows(X, y, *, source: str | None = None, what: str = "y") -> None:
    """Raise when ``X`` and the labels disagree on the number of rows."""
    if y is not None and X.shape[0] != len(y):
        raise DataError(
            f"X has {X.shape[0]} rows but {what} has {len(y)} labels", source=source
        )


def infer_task(y) -> str:
    """Classification when labels are text/bool or few integer values, else regression."""
    y = np.asarray(y)
    if y.dtype.kind in "OUSb":
        return "classification"
    if y.dtype.kind in "iu":
        few = len(np.unique(y)) <= max(20, int(0.05 * len(y)))
        return "classification" if few else "regression"
    if y.dtype.kind == "f":
        finite = y[np.isfinite(y)]
        if finite.size and np.all(finite == np.round(finite)):
            if len(np.unique(finite)) <= max(20, int(0.05 * len(y))):
                return "classification"
        return "regression"
    return "classification"


def check_labels(y, *, task: str = "classification", source: str | None = None,
                 what: str = "the label column") -> np.ndarray:
    """Validate a label vector: no missing values and, for classification, at least two classes."""
    y = np.asarray(y)
    if y.ndim != 1:
        if y.ndim == 2 and y.shape[1] == 1:
            import warnings

            from sklearn.exceptions import DataConversionWarning

            warnings.warn("A column-vector y was passed when a 1d array was expected; it was "
                          "flattened with ravel().", DataConversionWarning, stacklevel=3)
            y = y.ravel()
        elif task != "multitask":
            raise DataError(f"labels must be a 1-D vector, got shape {y.shape}", source=source)
    if y.size == 0:
        raise DataError("no labels", source=source)
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y)
        if bad.any():
            row = int(np.flatnonzero(bad.ravel())[0] // (1 if y.ndim == 1 else y.shape[1]))
            kind = "missing" if np.isnan(y.ravel()[np.flatnonzero(bad.ravel())[0]]) else "infinite"
            raise DataError(f"{kind} label at row {row + 1}", source=source)
    elif y.dtype == object:
        missing = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in y])
        if missing.any():
            raise DataError(f"missing label at row {int(np.flatnonzero(missing)[0]) + 1}",
                            source=source)
    if task == "classification":
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            raise DataError(
                "Unknown label type: continuous. The labels are non-integer numbers; a "
                "classifier needs class labels (use a regression method for a continuous "
                "target)", source=source)
        classes = np.unique(y)
        if len(classes) < 2:
            raise DataError(
                f"{what} has a single class ({_plain(classes[0])!r}): there is nothing to "
                "separate",
                source=source)
    elif task == "regression" and y.dtype.kind not in "biuf":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(
                f"{what} holds class labels ({', '.join(map(repr, map(_plain, np.unique(y)[:3])))}"
                f"{', …' if np.unique(y).size > 3 else ''}): a regression method needs numbers "
                "(use a classifier for class labels)", source=source) from None
    if task == "regression" and np.ptp(y.astype(float)) == 0:
        raise DataError(f"{what} is constant: there is nothing to fit", source=source)
    return y


def check_binary(y, *, method: str, source: str | None = None,
                 instead: str = "") -> np.ndarray:
    """Raise unless ``y`` has exactly two classes (the labels named as they read, the methods
    that take more classes in ``instead``); return the sorted classes."""
    classes = np.unique(np.asarray(y))
    if len(classes) != 2:
        shown = ", ".join(str(_plain(c)) for c in classes[:6]) + \
            (", …" if len(classes) > 6 else "")
        raise DataError(
            f"{method} takes two classes and these labels have {len(classes)} ({shown}): "
            f"pick a two-class dataset (e.g. digits-3v8) or a method that takes more classes"
            f"{': ' + instead if instead else ''}", source=source)
    return classes


def _plain(value):
    """A numpy scalar as the Python value it holds, for messages (1, not np.int64(1))."""
    return value.item() if isinstance(value, np.generic) else value
