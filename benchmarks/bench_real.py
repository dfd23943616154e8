"""Every method at the same k on the catalogue's real wide sets, over several stratified splits.

For each set, ``--splits`` (default 5) stratified 70/30 splits of all its rows — the same splits
for every method — and each k in ``--ks`` (default 5, 10, 20, 50): FGM (the paper's algorithm
with ``k``), FGM (``refine="auto"``, B = k), FSA, abess, ℓ1-LogReg and ℓ1-SVM (C bisected to k,
then the ℓ2 model refit on the k features) and Fisher scores + SVM. Methods with a C choose it
by ``C="cv"`` (3 folds of the training rows) over ``--Cs``; the ℓ1 models' C is the one that
gives k features. Reported: mean ± sd over the splits of test accuracy and AUC, the median fit
time (cross-validation included) and the median peak memory above the process's baseline
during the fit (sampled every 2 ms, so it includes what abess allocates in C++).

Sets (``--sets``): fine-foods (4,000 + 1,000 reviews, tf-idf words, sparse), pd-speech (252 ×
751 correlated speech features), grants (8,190 + 518 × 1,845), hepatic-injury (QSAR: 281
compounds × 376 descriptors, any liver injury — mild or severe — against none), text-like (the
sparse text-like generator, 2,000 × 10,000, 5 % positives), and fine-foods-counts and
text-like-counts: the same documents as raw word counts (``weighting="counts"``, what a
CountVectorizer gives). "FGM (defaults)" is ``FGM(k=k)`` with nothing else set, what a user
gets.

Run: ``.venv/bin/python benchmarks/bench_real.py`` (``--quick``: 2 splits, k ∈ {10, 20},
fine-foods and pd-speech; ``--methods "FGM refine"`` runs one method against abess, e.g.
over ``--splits 20`` to see whether a gap of a few tenths of a point is more than noise).
"""

from __future__ import annotations

import statistics
import threading
import time
import warnings

import numpy as np
import psutil
import scipy.sparse as sp
from _common import Table, save
from _common import parser as common_parser
from sklearn.model_selection import StratifiedShuffleSplit

from explorer import FGM, FSA
from explorer.data import load, make
from explorer.methods import L1SVM, Abess, FisherSVM, L1LogReg
from explorer.metrics import auc

SETS = ("fine-foods", "pd-speech", "grants", "hepatic-injury", "text-like", "fine-foods-counts",
        "text-like-counts")


def _data(name):
    """All rows of the set (training and test) as one X, y with labels ±1."""
    if name.endswith("-counts"):
        name = name.removesuffix("-counts")
        data = make(name, weighting="counts")
    else:
        data = make("text-like") if name == "text-like" else load(name)
    if data.X_test is not None:
        X = sp.vstack([data.X, data.X_test], format="csr") if sp.issparse(data.X) \
            else np.vstack([data.X, data.X_test])
        y = np.concatenate([data.y, data.y_test])
    else:
        X, y = data.X, data.y
    if name == "hepatic-injury":  # abess and FSA are binary: any liver injury against none
        return X, np.where(y != "none", 1, -1)
    positive = sorted(np.unique(y), key=str)[-1] if name != "fine-foods" else "great"
    return X, np.where(y == positive, 1, -1)


def _methods(k: int, Cs):
    cv = {"C": "cv", "Cs": Cs, "cv": 3}
    return {
        "FGM (defaults)": lambda: FGM(k=k),
        "FGM (paper)": lambda: FGM(k=k, **cv),
        "FGM refine": lambda: FGM(k=k, B=k, refine="auto", **cv),
        "FSA": lambda: FSA(k=k),
        "abess": lambda: Abess(k=k),
        "ℓ1-LogReg +refit": lambda: L1LogReg(k=k, refit=True),
        "ℓ1-SVM +refit": lambda: L1SVM(k=k, refit=True),
        "Fisher + SVM": lambda: FisherSVM(k=k, **cv),
    }


class PeakMemory:
    """The peak resident memory above the start, sampled every 2 ms in a thread."""

    def __init__(self):
        self.process = psutil.Process()

    def __enter__(self):
        self.base = self.process.memory_info().rss
        self.peak = self.base
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._done.wait(0.002):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)
        self.mb = (self.peak - self.base) / 2**20


def _fit(factory, X, y, X_test, y_test):
    estimator = factory()
    with warnings.catch_warnings(), PeakMemory() as memory:
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        estimator.fit(X, y)
        elapsed = time.perf_counter() - start
    scores = estimator.decision_function(X_test)
    accuracy = float(np.mean(estimator.predict(X_test) == y_test))
    return {"acc": accuracy, "auc": auc(y_test, scores), "t": elapsed, "mb": memory.mb,
            "k": int(estimator.n_selected_), "C": getattr(estimator, "C_", None)}


def _megabytes(mb: float) -> str:
    """Peak memory as read: below 1 MB the sampling cannot tell it from nothing."""
    return "< 1" if mb < 1 else f"{mb:,.0f}"


def _mean_sd(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    if not values:
        return "–"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.3f} ± {sd:.3f}"


def main():
    p = common_parser(__doc__)
    p.add_argument("--sets", default="", help=f"comma list of {', '.join(SETS)}")
    p.add_argument("--splits", type=int, default=5)
    p.add_argument("--ks", default="5,10,20,50")
    p.add_argument("--Cs", default="0.01,0.1,1,10,100")
    p.add_argument("--methods", default="", help="comma list of method names to run (abess "
                   "always runs: the comparison column is against it)")
    args = p.parse_args()
    sets = [s for s in (args.sets.split(",") if args.sets else SETS) if s]
    splits, ks = args.splits, [int(k) for k in args.ks.split(",")]
    if args.quick:
        sets = [s for s in sets if s in ("fine-foods", "pd-speech")] if not args.sets else sets
        splits, ks = 2, [10, 20]
    Cs = [float(c) for c in args.Cs.split(",")]
    tables, start = [], time.time()
    for name in sets:
        X, y = _data(name)
        table = Table(f"{name}: {X.shape[0]:,} × {X.shape[1]:,}"
                      f"{' sparse' if sp.issparse(X) else ''}, {splits} stratified 70/30 "
                      "splits", ["k", "method", "accuracy", "AUC", "time (s)", "peak MB",
                                 "#features", "C (median)", "vs abess (acc)"])
        folds = list(StratifiedShuffleSplit(splits, test_size=0.3, random_state=0)
                     .split(np.zeros(len(y)), y))
        for k in ks:
            results = {}
            chosen = set(args.methods.split(",")) | {"abess"} if args.methods else None
            for method, factory in _methods(k, Cs).items():
                if chosen is not None and method not in chosen:
                    continue
                rows = [_fit(factory, X[tr], y[tr], X[te], y[te]) for tr, te in folds]
                results[method] = rows
            base = [r["acc"] for r in results["abess"]]
            for method, rows in results.items():
                acc = [r["acc"] for r in rows]
                diff = [a - b for a, b in zip(acc, base)]
                ahead = sum(d > 1e-12 for d in diff)
                behind = sum(d < -1e-12 for d in diff)
                Cs_used = [r["C"] for r in rows if r["C"] is not None]
                table.add(k, method, _mean_sd(acc), _mean_sd([r["auc"] for r in rows]),
                          statistics.median(r["t"] for r in rows),
                          _megabytes(statistics.median(r["mb"] for r in rows)),
                          f"{statistics.median(r['k'] for r in rows):g}",
                          f"{statistics.median(Cs_used):g}" if Cs_used else "–",
                          "–" if method == "abess" else
                          f"{np.mean(diff):+.3f} ({ahead} ahead, {behind} behind)")
        tables.append(table)
    print(f"\ntotal {time.time() - start:.0f} s")
    suffix = "-quick" if args.quick else f"-{args.splits}splits" if args.splits != 5 else ""
    save("real" + suffix, tables)


if __name__ == "__main__":
    main()
