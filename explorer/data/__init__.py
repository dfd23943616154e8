"""Data layer: the ``Dataset`` type, file loaders, the catalogue and the papers' generators."""

from __future__ import annotations

import os
from pathlib import Path

from ._catalogue import CatalogueEntry, catalogue, catalogue_entries, entry, make
from ._dataset import Dataset, format_bytes
from ._errors import DataError
from ._images import guess_image_shape, looks_like_pixels, parse_shape, with_image_shape
from ._lazy import lazy_format, load_lazy
from ._loaders import NoLabeledRows, detect_format, load_file, load_unlabeled, save
from ._named import NamedArray, NamedCSC, NamedCSR, with_names
from ._probes import with_probes
from ._synthetic import (
    make_faces,
    make_fgm_groups,
    make_fgm_linear,
    make_fsa_correlated,
    make_fsa_equicorrelated,
    make_fsa_nonlinear,
    make_interactions,
    make_planted_logistic,
    make_ranking,
    make_semi_supervised,
    make_sparse_wide,
    make_text_like,
    make_textures,
    make_xor,
)
from ._validation import (
    as_matrix,
    check_binary,
    check_finite,
    check_labels,
    check_rows,
    infer_task,
)


def load(source, *, label=None, name: str | None = None, image_shape=None,
         **params) -> Dataset:
    """Load a dataset from a catalogue name, a file path, or the bytes of an uploaded file.

    Parameters
    ----------
    source : str, path-like or bytes
        A name from :func:`catalogue` (then ``params`` override its declared knobs, e.g.
        ``load("fsa-correlated", n_samples=300)``), a path to a LIBSVM/svmlight, CSV/TSV,
        ``.npz`` or Parquet file (optionally ``.gz``/``.bz2`` compressed), or raw bytes.
        Opened lazily, with a dask X (never read whole): a Zarr group ``name.zarr`` (arrays
        ``X``, ``y``, optionally ``X_test``/``y_test``), a memory-mapped ``.npy`` with its
        labels beside it, a directory of Parquet files or of svmlight shards.
    label : str or int, optional
        Label column of a table (name or position); default: the last column.
    name : str, optional
        File name for bytes input (used to detect the format and in messages).
    image_shape : (rows, columns) or str, optional
        Draw the features as images of this shape (``(32, 32)`` or ``"32x32"``; their
        product is the number of features; ``"none"``: not as images). Without it, a file
        whose columns look like
        pixels — a square number of them (8 × 8 up to 256 × 256), named by number or not at
        all, dense rows — is drawn as square images, and its summary says the shape was
        guessed.

    Raises
    ------
    DataError
        Any problem with the data, with the file named and the place of the problem.
    """
    dataset = _load(source, label=label, name=name, **params)
    if image_shape is not None:
        return with_image_shape(dataset, image_shape)
    if dataset.source != "synthetic" and not (isinstance(source, str) and
                                              source in catalogue()):
        return guess_image_shape(dataset)
    return dataset


def _load(source, *, label=None, name: str | None = None, **params) -> Dataset:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return load_file(source, label=label, name=name)
    if isinstance(source, str) and source in catalogue() and not os.path.exists(source):
        return make(source, **params)
    if params:
        raise TypeError(f"unexpected keyword arguments for a file: {sorted(params)}")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists() and isinstance(source, str) and os.sep not in source \
                and "." not in source:
            raise DataError(f"no dataset named {source!r} in the catalogue and no such file; "
                            f"known names: {', '.join(catalogue())}")
        if path.exists() and (path.is_dir() or lazy_format(path) is not None):
            return load_lazy(path, label=label)
        return load_file(path, label=label, name=name)
    raise TypeError(f"cannot load a dataset from {type(source).__name__}")


__all__ = [
    "CatalogueEntry", "DataError", "Dataset", "NamedArray", "NamedCSC", "NamedCSR", "as_matrix",
    "catalogue", "catalogue_entries",
    "check_binary", "check_finite", "check_labels", "check_rows", "detect_format", "entry",
    "format_bytes", "infer_task",
    "NoLabeledRows", "lazy_format", "load", "load_file", "load_lazy", "load_unlabeled",
    "make", "make_faces", "make_fgm_groups", "make_fgm_linear", "make_fsa_correlated",
    "make_fsa_equicorrelated", "make_fsa_nonlinear", "make_interactions",
    "make_planted_logistic", "make_ranking",
    "make_semi_supervised",
    "make_sparse_wide", "make_text_like", "make_textures", "make_xor", "save", "with_names",
    "with_probes", "with_image_shape", "guess_image_shape", "looks_like_pixels", "parse_shape",
]
