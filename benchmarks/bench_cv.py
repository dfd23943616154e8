"""C chosen by cross-validation: ``C="cv"`` (each fold's fits along the grid started from the
previous C's C-independent work) against scikit-learn's ``GridSearchCV`` over the same grid and
folds, in one process, with the chosen C of each (they must agree).

Sections (``--only``): fs-manifold (digits-3v8, m = 10), fgm (grants, fine-foods and pd-speech
at k = 20, the paper's algorithm and ``refine="auto"``). Grid ``--Cs`` (default 0.01 … 100, five
points), 3 folds; times are the best of ``--repeats``, both including the final fit on all
rows.

Run: ``.venv/bin/python benchmarks/bench_cv.py`` (``--quick``: pd-speech and a 200-row
digits-3v8 only).
"""

from __future__ import annotations

import sys
import time
import warnings

from _common import Table, run
from sklearn.model_selection import GridSearchCV

from explorer import FGM
from explorer.data import load
from explorer.methods import FSManifold

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_real import _data  # noqa: E402  (the same sets, all rows, labels ±1)

CS = [0.01, 0.1, 1.0, 10.0, 100.0]


def _best_time(fit, repeats: int):
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            result = fit()
            best = min(best, time.perf_counter() - start)
    return best, result


def _compare(table, label, make, X, y, repeats):
    _best_time(lambda: make().fit(X[:60], y[:60]), 1)  # compile the kernels outside the timings
    t_path, est = _best_time(lambda: make(C="cv", Cs=CS, cv=3).fit(X, y), repeats)
    t_grid, grid = _best_time(lambda: GridSearchCV(make(), {"C": CS}, cv=3).fit(X, y),
                              repeats)
    table.add(label, f"{X.shape[0]:,} × {X.shape[1]:,}", t_path, t_grid,
              f"{t_grid / t_path:.2f}×", f"{est.C_:g}", f"{grid.best_params_['C']:g}")


def _table(title):
    return Table(title, ["method", "data", "C='cv' (s)", "GridSearchCV (s)", "speed-up",
                         "C chosen", "GridSearchCV's C"])


def fs_manifold(args, tables):
    ds = load("digits-3v8")
    X, y = (ds.X[:200], ds.y[:200]) if args.quick else (ds.X, ds.y)
    table = _table("FS-Manifold: graph and kernel kept along the grid, the level method "
                   "started at the previous C's p")
    _compare(table, "FS-Manifold (m = 10), digits-3v8",
             lambda **kw: FSManifold(m=10, **kw), X, y, 1 if args.quick else args.repeats)
    tables.append(table)


def fgm(args, tables):
    table = _table("FGM at k = 20: the feature scaling kept along the grid")
    for name in ("pd-speech",) if args.quick else ("grants", "fine-foods", "pd-speech"):
        X, y = _data(name)
        for label, params in (("FGM (paper)", {"k": 20}),
                              ("FGM refine", {"k": 20, "B": 20, "refine": "auto"})):
            _compare(table, f"{label}, {name}", lambda p=params, **kw: FGM(**p, **kw), X, y,
                     args.repeats)
    tables.append(table)


if __name__ == "__main__":
    run("cv", __doc__, [("fs-manifold", fs_manifold), ("fgm", fgm)])
