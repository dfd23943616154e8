"""Lazy loaders: larger-than-memory matrices opened as a Dataset whose X is a dask array.

- a Zarr group (``name.zarr``) holding arrays ``X`` and ``y`` (optionally ``X_test``/``y_test``,
  the ``.npz`` convention);
- a memory-mapped ``.npy`` matrix with its labels beside it (``X.npy`` + ``y.npy``, optionally
  ``X_test.npy`` + ``y_test.npy``; or ``data.npy`` + ``data.y.npy``), or a directory of them;
- a directory of Parquet files (one row chunk per file; label column as for single files);
- a directory of LIBSVM/svmlight shards (one sparse row chunk per shard).

Labels are read into memory (one value per row); X is only read when a method passes over it.
Every shard is checked: a bad value gets a DataError naming the shard and its row (shards are
scanned when opened — svmlight, whose shape is only known by parsing — or when a pass reads
them — Parquet, whose schema and row counts are known from the footers).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._dataset import Dataset
from ._errors import DataError
from ._validation import check_labels, check_rows, infer_task

SVM_SHARD_EXT = (".svm", ".svmlight", ".libsvm", ".svml", ".txt")
CHUNK_BYTES = 128 * 2**20  # target bytes per chunk of a memory-mapped or Zarr matrix


def lazy_format(path: Path) -> str | None:
    """The lazy format of ``path`` ("zarr", "npy", "parquet-dir", "svmlight-dir") or None."""
    if path.suffix == ".zarr" or (path.is_dir() and ((path / "zarr.json").exists() or
                                                     (path / ".zgroup").exists())):
        return "zarr"
    if path.suffix == ".npy":
        return "npy"
    if path.is_dir():
        if (path / "X.npy").exists():
            return "npy"
        names = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if names and all(p.suffix in (".parquet", ".pq") for p in names):
            return "parquet-dir"
        if names and all(p.suffix in SVM_SHARD_EXT for p in names):
            return "svmlight-dir"
    return None


def load_lazy(path, *, label=None, fmt: str | None = None) -> Dataset:
    """Open ``path`` lazily (see the module docstring); ``label`` as for :func:`load`."""
    path = Path(path)
    fmt = fmt or lazy_format(path)
    if not path.exists():
        raise DataError("no such file or directory", source=str(path))
    readers = {"zarr": _open_zarr, "npy": _open_npy, "parquet-dir": _open_parquet_dir,
               "svmlight-dir": _open_svmlight_dir}
    if fmt not in readers:
        raise DataError("is a directory that holds neither a Zarr group, X.npy, Parquet files "
                        "nor svmlight shards (one format per directory)", source=str(path))
    ds = readers[fmt](path, label)
    ds.name = ds.name or path.stem
    ds.source = str(path)
    return ds


def _finish(X, y, source, *, X_test=None, y_test=None, **extra) -> Dataset:
    if X.ndim != 2:
        raise DataError(f"X must be 2-dimensional, got shape {X.shape}", source=source)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"X is empty (shape {X.shape})", source=source)
    if np.dtype(X.dtype).kind not in "biuf":
        raise DataError(f"X has non-numeric dtype {X.dtype}", source=source)
    y = np.asarray(y)
    check_rows(X, y, source=source)
    task = infer_task(y)
    y = check_labels(y, task=task, source=source)
    if task == "classification" and y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    if X_test is not None:
        if y_test is None:
            raise DataError("has X_test but no y_test", source=source)
        if X_test.shape[1] != X.shape[1]:
            raise DataError(f"X_test has {X_test.shape[1]} columns but X has {X.shape[1]}",
                            source=source)
        y_test = np.asarray(y_test)
        check_rows(X_test, y_test, source=source, what="y_test")
    return Dataset(X=X, y=y, X_test=X_test, y_test=y_test, name="", task=task, **extra)


def _chunks_for(shape, itemsize) -> tuple[int, int]:
    """Row × column chunks of about CHUNK_BYTES, columns kept whole up to 4,096."""
    n, m = shape
    cols = int(min(m, 4096))
    rows = int(max(1, min(n, CHUNK_BYTES // max(1, cols * itemsize))))
    return rows, cols


# ----------------------------------------------------------------------------- zarr
def _open_zarr(path: Path, label) -> Dataset:
    import dask.array as da
    import zarr

    try:
        group = zarr.open_group(str(path), mode="r")
    except Exception as exc:  # zarr raises several types for a missing or damaged store
        raise DataError(f"is not a readable Zarr group ({type(exc).__name__}: {exc})",
                        source=str(path)) from None
    names = set(group.array_keys())
    missing = [a for a in ("X", "y") if a not in names]
    if missing:
        raise DataError(f"holds no array {' or '.join(missing)} (found: "
                        f"{', '.join(sorted(names)) or 'none'}); a dataset group holds X and y",
                        source=str(path))

    def lazy(name):
        return da.from_zarr(group[name]) if name in names else None

    return _finish(lazy("X"), np.asarray(group["y"][:]), str(path), X_test=lazy("X_test"),
                   y_test=np.asarray(group["y_test"][:]) if "y_test" in names else None)


# ----------------------------------------------------------------------------- npy
def _mmap(path: Path):
    import dask.array as da

    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"is not a readable .npy file ({exc})", source=str(path)) from None
    if arr.ndim != 2:
        return arr
    return da.from_array(arr, chunks=_chunks_for(arr.shape, arr.dtype.itemsize),
                         asarray=True, lock=False)


def _labels(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"is not a readable .npy file ({exc})", source=str(path)) from None


def _open_npy(path: Path, label) -> Dataset:
    if path.is_dir():
        x_path, y_path = path / "X.npy", path / "y.npy"
    else:
        x_path = path
        y_path = Path(label) if label is not None else (
            path.with_name("y.npy") if path.stem == "X" else path.with_name(f"{path.stem}.y.npy"))
    if not y_path.exists():
        raise DataError(f"has no labels: expected {y_path.name} beside it (or label=PATH)",
                        source=str(x_path))
    X = _mmap(x_path)
    test_x, test_y = x_path.with_name("X_test.npy"), x_path.with_name("y_test.npy")
    X_test = _mmap(test_x) if x_path.stem == "X" and test_x.exists() else None
    y_test = _labels(test_y) if X_test is not None and test_y.exists() else None
    return _finish(X, _labels(y_path), str(x_path), X_test=X_test, y_test=y_test)


# ----------------------------------------------------------------------------- parquet
def _parquet_features(path: str, columns: list[str], first_row: int):
    """One shard's feature columns as a float array, every cell checked (row numbers are
    the dataset's, 1-based, and the shard's own)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=columns)
    X = np.column_stack([table.column(c).to_numpy(zero_copy_only=False).astype(np.float64)
                         for c in columns]) if columns else np.zeros((table.num_rows, 0))
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        i, j = bad[0]
        kind = "a missing value (NaN)" if np.isnan(X[i, j]) else "an infinite value"
        raise DataError(f"row {i + 1} (row {first_row + i + 1} of the dataset), column "
                        f"{columns[j]!r}: {kind}", source=path)
    return X


def _open_parquet_dir(path: Path, label) -> Dataset:
    import dask.array as da
    import pyarrow.parquet as pq
    from dask import delayed

    shards = sorted(p for p in path.iterdir() if p.suffix in (".parquet", ".pq"))
    schema, counts = None, []
    for shard in shards:
        try:
            meta = pq.ParquetFile(shard)
        except Exception as exc:  # pyarrow raises several unrelated types for corrupt files
            raise DataError(f"is not a readable Parquet file ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0][:200]})", source=str(shard)) from None
        names = meta.schema_arrow.names
        if schema is None:
            schema = meta.schema_arrow
        elif names != schema.names:
            raise DataError(f"has columns {names[:5]}… but {shards[0].name} has "
                            f"{schema.names[:5]}…: every shard needs the same columns",
                            source=str(shard))
        counts.append(meta.metadata.num_rows)
    columns = list(schema.names)
    if len(columns) < 2:
        raise DataError("shards need at least one feature and a label column", source=str(path))
    if label is None:
        label_col = columns[-1]
    elif isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        label_col = columns[int(label)]
    elif label in columns:
        label_col = label
    else:
        raise DataError(f"no label column {label!r}; columns: {', '.join(columns[:10])}…",
                        source=str(path))
    features = [c for c in columns if c != label_col]
    for c in features:
        kind = schema.field(c).type
        if not (kind.id in range(2, 13) or str(kind) in ("bool", "double", "float", "halffloat")
                or str(kind).startswith(("int", "uint", "float", "double"))):
            raise DataError(f"column {c!r} has type {kind}, not numbers", source=str(path))
    y = np.concatenate([pq.read_table(s, columns=[label_col]).column(0)
                        .to_numpy(zero_copy_only=False) for s in shards])
    starts = np.concatenate([[0], np.cumsum(counts)])
    parts = [da.from_delayed(delayed(_parquet_features)(str(s), features, int(starts[i])),
                             shape=(counts[i], len(features)), dtype=np.float64)
             for i, s in enumerate(shards)]
    return _finish(da.concatenate(parts, axis=0), y, str(path), feature_names=features)


# ----------------------------------------------------------------------------- svmlight
def _svm_shard(path: str, n_features: int | None, zero_based: bool):
    """One shard as (CSR, labels); a malformed line is named by the single-file loader."""
    from sklearn.datasets import load_svmlight_file

    from ._loaders import load_file

    try:
        X, y = load_svmlight_file(path, n_features=n_features, zero_based=zero_based,
                                  dtype=np.float64)
    except (ValueError, RuntimeError, IndexError, OverflowError):
        load_file(path, fmt="svmlight")  # raises the located DataError
        raise
    bad = np.flatnonzero(~np.isfinite(X.data))
    if bad.size:
        row = int(np.searchsorted(X.indptr, bad[0], side="right")) - 1
        raise DataError(f"line {row + 1}: a value that is not finite", source=path)
    if X.shape[0] == 0:
        raise DataError("the shard is empty (no data lines)", source=path)
    return X.tocsr(), y


def _svm_shard_matrix(path: str, n_features: int, zero_based: bool):
    return _svm_shard(path, n_features, zero_based)[0]


def _open_svmlight_dir(path: Path, label) -> Dataset:
    """Shards are scanned once in parallel (shape, labels, and every line checked); the
    indices are zero-based if any shard uses index 0, as for one file."""
    import dask
    import dask.array as da
    import scipy.sparse as sp
    from dask import delayed

    shards = [str(p) for p in sorted(path.iterdir()) if p.suffix in SVM_SHARD_EXT]
    scanned = dask.compute(*[delayed(_svm_shard)(s, None, True) for s in shards])
    lowest = min((int(X.indices.min()) for X, _ in scanned if X.nnz), default=0)
    zero_based = lowest == 0
    width = max(X.shape[1] for X, _ in scanned) - (0 if zero_based else 1)
    y = np.concatenate([np.asarray(labels) for _, labels in scanned])
    parts = [da.from_delayed(delayed(_svm_shard_matrix)(s, width, zero_based),
                             shape=(X.shape[0], width), dtype=np.float64,
                             meta=sp.csr_matrix((0, 0)))
             for s, (X, _) in zip(shards, scanned)]
    return _finish(da.concatenate(parts, axis=0), y, str(path))
