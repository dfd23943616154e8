"""Would the same features be chosen again? Every method at the same k on the catalogue's real
wide sets: Φ̂ (Nogueira et al., JMLR 2018) with its 95 % interval over ``--resamples``
stratified half-samples of the training rows, the mean pairwise Jaccard index, the 5-fold
cross-validated accuracy at k (selection inside each fold), and the seconds per resample
against one fit on all the training rows.

Sets (``--sets``): fine-foods, pd-speech, grants (all rows but a 30 % test part, which is not
used). Methods at their defaults but k: FGM (paper), FGM refine (B = k), FSA, abess, ℓ1-SVM
(C bisected to k) and Fisher + SVM.

Run: ``.venv/bin/python benchmarks/bench_stability.py`` (``--quick``: pd-speech, 10
resamples).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import Table, run

from explorer.data import load
from explorer.experiments import cv_folds, stability

METHODS = {
    "FGM (paper)": ("fgm", {}),
    "FGM refine": ("fgm", {"refine": "auto", "B_is_k": True}),
    "FSA": ("fsa", {}),
    "abess": ("abess", {}),
    "ℓ1-SVM at k": ("l1-svm", {}),
    "Fisher + SVM": ("fisher", {}),
}


def _params(extra: dict, k: int) -> dict:
    params = {n: v for n, v in extra.items() if n != "B_is_k"}
    if extra.get("B_is_k"):
        params["B"] = k
    return {**params, "k": k}


def _cv_accuracy(name, params, data) -> tuple[float, float]:
    from explorer.methods import get_method

    scores = []
    for train, held in cv_folds(data, 5):
        est = get_method(name)(**params).fit(data.X[train], data.y[train])
        scores.append(float(np.mean(est.predict(data.X[held]) == data.y[held])))
    return float(np.mean(scores)), float(np.std(scores, ddof=1))


def _one_set(set_name, k, n_resamples, table):
    from explorer.methods import get_method

    data = load(set_name).split(test_size=0.3, seed=0)
    for label, (name, extra) in METHODS.items():
        params = _params(extra, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            get_method(name)(**params).fit(data.X[:60], data.y[:60])  # compile outside timing
            start = time.perf_counter()
            get_method(name)(**params).fit(data.X, data.y)
            single = time.perf_counter() - start
            start = time.perf_counter()
            result = stability(name, data, n_resamples=n_resamples, **params)
            per = (time.perf_counter() - start) / result.n_resamples
            acc, sd = _cv_accuracy(name, params, data)
        low, high = result.phi_ci
        table.add(set_name, label, f"{result.phi:.3f} [{low:.3f}, {high:.3f}]",
                  f"{result.jaccard:.3f}", f"{acc:.3f} ± {sd:.3f}", per, single,
                  f"{per / single:.2f}")


def main(args, tables):
    sets = ("pd-speech",) if args.quick else tuple(s for s in args.sets.split(",") if s)
    n_resamples = 10 if args.quick else args.resamples
    table = Table(f"Stability at k = {args.k} over {n_resamples} half-samples",
                  ["set", "method", "Φ̂ [95 % interval]", "mean Jaccard", "CV accuracy (5 folds)",
                   "s per resample", "s per fit (all rows)", "resample / fit"])
    for set_name in sets:
        _one_set(set_name, args.k, n_resamples, table)
    tables.append(table)


def _arguments(p):
    p.add_argument("--sets", default="pd-speech,fine-foods,grants")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--resamples", type=int, default=50)


if __name__ == "__main__":
    run("stability", __doc__, [("stability", main)], add_arguments=_arguments)
