"""Where a session's data come from — a catalogue entry with its knobs, a file the server offers
(``explorer serve --data PATH``), or an upload with its label column — and how it is built.
It knows nothing of fits; :class:`~explorer.ui.ExplorerState` composes it."""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._params import ParamSpec
from ..data import DataError, Dataset, catalogue, entry, load, with_image_shape

UPLOAD = "upload"  # the dataset name of a file uploaded through the page
DEFAULT_MAX_UPLOAD_MB = 50.0
SHARED_DATASETS = 8  # catalogue datasets (with their knobs) kept for every session to share
TEST_SIZE = 0.3      # the test part every session holds out (seed 0: the same rows everywhere)
_SHARED: OrderedDict = OrderedDict()
_SHARED_LOCK = threading.Lock()


def split_for_sessions(ds: Dataset, key=None) -> Dataset:
    """``ds`` with its test part held out. A catalogue dataset (``key``: its name and knobs) is
    split once per server and shared by every session that loads it — a class of 30 on the
    same data holds one copy — with its dense arrays read-only; other data are split per
    session."""
    if key is None:
        return ds.split(test_size=TEST_SIZE, seed=0)
    with _SHARED_LOCK:
        if key in _SHARED:
            _SHARED.move_to_end(key)
            return _SHARED[key]
    split = ds.split(test_size=TEST_SIZE, seed=0)
    for name in ("X", "y", "X_test", "y_test", "X_unlabeled"):
        value = getattr(split, name, None)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    split.shared_key = key
    with _SHARED_LOCK:
        _SHARED[key] = split
        while len(_SHARED) > SHARED_DATASETS:
            _SHARED.popitem(last=False)
    return split


def max_upload_mb() -> float:
    """The largest upload this server accepts (``explorer serve --max-upload-mb``)."""
    try:
        return float(os.environ.get("EXPLORER_MAX_UPLOAD_MB", DEFAULT_MAX_UPLOAD_MB))
    except ValueError:
        return DEFAULT_MAX_UPLOAD_MB


def local_files() -> dict[str, str]:
    """Files offered by ``explorer serve --data PATH``: dataset name (file name) → path."""
    paths = [p for p in os.environ.get("EXPLORER_DATA", "").split(os.pathsep) if p]
    return {os.path.basename(p): p for p in paths}


def available_datasets() -> list[str]:
    """Catalogue names, then the server's local files."""
    return catalogue() + [name for name in local_files() if name not in catalogue()]


@dataclass
class DataSource:
    """The data's origin: the catalogue entry's knobs (``params``), the uploaded file
    (``upload_bytes``, ``upload_name``) and the label column chosen for a table."""

    params: dict[str, Any] = field(default_factory=dict)
    label_column: str | None = None
    upload_bytes: bytes | None = None
    upload_name: str | None = None
    # the user's image shape: (rows, columns), "none" (not an image); None: the data's own
    # or the one guessed for a file of pixels
    image_shape: tuple[int, int] | str | None = None

    @staticmethod
    def specs(name: str) -> tuple[ParamSpec, ...]:
        """Knobs of the catalogue entry ``name`` (sizes, seed, noise); none for files."""
        if name == UPLOAD or name not in catalogue() or name in local_files():
            return ()
        return entry(name).params

    def key(self, name: str):
        """What names the data ``name`` builds for sharing between sessions: a catalogue entry
        with its knobs (and the user's image shape); None for uploads and served files (per
        session)."""
        if name == UPLOAD or name in local_files() or name not in catalogue():
            return None
        return (name, tuple(sorted((k, repr(v)) for k, v in self.params.items())),
                self.image_shape)

    def shared(self, name: str) -> Dataset | None:
        """The split dataset ``name`` if a session already built it with these knobs."""
        key = self.key(name)
        with _SHARED_LOCK:
            return _SHARED.get(key) if key is not None else None

    def open(self, name: str) -> Dataset:
        """The dataset ``name`` with its test part held out: the one a session already split
        with these knobs, else built (:meth:`build`) and split (:func:`split_for_sessions`);
        raises :class:`~explorer.data.DataError` or ValueError on a problem."""
        shared = self.shared(name)
        return shared if shared is not None else split_for_sessions(self.build(name),
                                                                    self.key(name))

    def build(self, name: str) -> Dataset:
        """The dataset ``name`` names (the upload, a served file or a catalogue entry with
        ``params``); raises :class:`~explorer.data.DataError` or ValueError on a problem."""
        shape = self.image_shape
        if name == UPLOAD:
            if self.upload_bytes is None:
                raise DataError("no file uploaded yet")
            ds = load(self.upload_bytes, name=self.upload_name, label=self.label_column,
                      image_shape=shape)
            ds.name = self.upload_name
        elif name in local_files():
            ds = load(local_files()[name], label=self.label_column, image_shape=shape)
            ds.name = name
        else:
            ds = load(name, image_shape=shape, **self.params)
        return ds

    def read_upload(self, content: bytes, filename: str, label: str | None = None) -> Dataset:
        """The uploaded file as a dataset (kept as the source once it reads); raises
        :class:`~explorer.data.DataError` on a bad file or one above the upload limit, the
        previous upload kept."""
        if self.too_large(len(content)):
            raise DataError(self.refusal(filename, len(content)))
        ds = load(content, name=filename, label=label or None)
        if self.image_shape is not None:  # the shape given for another file
            try:
                ds = with_image_shape(ds, self.image_shape)
            except ValueError:
                self.image_shape = None
        self.upload_bytes, self.upload_name, self.label_column = content, filename, label
        ds.name = filename
        return ds

    def set_param(self, name: str, knob: str, value) -> dict[str, Any]:
        """Set the catalogue entry ``name``'s knob to ``value`` checked against its spec (a
        ValueError says what is wrong); returns the knobs before, to restore on a failed
        load."""
        specs = {s.name: s for s in self.specs(name)}
        if knob not in specs:
            raise ValueError(f"dataset {name!r} has no parameter {knob!r}")
        previous = dict(self.params)
        self.params[knob] = specs[knob].validate(value, owner=name)
        return previous

    @staticmethod
    def too_large(size: float) -> bool:
        return size > max_upload_mb() * 1024 * 1024

    @staticmethod
    def refusal(filename: str, size: float) -> str:
        """Why ``filename`` (about ``size`` bytes) is refused, and what to do instead."""
        return (f"{filename} is {'about ' if size % (1 << 20) == 0 else ''}"
                f"{size / 2**20:.1f} MB, above this server's upload limit of "
                f"{max_upload_mb():g} MB. Serve it from disk instead: "
                f"explorer serve --data {filename}")

    def table_columns(self) -> list[str]:
        """Column names of the uploaded table (to choose the label column)."""
        if self.upload_bytes is None or self.upload_name is None:
            return []
        name = self.upload_name.lower()
        try:
            if name.endswith((".csv", ".tsv", ".tab")):
                sep = "\t" if name.endswith((".tsv", ".tab")) else None
                head = self.upload_bytes[:65536].decode("utf-8", errors="replace")
                return list(pd.read_csv(io.StringIO(head), sep=sep, engine="python",
                                        nrows=2).columns.astype(str))
            if name.endswith((".parquet", ".pq")):
                import pyarrow.parquet as pq

                return list(pq.read_schema(io.BytesIO(self.upload_bytes)).names)
        except Exception:  # a bad file reports itself when loaded
            return []
        return []
