"""Compile every numba kernel once, into numba's on-disk cache (``cache=True``): the first fit
after an install then loads machine code instead of waiting for the compiler. A cold compile of
every kernel takes most of a minute on two cores; a warm one loads the cache in a second or
two. ``make install`` runs it (``explorer warm``), and every server process starts it in the
background."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

log = logging.getLogger("explorer.methods")


def _fits():
    """The tiny fits whose code paths reach every compiled kernel: each method the kernels
    serve, on dense and sparse, float64 and float32 rows, each loss that has its own."""
    from . import FGM, FSA, FSManifold, FSMulti, GrFL

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12))
    y = np.where(X[:, 0] > 0, 1, -1)
    layouts = [("dense", X), ("csr", sp.csr_matrix(X)), ("csc", sp.csc_matrix(X)),
               ("float32", X.astype(np.float32)),
               ("csr float32", sp.csr_matrix(X.astype(np.float32)))]
    fits = []
    for name, data in layouts:
        for loss in ("squared_hinge", "logistic"):
            fits.append((f"FGM {loss} {name}", lambda d=data, loss=loss:
                         FGM(B=2, loss=loss, max_outer=2).fit(d, y)))
        for loss in ("logistic", "huber_svm"):
            fits.append((f"FSA {loss} {name}", lambda d=data, loss=loss:
                         FSA(k=2, n_iter=12, loss=loss).fit(d, y)))
    fits += [
        ("FGM refine", lambda: FGM(k=3, refine="auto").fit(X, y)),
        ("FSA piecewise", lambda: FSA(k=2, n_iter=12, basis="piecewise_linear").fit(X, y)),
        ("FS-multi", lambda: FSMulti(B=2, max_outer=2).fit(X, y)),
        ("GrFL", lambda: GrFL(max_features=3).fit(X, y)),
        ("FS-Manifold", lambda: FSManifold(m=3).fit(X, y)),
    ]
    return fits


def compile_all(progress: Callable[[str, int, int], None] | None = None) -> float:
    """Run the tiny fits that compile every kernel (a failing one is logged and skipped:
    warming is an optimisation, and the real fit reports its own error); ``progress(name,
    done, total)`` after each. Returns the seconds it took."""
    start = time.perf_counter()
    fits = _fits()
    with warnings.catch_warnings():  # tiny fits that only compile: their warnings are noise
        warnings.simplefilter("ignore")
        for i, (name, fit) in enumerate(fits, start=1):
            try:
                fit()
            except Exception:  # noqa: BLE001 - see the docstring
                log.exception("compiling the kernels of %s failed", name)
            if progress is not None:
                progress(name, i, len(fits))
    return time.perf_counter() - start
