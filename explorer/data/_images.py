"""Pixels as images: the image shape a user gives (``load(..., image_shape=(32, 32))``, the
app's *Image shape* box, the URL's ``image=32x32``, a session file), and the one guessed for
a file whose columns look like pixels — a square number of them, named by number or not at
all, and dense — said so wherever it is shown."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np

from ._dataset import Dataset

MIN_GUESSED = 64  # 8 × 8: fewer columns are not guessed to be an image
MAX_GUESSED = 256 * 256
DENSE_ENOUGH = 0.1  # pixel rows are dense; text (a square number of words by chance) is not
_NUMBERED = re.compile(r"^([A-Za-z_ ]*?)[_ ]?(\d+)$")


def parse_shape(text) -> tuple[int, int] | None:
    """An image shape from ``"32x32"``, ``"32 × 32"``, ``"32,32"``, ``(32, 32)``; None for an
    empty value or ``"none"`` (not an image). Raises ValueError on anything else."""
    if text is None:
        return None
    if isinstance(text, (tuple, list, np.ndarray)):
        values = [int(v) for v in text]
    else:
        text = str(text).strip()
        if not text or text.lower() in ("none", "no", "off"):
            return None
        parts = [p for p in re.split(r"\s*[x×X,*]\s*|\s+", text) if p]
        try:
            values = [int(p) for p in parts]
        except ValueError:
            raise ValueError(f"image shape {text!r} is not two whole numbers such as "
                             "32x32 (rows × columns)") from None
    if len(values) != 2 or min(values) < 1:
        raise ValueError(f"image shape {text!r} is not two positive whole numbers such as "
                         "32x32 (rows × columns)")
    return int(values[0]), int(values[1])


def with_image_shape(dataset: Dataset, shape) -> Dataset:
    """``dataset`` drawn as images of ``shape`` (rows × columns; None: not an image). Raises
    ValueError when rows × columns is not the number of features."""
    shape = parse_shape(shape)
    meta = {k: v for k, v in dataset.meta.items() if k != "image_shape_guessed"}
    if shape is None:
        return replace(dataset, image_shape=None, meta=meta)
    h, w = shape
    if h * w != dataset.n_features:
        raise ValueError(f"image shape {h} × {w} has {h * w:,} pixels and the data have "
                         f"{dataset.n_features:,} features")
    return replace(dataset, image_shape=(h, w), meta=meta)


def looks_like_pixels(dataset: Dataset) -> bool:
    """A square number of columns (8 × 8 up to 256 × 256), named by number or not at all,
    and dense rows."""
    p = dataset.n_features
    side = math.isqrt(p)
    if side * side != p or not MIN_GUESSED <= p <= MAX_GUESSED or dataset.is_lazy:
        return False
    if dataset.feature_names is not None and not _numbered(dataset.feature_names):
        return False
    X = dataset.X
    density = X.nnz / max(1, X.shape[0] * p) if hasattr(X, "nnz") else \
        float(np.count_nonzero(np.asarray(X))) / max(1, np.asarray(X).size)
    return density >= DENSE_ENOUGH


def guess_image_shape(dataset: Dataset) -> Dataset:
    """``dataset`` with a square image shape when it has none and :func:`looks_like_pixels`,
    ``meta["image_shape_guessed"]`` saying why; else the dataset itself."""
    if dataset.image_shape is not None or not looks_like_pixels(dataset):
        return dataset
    side = math.isqrt(dataset.n_features)
    named = "numbered" if dataset.feature_names is not None else "unnamed"
    guessed = replace(dataset, image_shape=(side, side))
    guessed.meta = {**dataset.meta, "image_shape_guessed":
                    f"{side} × {side} guessed from {dataset.n_features:,} {named} columns"}
    return guessed


def _numbered(names) -> bool:
    """Whether the names are one prefix and consecutive numbers (pixel0 … pixel1023, x1 …,
    0 … 1023, p_1 …)."""
    prefixes, numbers = set(), []
    for name in names:
        match = _NUMBERED.match(str(name).strip())
        if not match:
            return False
        prefixes.add(match.group(1).lower())
        numbers.append(int(match.group(2)))
    if len(prefixes) != 1:
        return False
    steps = np.diff(np.asarray(numbers))
    return bool(np.all(steps == 1))
