"""Matrices that carry their column names, so that a dataset's words, genes or predictors reach
an estimator's ``feature_names_in_`` when it is fitted on ``data.X`` — sparse included, where a
pandas frame of 5,000 sparse columns costs a tenth of a second at every conversion.

:class:`NamedArray` (a dense ``ndarray``) and :class:`NamedCSR`/:class:`NamedCSC` (scipy sparse
matrices) are their base types with one more attribute, ``columns`` (the names, as pandas
spells it, which the estimators read as scikit-learn reads a DataFrame's). Anything derived
from them — a row slice, a product, a copy — is a plain matrix of names unknown (``columns``
None): a :class:`~explorer.data.Dataset` names its parts again when it makes them."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class NamedArray(np.ndarray):
    """A dense 2-D array with its column names in ``columns``."""

    columns = None

    def __array_finalize__(self, obj):
        self.columns = None  # a view or result may not have the same columns

    def __reduce__(self):
        constructor, arguments, state = super().__reduce__()
        return constructor, arguments, (state, self.columns)

    def __setstate__(self, state):
        base, columns = state
        super().__setstate__(base)
        self.columns = columns


class NamedCSR(sp.csr_matrix):
    """A CSR matrix with its column names in ``columns``."""

    columns = None


class NamedCSC(sp.csc_matrix):
    """A CSC matrix with its column names in ``columns``."""

    columns = None


NAMED_TYPES = (NamedArray, NamedCSR, NamedCSC)


def with_names(X, names):
    """``X`` (a 2-D ndarray, CSR or CSC matrix) carrying ``names`` as its ``columns``; X
    itself when it is something else (a dask array, a DataFrame) or the names do not fit."""
    if X is None or names is None or getattr(X, "ndim", 0) != 2 or X.shape[1] != len(names):
        return X
    columns = np.asarray([str(n) for n in names], dtype=object)
    if type(X) is np.ndarray or type(X) is NamedArray:
        named = X.view(NamedArray)
    elif sp.issparse(X) and X.format in ("csr", "csc"):
        plain = sp.csr_matrix(X) if X.format == "csr" else sp.csc_matrix(X)
        named = NamedCSR(plain) if X.format == "csr" else NamedCSC(plain)
    else:
        return X
    named.columns = columns
    return named


def plain(X):
    """``X`` as its base type (the names dropped), sharing its values."""
    if type(X) is NamedArray:
        return X.view(np.ndarray)
    if type(X) is NamedCSR:
        return sp.csr_matrix(X)
    if type(X) is NamedCSC:
        return sp.csc_matrix(X)
    return X
