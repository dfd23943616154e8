"""C chosen by cross-validation: ``C="cv"`` (each fold's fits along the grid started from the
previous C's C-independent work) against scikit-learn's ``GridSearchCV`` over the same grid and
folds, in one process, with the chosen C of each (they must agree).

Sections (``--only``): fs-manifold (digits-3v8, m = 10), fgm (grants, fine-foods and pd-speech
at k = 20, the paper's algorithm and ``refine="auto"``), fgm-warm (the alternative not taken
for FGM refine: each fold's refinement at the next C started from the previous C's selection,
on 3 stratified 70/30 splits of each set — its time, its chosen C, how far its held-out scores
move from GridSearchCV's, and the test accuracy at each chosen C). Grid ``--Cs`` (default
0.01 … 100, five points), 3 folds; times are the best of ``--repeats``, both including the
final fit on all rows.

Run: ``.venv/bin/python benchmarks/bench_cv.py`` (``--quick``: pd-speech and a 200-row
digits-3v8 only).
"""

from __future__ import annotations

import sys
import time
import warnings
from functools import partial

import numpy as np
from _common import Table, run
from sklearn.model_selection import GridSearchCV, StratifiedShuffleSplit

from explorer import FGM
from explorer.data import load
from explorer.engines.fgm import Candidates, Fitted, Restricted, refine_path
from explorer.kernels import take_columns
from explorer.methods import FSManifold
from explorer.methods._cv import best_C, folds
from explorer.methods.fgm import _times_columns
from explorer.optim import LOSSES, Stopping

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


def _warm_selection_scores(X, y, k: int, Cs) -> np.ndarray:
    """Held-out scores (len(Cs), 3) of FGM refine with each fold's refinement at the next C
    started from the previous C's selection and weights (the first C a cold fit)."""
    scores = np.zeros((len(Cs), 3))
    for f, (train, test) in enumerate(folds(y, 3, "classification")):
        X_train, y_train = X[train], y[train]
        first = FGM(k=k, B=k, refine="auto", C=Cs[0]).fit(X_train, y_train)
        lam = first.space_.lam
        take = partial(_scaled_columns, X_train, lam)
        kept = first.selected_features_
        weights, intercept = first.coef_[kept] / lam[kept], first.intercept_
        scores[0, f] = first.score(X[test], y[test])
        for i, C in enumerate(Cs[1:], start=1):
            problem = Restricted(np.asarray(y_train, dtype=np.float64), LOSSES["logistic"](),
                                 C, True, Stopping(first.inner_tol ** 2, first.max_inner))
            out = refine_path(problem, Candidates(take, first.space_.top, X.shape[1]),
                              Fitted(kept, weights, None, intercept), k, signal=None,
                              paper=False, ask_past=k)
            kept, weights, intercept = out.kept, out.weights, out.intercept
            decision = np.asarray(X[test] @ _coef(kept, weights * lam[kept],
                                                  X.shape[1])).ravel() + intercept
            scores[i, f] = np.mean(np.where(decision >= 0, 1, -1) == y[test])
    return scores


def _scaled_columns(X, lam, ids):
    return _times_columns(take_columns(X, ids), lam[ids])


def _coef(kept, weights, n_features):
    coef = np.zeros(n_features)
    coef[kept] = weights
    return coef


def _warm_row(table, name, split, X, y, train, test, k):
    X_train, y_train = X[train], y[train]
    t_path, exact = _best_time(lambda: FGM(k=k, B=k, refine="auto", C="cv", Cs=CS, cv=3)
                               .fit(X_train, y_train), 1)

    def warm():
        scores = _warm_selection_scores(X_train, y_train, k, CS)
        C = best_C(np.asarray(CS), scores)
        return scores, C, FGM(k=k, B=k, refine="auto", C=C).fit(X_train, y_train)

    t_warm, (scores, C_warm, model) = _best_time(warm, 1)
    table.add(name, split, t_path, t_warm, f"{t_path / t_warm:.2f}×", f"{exact.C_:g}",
              f"{C_warm:g}", f"{np.abs(scores - exact.cv_scores_).max():.3f}",
              f"{exact.score(X[test], y[test]):.4f}", f"{model.score(X[test], y[test]):.4f}")


def fgm_warm(args, tables):
    table = Table("FGM refine at k = 20: C='cv' (GridSearchCV's fits) against the refinement "
                  "started from the previous C's selection (not used)",
                  ["data", "split", "C='cv' (s)", "warm selection (s)", "speed-up",
                   "C chosen", "warm's C", "largest score change", "test accuracy",
                   "warm's test accuracy"])
    for name in ("pd-speech",) if args.quick else ("grants", "fine-foods", "pd-speech"):
        X, y = _data(name)
        FGM(k=5, refine="auto").fit(X[:60], y[:60])  # compile the kernels outside the timings
        splits = StratifiedShuffleSplit(1 if args.quick else 3, test_size=0.3, random_state=0)
        for s, (train, test) in enumerate(splits.split(np.zeros(len(y)), y)):
            _warm_row(table, name, s, X, y, train, test, k=20)
    tables.append(table)


if __name__ == "__main__":
    run("cv", __doc__, [("fs-manifold", fs_manifold), ("fgm", fgm), ("fgm-warm", fgm_warm)])
