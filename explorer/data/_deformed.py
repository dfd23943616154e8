"""MNIST-sized digits for semi-supervised selection on many unlabeled rows: scikit-learn's
8 × 8 handwritten digits, each drawn again under a small random affine deformation and
resampled to 28 × 28 (the distortions by which Loosli, Canu & Bottou, 2007, grew MNIST to
eight million rows).

The originals are split first: training rows (labeled and unlabeled) are deformations of one
part of them, test rows of the other, so that no test row is a deformation of a digit the
method saw."""

from __future__ import annotations

import numpy as np

from ._dataset import Dataset

BLOCK = 8192  # images drawn at a time
SKLEARN_DIGITS = "sklearn.datasets.load_digits (UCI optical digits)"


def _warp(images: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
    """Each 8 × 8 image under a random rotation (±12°), scale (0.9–1.1), shear (±0.15) and
    shift (±0.6 of an original pixel), sampled bilinearly on a ``size`` × ``size`` grid."""
    count = images.shape[0]
    padded = np.pad(images.reshape(count, 8, 8), ((0, 0), (1, 1), (1, 1)))
    angle = rng.uniform(-np.pi / 15, np.pi / 15, count)
    scale = rng.uniform(0.9, 1.1, count)
    shear = rng.uniform(-0.15, 0.15, count)
    shift = rng.uniform(-0.6, 0.6, (count, 2))
    grid = (np.arange(size) + 0.5) * 8.0 / size - 4.0  # output pixel centres, original units
    gy, gx = np.meshgrid(grid, grid, indexing="ij")
    cos, sin = np.cos(angle)[:, None], np.sin(angle)[:, None]
    u = (cos * gx.ravel() - sin * gy.ravel() + shear[:, None] * gy.ravel()) / scale[:, None]
    v = (sin * gx.ravel() + cos * gy.ravel()) / scale[:, None]
    col = u + 4.0 - 0.5 + 1.0 + shift[:, [0]]  # source coordinates in the padded image
    row = v + 4.0 - 0.5 + 1.0 + shift[:, [1]]
    col = np.clip(col, 0.0, 9.0 - 1e-9)
    row = np.clip(row, 0.0, 9.0 - 1e-9)
    c0, r0 = np.floor(col).astype(np.int64), np.floor(row).astype(np.int64)
    fc, fr = col - c0, row - r0
    which = np.arange(count)[:, None]
    out = ((1 - fr) * (1 - fc) * padded[which, r0, c0] + (1 - fr) * fc * padded[which, r0, c0 + 1]
           + fr * (1 - fc) * padded[which, r0 + 1, c0] + fr * fc * padded[which, r0 + 1, c0 + 1])
    return out / 16.0


def deformed_digits(n_rows: int = 60_000, n_labeled: int = 300, n_test: int = 2_000,
                    pair: str = "3v8", size: int = 28, seed: int = 0) -> Dataset:
    """``n_rows`` training rows (``n_labeled`` of them labeled, classes balanced, the rest
    unlabeled) and ``n_test`` labeled test rows of the digits ``pair`` (e.g. "3v8", the
    paper's USPS pair), each a deformed ``size`` × ``size`` image."""
    from sklearn.datasets import load_digits

    a, b = (int(c) for c in pair.split("v"))
    if n_labeled < 2 or n_labeled >= n_rows:
        raise ValueError("n_labeled must be at least 2 and fewer than n_rows")
    digits = load_digits()
    keep = np.isin(digits.target, [a, b])
    originals, labels = digits.data[keep], digits.target[keep]
    rng = np.random.default_rng(seed)
    order = rng.permutation(labels.size)
    held = np.zeros(labels.size, dtype=bool)
    held[order[: labels.size // 3]] = True  # a third of the originals make the test rows

    def draw(pool: np.ndarray, count: int, balanced: bool) -> tuple[np.ndarray, np.ndarray]:
        if balanced:
            per = [np.flatnonzero(labels[pool] == c) for c in (a, b)]
            pick = np.concatenate([pool[rng.choice(p, count // 2 + (i < count % 2))]
                                   for i, p in enumerate(per)])
        else:
            pick = pool[rng.integers(0, pool.size, count)]
        X = np.empty((pick.size, size * size))
        for start in range(0, pick.size, BLOCK):
            rows = slice(start, start + BLOCK)
            X[rows] = _warp(originals[pick[rows]], rng, size)
        return X, labels[pick]

    train, test = np.flatnonzero(~held), np.flatnonzero(held)
    X_l, y_l = draw(train, n_labeled, balanced=True)
    X_u, _ = draw(train, n_rows - n_labeled, balanced=False)
    X_t, y_t = draw(test, n_test, balanced=False)
    return Dataset(
        X=X_l, y=y_l, X_unlabeled=X_u, X_test=X_t, y_test=y_t, image_shape=(size, size),
        name=f"digits-deformed-{pair}",
        description=(f"{a} versus {b} as {size}×{size} deformed digits: {n_labeled} labeled "
                     f"and {n_rows - n_labeled:,} unlabeled training rows, {n_test:,} test "
                     "rows from held-out originals"),
        source=SKLEARN_DIGITS + ", deformed (affine, bilinear) to " + f"{size}×{size}",
        licence="shipped with scikit-learn (BSD-3-Clause); original data from the UCI "
                "Machine Learning Repository")
