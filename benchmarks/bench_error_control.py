"""How many of the chosen features are false: do the error bounds hold, and what do they cost?

``planted``: stability selection (complementary pairs, τ = 0.6) of each method over the grid
k = 1 … 20 on a planted design — n = 300 rows, p = 500 AR(1)-correlated Gaussian columns (ρ
= 0.5 between neighbours: correlated nuisance), 20 of them with weights ±1 in a logistic
model — ``--pairs`` (10) pairs, over ``--reps`` (20) seeds: the mean number of false
features in the stable set against the mean bound the tool reports (Shah & Samworth's where
it applies, else Meinshausen & Bühlmann's), the true features found, and, on the same design
with the labels permuted, how often the stable set is empty.

``knockoffs``: model-X knockoffs (hidimstat, Gaussian sampler, 5 draws aggregated by
e-values) at fdr = 0.1 on the same design with n = 600, p = 200: the mean false discovery
proportion with its standard error, the mean share of the 20 signals found, and on permuted
labels how often nothing is selected.

``real``: on the catalogue's real sets (fine-foods, pd-speech, grants, hepatic-injury), the
stability path of each method at its defaults over the dashboard's grid (k = 1 … 64, 8
points; 20 pairs): the stable set, the bound, and the cost of the path against the cost of
one fit on the same training rows; and what knockoffs say there.

Run: ``.venv/bin/python benchmarks/bench_error_control.py`` (``--quick``: 5 seeds, 5 pairs).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import Table, run

from explorer.data import Dataset, load, make_planted_logistic
from explorer.experiments import knockoff_selection, stability_selection
from explorer.methods import get_method, k_grid

PLANTED_METHODS = ("fsa", "fgm", "abess")
REAL = {"fine-foods": ("fgm", "fsa"), "pd-speech": ("fgm", "fsa", "abess"),
        "grants": ("fgm", "fsa"), "hepatic-injury": ("fgm", "l1-svm")}
KS = [1, 2, 3, 5, 8, 12, 20]


def planted_design(seed: int, n: int, p: int, null: bool = False) -> Dataset:
    return make_planted_logistic(n, p, 20, 0.5, null=null, seed=seed)


def _reported(result) -> float:
    return result.bound_unimodal if np.isfinite(result.bound_unimodal) else result.bound


def planted(args, tables):
    reps = 5 if args.quick else args.reps
    pairs = 5 if args.quick else args.pairs
    table = Table(f"Stability selection on the planted design (n = 300, p = 500, 20 signals, "
                  f"k = 1 … 20, {pairs} pairs, τ = 0.6; {reps} seeds)",
                  ["method", "false in the stable set (mean)", "bound reported (mean)",
                   "holds", "signals found (mean of 20)", "empty on permuted labels",
                   "s per path"])
    for method in PLANTED_METHODS:
        false, bounds, found, empty, times = [], [], [], 0, []
        for seed in range(reps):
            data = planted_design(seed, 300, 500)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                result = stability_selection(method, data, ks=KS, n_pairs=pairs, seed=seed)
                times.append(time.perf_counter() - start)
                noise = stability_selection(method, planted_design(seed, 300, 500, null=True),
                                            ks=KS, n_pairs=pairs, seed=seed)
            truth = set(data.truth.tolist())
            false.append(len(set(result.stable.tolist()) - truth))
            found.append(len(set(result.stable.tolist()) & truth))
            bounds.append(_reported(result))
            empty += noise.stable.size == 0
        table.add(method, float(np.mean(false)), float(np.mean(bounds)),
                  "yes" if np.mean(false) <= np.mean(bounds) else "NO", float(np.mean(found)),
                  f"{empty}/{reps}", float(np.median(times)))
    tables.append(table)


def knockoffs(args, tables):
    reps = 5 if args.quick else args.reps
    table = Table(f"Knockoffs at fdr = 0.1 on the planted design (n = 600, p = 200, 20 "
                  f"signals; 5 draws; {reps} seeds)",
                  ["method", "false discovery proportion (mean ± se)", "within 0.1 + se",
                   "signals found (mean share)", "nothing selected on permuted labels",
                   "s per selection"])
    for method in PLANTED_METHODS:
        fdp, power, empty, times = [], [], 0, []
        for seed in range(reps):
            data = planted_design(seed, 600, 200)
            start = time.perf_counter()
            result = knockoff_selection(method, data, fdr=0.1, n_repeats=5, seed=seed)
            times.append(time.perf_counter() - start)
            chosen = set(result.selected.tolist())
            truth = set(data.truth.tolist())
            fdp.append(len(chosen - truth) / max(1, len(chosen)))
            power.append(len(chosen & truth) / len(truth))
            noise = knockoff_selection(method, planted_design(seed, 600, 200, null=True),
                                       fdr=0.1, n_repeats=5, seed=seed)
            empty += noise.selected.size == 0
        se = float(np.std(fdp, ddof=1) / np.sqrt(len(fdp))) if len(fdp) > 1 else float("nan")
        table.add(method, f"{np.mean(fdp):.3f} ± {se:.3f}",
                  "yes" if np.mean(fdp) <= 0.1 + se else "NO", float(np.mean(power)),
                  f"{empty}/{reps}", float(np.median(times)))
    tables.append(table)


def real(args, tables):
    pairs = 8 if args.quick else 20
    table = Table(f"Real sets: the stability path over k = 1 … 64 (8 points, {pairs} pairs, "
                  "τ = 0.6) against one fit on the same training rows",
                  ["set", "method", "stable features", "bound reported", "q (mean selected)",
                   "s per path", "s per fit", "path / fit", "knockoffs"])
    for name, methods in REAL.items():
        data = load(name)
        train = data.split(test_size=0.3, seed=0)
        ks = k_grid(min(train.n_features, 64), 8)
        for method in methods:
            cls = get_method(method)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                k_name = "k" if "k" in cls().get_params() else None
                est = cls(**({k_name: 10} if k_name else {}))
                est.fit(train.X, train.y)
                fit_s = time.perf_counter() - start
                start = time.perf_counter()
                result = stability_selection(method, data, ks=ks, n_pairs=pairs)
                path_s = time.perf_counter() - start
                knock = knockoff_selection(method, data)
            knock_text = ("not used: " + knock.refused.split(":")[0] if knock.refused
                          else f"{knock.selected.size} selected")
            table.add(name, method, int(result.stable.size), float(_reported(result)),
                      float(result.q), path_s, fit_s, path_s / fit_s, knock_text)
    tables.append(table)


def _arguments(p):
    p.add_argument("--reps", type=int, default=20, help="seeds of the planted designs")
    p.add_argument("--pairs", type=int, default=10, help="complementary pairs per path "
                   "(planted designs; the real sets use 20)")


if __name__ == "__main__":
    run("error_control", __doc__, [("planted", planted), ("knockoffs", knockoffs),
                                   ("real", real)], add_arguments=_arguments)
