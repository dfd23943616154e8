"""File loaders: LIBSVM/svmlight, CSV/TSV, NumPy ``.npz``, Parquet and MATLAB ``.mat`` (v5 and
v7.3), from paths or bytes.

Every problem with the file becomes a :class:`DataError` that names the file, says what is
wrong and where (line, row, column), never a traceback from deep inside a parser.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import re
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._dataset import Dataset
from ._errors import DataError
from ._validation import as_matrix, check_labels, check_rows, infer_task

SVMLIGHT_EXT = (".svm", ".svmlight", ".libsvm", ".svml")
CSV_EXT = (".csv", ".tsv", ".tab")
NPZ_EXT = (".npz",)
PARQUET_EXT = (".parquet", ".pq")
MAT_EXT = (".mat",)
COMPRESSED = (".gz", ".bz2")
FORMATS = {
    "svmlight": SVMLIGHT_EXT,
    "csv": CSV_EXT,
    "npz": NPZ_EXT,
    "parquet": PARQUET_EXT,
    "mat": MAT_EXT,
}
# the variable names of the features and the labels in the .mat files users bring: X and Y
# (the feature-selection benchmark collections, the papers' code), fea and gnd (Deng Cai's
# face and text sets), data/label and their lower- and upper-case forms
MAT_FEATURES = ("X", "x", "fea", "data", "features", "Data")
MAT_LABELS = ("Y", "y", "gnd", "label", "labels", "target", "Label", "Labels", "class")


# ----------------------------------------------------------------------------- entry points
def load_file(source, *, label=None, name: str | None = None, fmt: str | None = None) -> Dataset:
    """Load a file given as a path or as bytes (``name`` then gives the file name).

    Parameters
    ----------
    source : path-like or bytes
    label : str or int, optional
        Label column for table formats (name, or position; default: the last column).
    name : str, optional
        File name used for format detection and in messages (required for bytes).
    fmt : {"svmlight", "csv", "npz", "parquet", "mat"}, optional
        Force a format instead of detecting it from the extension / content.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
        fname = name or "uploaded data"
        path = None
    else:
        path = Path(source)
        fname = name or path.name
        if not path.exists():
            raise DataError("no such file", source=str(path))
        if path.is_dir():
            raise DataError("is a directory, not a data file", source=str(path))
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DataError(f"cannot be read ({exc.strerror or exc})", source=fname) from None
    if len(raw) == 0:
        raise DataError("the file is empty", source=fname)
    raw, inner = _decompress(raw, fname)
    fmt = fmt or detect_format(inner, raw)
    readers = {"svmlight": _read_svmlight, "csv": _read_csv, "npz": _read_npz,
               "parquet": _read_parquet, "mat": _read_mat}
    if fmt not in readers:
        raise DataError(f"unknown format {fmt!r}; expected one of {sorted(readers)}", source=fname)
    ds = readers[fmt](raw, fname, label)
    ds.name = ds.name or Path(inner).stem
    ds.source = str(path) if path is not None else fname
    return ds


def detect_format(fname: str, raw: bytes) -> str:
    """Detect a format from the file name's extension, else from the first bytes."""
    lower = fname.lower()
    for fmt, exts in FORMATS.items():
        if lower.endswith(exts):
            return fmt
    if raw[:4] == b"PAR1":
        return "parquet"
    if raw[:10] == b"MATLAB 5.0" or raw[:8] == b"\x89HDF\r\n\x1a\n" or \
            raw[512:520] == b"\x89HDF\r\n\x1a\n":
        return "mat"
    if raw[:2] == b"PK":
        return "npz"
    head = raw[:4096].decode("utf-8", errors="replace").splitlines()
    lines = [ln for ln in head if ln.strip() and not ln.lstrip().startswith("#")]
    if lines and _SVM_LINE.match(lines[0].strip()) and ":" in lines[0]:
        return "svmlight"
    if lines and ("," in lines[0] or "\t" in lines[0] or ";" in lines[0]):
        return "csv"
    known = ", ".join(e for exts in FORMATS.values() for e in exts)
    raise DataError(f"cannot tell the file format from its name or content (known: {known})",
                    source=fname)


def save(dataset: Dataset, path, *, label: str = "label") -> Path:
    """Write a dataset's training part to ``path`` in the format its extension names."""
    path = Path(path)
    fmt = detect_format(path.name, b"")
    X, y = dataset.X, dataset.y
    if fmt == "svmlight":
        from sklearn.datasets import dump_svmlight_file

        dump_svmlight_file(X, y, str(path), zero_based=False,
                           query_id=dataset.query if dataset.query is not None else None)
    elif fmt == "npz":
        arrays = {"y": np.asarray(y)}
        if sp.issparse(X):
            X = X.tocsr()
            arrays.update(data=X.data, indices=X.indices, indptr=X.indptr,
                          shape=np.array(X.shape), format=np.array("csr"))
        else:
            arrays["X"] = np.asarray(X)
        if dataset.feature_names is not None:
            arrays["feature_names"] = np.asarray(dataset.feature_names, dtype=str)
        np.savez_compressed(path, **arrays)
    else:
        dense = X.toarray() if sp.issparse(X) else np.asarray(X)
        frame = pd.DataFrame(dense, columns=dataset.names())
        frame[label] = y
        if fmt == "csv":
            frame.to_csv(path, index=False, sep="\t" if path.suffix == ".tsv" else ",")
        else:
            frame.to_parquet(path, index=False)
    return path


# ----------------------------------------------------------------------------- helpers
def _decompress(raw: bytes, fname: str) -> tuple[bytes, str]:
    lower = fname.lower()
    try:
        if lower.endswith(".gz"):
            return gzip.decompress(raw), fname[:-3]
        if lower.endswith(".bz2"):
            return bz2.decompress(raw), fname[:-4]
    except (OSError, EOFError, ValueError) as exc:
        raise DataError(f"is not a valid compressed file ({exc})", source=fname) from None
    return raw, fname


def _text(raw: bytes, fname: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return raw.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any byte string
            raise DataError("is not a text file", source=fname) from None


def _finish(X, y, fname, *, feature_names=None, task=None, query=None,
            label_name="the label column",
            extra=None) -> Dataset:
    X = as_matrix(X, source=fname)
    if X.shape[0] == 0:
        raise DataError("contains no data rows", source=fname)
    if X.shape[1] == 0:
        raise DataError("contains no feature columns", source=fname)
    if y is None:
        raise NoLabeledRows("has no labels", X, source=fname)
    check_rows(X, y, source=fname)
    extra = dict(extra or {})
    unlabeled = _unlabeled_rows(y)
    if unlabeled is not None:
        if unlabeled.all():
            raise NoLabeledRows(f"has no labeled row: {label_name} is empty in every row",
                                X, source=fname)
        extra["X_unlabeled"] = X[np.flatnonzero(unlabeled)]
        X, y = X[np.flatnonzero(~unlabeled)], np.asarray(y)[~unlabeled]
        if query is not None:
            query = np.asarray(query)[~unlabeled]
    _check_enough_rows(y, fname)
    task = task or infer_task(y)
    y = check_labels(y, task=task, source=fname, what=label_name)
    if task == "classification" and y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    if query is not None:
        task = "ranking"
    return Dataset(X=X, y=y, name="", feature_names=feature_names, task=task, query=query,
                   **extra)


class NoLabeledRows(DataError):
    """A file with rows and no label (:func:`load_unlabeled` takes its rows)."""

    def __init__(self, message: str, X, *, source: str | None = None):
        super().__init__(message, source=source)
        self.X = X


def load_unlabeled(source, *, n_features: int | None = None, label=None,
                   name: str | None = None, fmt: str | None = None):
    """The rows of a file as unlabeled rows (FS-Manifold's ``X_unlabeled``): a file whose label
    column is empty in every row, an ``.npz`` or ``.mat`` file with X and no y, or any file the
    explorer reads, its labels ignored. ``n_features``: the labeled rows' column count, checked.

    Parameters
    ----------
    source : path-like or bytes
        The file (bytes need ``name``).
    n_features : int, optional
        The number of features the rows must have.
    label, name, fmt
        As :func:`load_file`.

    Returns
    -------
    ndarray or scipy.sparse matrix
        The file's rows, labeled and unlabeled alike.
    """
    try:
        ds = load_file(source, label=label, name=name, fmt=fmt)
    except NoLabeledRows as exc:
        X, where = as_matrix(exc.X), exc.source
    else:
        parts = [part for part in (ds.X, ds.X_unlabeled) if part is not None]
        X = sp.vstack(parts, format="csr") if any(sp.issparse(p) for p in parts) else \
            np.vstack(parts)
        where = name or (None if isinstance(source, (bytes, bytearray)) else Path(source).name)
    if n_features is not None and X.shape[1] != int(n_features):
        raise DataError(f"has {X.shape[1]} feature columns; the labeled rows have "
                        f"{int(n_features)} (an unlabeled file keeps the labeled file's columns, "
                        "its label column empty)", source=where)
    return X


def _unlabeled_rows(y) -> np.ndarray | None:
    """The rows whose label is empty (NaN, None or a blank string), or None if every row has
    one: they are kept as unlabeled rows (FS-Manifold's graph uses them), not refused."""
    y = np.asarray(y)
    if y.dtype.kind == "f":
        empty = np.isnan(y)
    elif y.dtype == object:
        empty = np.array([v is None or (isinstance(v, float) and np.isnan(v))
                          or (isinstance(v, str) and not v.strip()) for v in y], dtype=bool)
    else:
        return None
    return empty if empty.any() else None


MIN_ROWS = 5  # a file's rows: some to fit on, some held out to test on


def _check_enough_rows(y, fname: str) -> None:
    """Refuse a file too small to split and fit: fewer than ``MIN_ROWS`` rows (every fit of a
    2-row file failed, after the file had been accepted)."""
    n = len(y)
    if n < MIN_ROWS:
        raise DataError(f"has only {n} data row{'s' if n != 1 else ''}: the explorer fits on "
                        f"some rows and tests on the others, which needs at least {MIN_ROWS}",
                        source=fname)


# ----------------------------------------------------------------------------- svmlight
_SVM_LINE = re.compile(
    r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?(,[+-]?\d+)*"
    r"(\s+qid:\d+)?(\s+\d+:\S+)*\s*(#.*)?$"
)
_SVM_PAIR = re.compile(r"^(\d+):(.+)$")


def _locate_svmlight_problem(text: str) -> str:
    """Find the first malformed line of a LIBSVM file and say what is wrong with it."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if not stripped:
            continue
        tokens = stripped.split()
        try:
            float(tokens[0].split(",")[0])
        except ValueError:
            return f"line {lineno}: label {tokens[0]!r} is not a number"
        previous = -1
        for token in tokens[1:]:
            if token.startswith("qid:"):
                continue
            match = _SVM_PAIR.match(token)
            if not match:
                return f"line {lineno}: {token!r} is not an index:value pair"
            index, value = int(match.group(1)), match.group(2)
            try:
                float(value)
            except ValueError:
                return f"line {lineno}: value {value!r} of feature {index} is not a number"
            if index <= previous:
                return f"line {lineno}: feature indices must increase (… {previous}, {index})"
            previous = index
    return "the file is not valid LIBSVM/svmlight text"


def _read_svmlight(raw: bytes, fname: str, label) -> Dataset:
    from sklearn.datasets import load_svmlight_file

    text_head = raw[:1 << 16]
    if not any(ln.split(b"#", 1)[0].strip() for ln in text_head.splitlines()) and \
            not any(ln.split(b"#", 1)[0].strip() for ln in raw.splitlines()):
        raise DataError("the file is empty (no data lines)", source=fname)
    try:
        X, y, qid = load_svmlight_file(io.BytesIO(raw), dtype=np.float64, query_id=True,
                                       zero_based="auto")
    except (ValueError, RuntimeError, IndexError, OverflowError):
        raise DataError(_locate_svmlight_problem(_text(raw, fname)), source=fname) from None
    if X.shape[0] == 0:
        raise DataError("the file is empty (no data lines)", source=fname)
    query = qid if qid is not None and len(np.unique(qid)) > 1 and np.any(qid != 0) else None
    try:
        ds = _finish(X.tocsr(), y, fname, query=query)
    except DataError as exc:
        # Report rows as file lines: the parser skipped comments and blank lines.
        raise DataError(_svm_lines(exc.problem, raw), source=fname) from None
    return ds


def _svm_lines(problem: str, raw: bytes) -> str:
    match = re.search(r"row (\d+)", problem)
    if not match:
        return problem
    row = int(match.group(1))
    seen = 0
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if line.split(b"#", 1)[0].strip():
            seen += 1
            if seen == row:
                return problem.replace(f"row {row}", f"line {lineno}")
    return problem


# ----------------------------------------------------------------------------- tables
def _read_csv(raw: bytes, fname: str, label) -> Dataset:
    text = _text(raw, fname)
    if not text.strip():
        raise DataError("the file is empty", source=fname)
    sep = "\t" if fname.lower().endswith((".tsv", ".tab")) else _sniff_delimiter(text)
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    header_tokens = next(csv.reader([first], delimiter=sep))
    has_header = not all(_is_number(t) for t in header_tokens)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, header=0 if has_header else None,
                            skip_blank_lines=True, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise DataError("the file is empty", source=fname) from None
    except pd.errors.ParserError as exc:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if match:
            expected, line, saw = match.groups()
            raise DataError(f"ragged rows: line {line} has {saw} fields, expected {expected}",
                            source=fname) from None
        raise DataError(f"is not a readable CSV file ({exc})", source=fname) from None
    if not has_header:
        frame.columns = [f"x{j}" for j in range(frame.shape[1] - 1)] + ["label"]
    if frame.shape[0] == 0:
        raise DataError("has a header but no data rows", source=fname)
    if frame.isna().to_numpy().any():
        _raise_ragged_or_missing(text, sep, frame, fname, has_header)
    return _from_frame(frame, fname, label, line_offset=2 if has_header else 1)


def _raise_ragged_or_missing(text, sep, frame, fname, has_header):
    expected = frame.shape[1]
    for lineno, fields in enumerate(csv.reader(io.StringIO(text), delimiter=sep), start=1):
        if fields and len(fields) != expected:
            raise DataError(f"ragged rows: line {lineno} has {len(fields)} fields, "
                            f"expected {expected}", source=fname)
    # No ragged line: a genuinely empty cell. _from_frame reports its position.


def _sniff_delimiter(text: str) -> str:
    sample = "\n".join(text.splitlines()[:20])
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _read_parquet(raw: bytes, fname: str, label) -> Dataset:
    try:
        frame = pd.read_parquet(io.BytesIO(raw))
    except Exception as exc:  # pyarrow raises several unrelated types for corrupt files
        raise DataError(f"is not a readable Parquet file ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:200]})", source=fname) from None
    if frame.shape[0] == 0:
        raise DataError("contains no data rows", source=fname)
    return _from_frame(frame, fname, label, line_offset=1, unit="row")


def _from_frame(frame: pd.DataFrame, fname: str, label, *, line_offset: int,
                unit: str = "line") -> Dataset:
    """Split a table into features and label, checking every cell."""
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if frame.shape[1] < 2:
        raise DataError(f"has {frame.shape[1]} column; need at least one feature and a label "
                        "column", source=fname)
    if label is None:
        label_col = columns[-1]
    elif isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        if not -len(columns) <= label < len(columns):
            raise DataError(f"label column {label} does not exist (the file has "
                            f"{len(columns)} columns)", source=fname)
        label_col = columns[label]
    else:
        if str(label) not in columns:
            shown = ", ".join(columns[:20]) + (", …" if len(columns) > 20 else "")
            raise DataError(f"no label column named {label!r}; columns are: {shown}",
                            source=fname)
        label_col = str(label)
    features = [c for c in columns if c != label_col]
    y_series = frame[label_col]
    block = frame[features]
    numeric = block.apply(pd.to_numeric, errors="coerce")
    bad = numeric.isna().to_numpy() & ~block.isna().to_numpy()
    if bad.any():
        row, col = map(int, np.argwhere(bad)[0])
        value = block.iat[row, col]
        raise DataError(f"non-numeric value {value!r} in column {features[col]!r}, "
                        f"{unit} {row + line_offset}", source=fname)
    values = numeric.to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        row, col = map(int, np.argwhere(~finite)[0])
        kind = "missing value" if np.isnan(values[row, col]) else "infinite value"
        raise DataError(f"{kind} in column {features[col]!r}, {unit} {row + line_offset}",
                        source=fname)
    y = y_series.to_numpy()
    if y.dtype == object:
        given = ~y_series.isna()
        as_num = pd.to_numeric(y_series[given], errors="coerce")
        if not as_num.isna().any():
            y = pd.to_numeric(y_series, errors="coerce").to_numpy()  # empty cells: NaN
        else:
            y = np.where(given, y_series.astype(str), None).astype(object)
    task = infer_task(y)
    return _finish(values, y, fname, feature_names=features, task=task,
                   label_name=f"the label column {label_col!r}")


# ----------------------------------------------------------------------------- npz
# what zipfile and numpy raise on a damaged archive; zipfile signals a header naming an
# unknown zip version or compression method with the built-in exception for unsupported
# features, an encrypted member with RuntimeError, a corrupt deflate stream with zlib.error
_ZIP_ERRORS = (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError,
               RuntimeError, zlib.error)

def _read_npz(raw: bytes, fname: str, label) -> Dataset:
    try:
        archive = np.load(io.BytesIO(raw), allow_pickle=False)
    except _ZIP_ERRORS as exc:
        raise DataError(f"is not a readable .npz archive ({exc})", source=fname) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DataError("holds a single array, not an .npz archive with X and y", source=fname)
    try:
        keys = set(archive.files)
        ylabel = label if isinstance(label, str) else None
        y_key = next((k for k in (ylabel, "y", "labels", "label", "target") if k and k in keys),
                     None)
        if {"data", "indices", "indptr", "shape"} <= keys:
            fmt = str(archive["format"]) if "format" in keys else "csr"
            fmt = fmt.removeprefix("b'").removesuffix("'")
            cls = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}.get(fmt)
            if cls is None:
                raise DataError(f"sparse format {fmt!r} is not supported (csr or csc)",
                                source=fname)
            try:
                X = cls((archive["data"], archive["indices"], archive["indptr"]),
                        shape=tuple(archive["shape"]))
            except ValueError as exc:
                raise DataError(f"holds an inconsistent sparse matrix ({exc})",
                                source=fname) from None
        elif "X" in keys:
            X = archive["X"]
        else:
            raise DataError(f"has no array 'X' (nor a scipy sparse matrix); arrays are: "
                            f"{', '.join(sorted(keys))}", source=fname)
        if y_key is None:
            raise NoLabeledRows(f"has no labels: expected an array 'y'; arrays are: "
                                f"{', '.join(sorted(keys))}", as_matrix(X, source=fname),
                                source=fname)
        y = archive[y_key]
        names = [str(n) for n in archive["feature_names"]] if "feature_names" in keys else None
        extra = {}
        if "X_test" in keys and "y_test" in keys:
            extra["X_test"] = as_matrix(archive["X_test"], what="X_test", source=fname)
            extra["y_test"] = archive["y_test"]
        if "truth" in keys:
            extra["truth"] = archive["truth"].astype(np.int64)
        if "image_shape" in keys:
            extra["image_shape"] = tuple(int(v) for v in archive["image_shape"])
    except (*_ZIP_ERRORS, KeyError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"is a damaged .npz archive ({exc})", source=fname) from None
    return _finish(X, y, fname, feature_names=names, extra=extra)


# ----------------------------------------------------------------------------- MATLAB
def _read_mat(raw: bytes, fname: str, label) -> Dataset:
    """A MATLAB file: v5 (scipy.io) or v7.3 (HDF5, h5py). The features are the first of
    ``MAT_FEATURES`` it holds, the labels the variable ``label`` names or else the first of
    ``MAT_LABELS``; a sparse matrix stays sparse. Rows are examples: a features variable with
    as many columns as there are labels (and not as many rows) is transposed."""
    variables = _mat_variables(raw, fname)
    names = sorted(variables)
    wanted = [label] if isinstance(label, str) else list(MAT_LABELS)
    x_key = next((k for k in MAT_FEATURES if k in variables), None)
    y_key = next((k for k in wanted if k in variables), None)
    if x_key is None:
        raise DataError(f"has no features variable (looked for {', '.join(MAT_FEATURES)}); "
                        f"its variables are: {', '.join(names) or 'none'}", source=fname)
    if y_key is None:
        looked = ", ".join(wanted)
        raise NoLabeledRows(f"has no labels variable (looked for {looked}); its variables "
                            f"are: {', '.join(names)}", variables[x_key], source=fname)
    X, y = variables[x_key], variables[y_key]
    y = np.asarray(y.toarray() if sp.issparse(y) else y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise DataError(f"its labels {y_key!r} are a {y.shape[0]} × {y.shape[1]} matrix; "
                        "expected one label per row (a vector)", source=fname)
    if y.dtype.kind in "US":
        y = np.char.strip(y.astype(str))
    if X.ndim != 2:
        raise DataError(f"its features {x_key!r} have {X.ndim} dimensions; expected a "
                        "matrix of rows × features", source=fname)
    if X.shape[0] != y.size and X.shape[1] == y.size:
        X = X.T
    if sp.issparse(X):
        X = X.tocsr().astype(np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    return _finish(X, y, fname, label_name=f"the labels {y_key!r}")


def _mat_variables(raw: bytes, fname: str) -> dict:
    """The variables of a MATLAB file by name (2-D arrays, sparse kept sparse)."""
    hdf5 = raw[:8] == b"\x89HDF\r\n\x1a\n" or raw[512:520] == b"\x89HDF\r\n\x1a\n"
    if not hdf5:
        from scipy.io import loadmat
        from scipy.io.matlab import MatReadError

        try:
            found = loadmat(io.BytesIO(raw), squeeze_me=False)
        except (MatReadError, ValueError, TypeError, OSError, NotImplementedError,
                IndexError, KeyError, EOFError) as exc:
            if "HDF" in str(exc) or "7.3" in str(exc):
                hdf5 = True
            else:
                raise DataError(f"is not a readable MATLAB file ({exc})", source=fname) \
                    from None
        else:
            return {k: v for k, v in found.items() if not k.startswith("__")}
    try:
        import h5py
    except ImportError:  # pragma: no cover - a declared dependency
        raise DataError("is a MATLAB v7.3 (HDF5) file, which needs the h5py package: "
                        "pip install h5py", source=fname) from None
    out = {}
    try:
        with h5py.File(io.BytesIO(raw), "r") as f:
            for key, item in f.items():
                if key.startswith("#"):
                    continue
                if isinstance(item, h5py.Group) and "jc" in item and "ir" in item:
                    rows = int(item.attrs.get("MATLAB_sparse", 0))
                    jc = np.asarray(item["jc"], dtype=np.int64)
                    data = np.asarray(item["data"]) if "data" in item else \
                        np.ones(jc[-1])
                    out[key] = sp.csc_matrix((data, np.asarray(item["ir"], dtype=np.int64),
                                              jc), shape=(rows, jc.size - 1))
                elif isinstance(item, h5py.Dataset):
                    value = np.asarray(item)
                    if item.attrs.get("MATLAB_class", b"") in (b"char", "char"):
                        value = np.array(["".join(map(chr, row)) for row in value.T])
                    out[key] = value.T if value.ndim == 2 else value  # MATLAB is column-major
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"is not a readable MATLAB v7.3 (HDF5) file ({exc})",
                        source=fname) from None
    return out
