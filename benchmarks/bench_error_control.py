"""How many of the chosen features are false: do the guarantees hold where they can fail?

``knockoffs``: model-X knockoffs (hidimstat's Gaussian sampler, the project's thresholds) on
a planted design — n = 600 rows, p = 200 AR(1)-correlated Gaussian columns (ρ = 0.5), 20 of
them with weights ±1 in a logistic model — at fdr = 0.05, 0.1 and 0.2, over ``--reps`` (20)
seeds: the mean false discovery proportion with its standard error, the mean share of the
signals found, and on the same design with the labels permuted how often nothing is
selected. One knockoff draw (knockoff+, the default) and five draws aggregated by e-values
(e-BH, each draw at fdr/2).

``probes``: the same on real columns with known nulls — breast cancer's 30 columns and
digits 3 v 8's 64 pixels, each with as many permuted copies appended as probes (the NIPS
2003 construction): the share of probes among the selected (a lower bound of the false
discovery proportion: a real column may be null too), the number selected, and how often
nothing is selected on permuted labels.

``planted``: stability selection at its defaults (PFER 1, cutoff 0.75, q derived; 10 pairs)
on the planted design of 300 rows and 500 columns, as loaded and on the same columns in
other units (offsets and scales over six decades): the mean number of false features in the
stable set against the bound it reports, and on permuted labels the mean stable count; then
on columns of two kinds (five at mean 0, the rest far from zero on a narrow spread) with
permuted labels, standardised (the default) and as loaded, where FGM's root-mean-square
scaling makes the five loud whatever the labels.

``real``: on the catalogue's real sets, stability selection of each method at its defaults
(20 pairs): the stable set, the bound, q, what one permutation of the labels keeps stable,
and the cost of the run against one fit on the same training rows; and what knockoffs say.

Run: ``.venv/bin/python benchmarks/bench_error_control.py`` (``--quick``: 5 seeds, 5 pairs).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace

import numpy as np
from _common import Table, run

from explorer.data import Dataset, load, make_planted_logistic, with_probes
from explorer.experiments import knockoff_selection, permutation_check, stability_selection
from explorer.experiments.knockoffs import select_knockoffs
from explorer.methods import get_method

PLANTED_METHODS = ("fsa", "fgm", "abess")
LEVELS = (0.05, 0.1, 0.2)
REAL = {"fine-foods": ("fgm", "fsa"), "pd-speech": ("fgm", "fsa", "abess"),
        "grants": ("fgm", "fsa"), "hepatic-injury": ("fgm", "l1-svm"),
        "digits-3v8": ("fgm", "fsa")}


def planted_design(seed: int, n: int, p: int, null: bool = False) -> Dataset:
    return make_planted_logistic(n, p, 20, 0.5, null=null, seed=seed)


def other_units(data: Dataset, seed: int) -> Dataset:
    """The same design on columns in other units: offsets and scales over six decades."""
    rng = np.random.default_rng(seed + 99)
    scale = 10.0 ** rng.uniform(-3, 3, data.n_features)
    offset = rng.exponential(5.0, data.n_features)
    return replace(data, X=(np.asarray(data.X) + offset) * scale)


def loud_and_quiet(seed: int) -> Dataset:
    """Permuted labels on five columns at mean 0 and 195 far from zero on a narrow spread."""
    data = make_planted_logistic(200, 200, 5, 0.0, null=True, seed=seed)
    X = np.asarray(data.X).copy()
    X[:, 5:] = 500.0 + 0.5 * X[:, 5:]
    return replace(data, X=X)


def _mean_se(values) -> str:
    v = np.asarray(values, dtype=float)
    se = float(np.std(v, ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")
    return f"{v.mean():.3f} ± {se:.3f}"


def _within(values, level) -> str:
    v = np.asarray(values, dtype=float)
    se = float(np.std(v, ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0
    return "yes" if v.mean() <= level + se else "NO"


def knockoffs(args, tables):
    reps = 5 if args.quick else args.reps
    table = Table(f"Knockoffs on the planted design (n = 600, p = 200, 20 signals; {reps} "
                  "seeds)",
                  ["method", "draws", "fdr", "false discovery proportion (mean ± se)",
                   "within fdr + se", "signals found (mean share ± se)",
                   "nothing selected on permuted labels", "s per selection"])
    for method in PLANTED_METHODS:
        for draws in ((1, 5) if method == "fsa" else (1,)):
            fdp = {level: [] for level in LEVELS}
            power = {level: [] for level in LEVELS}
            empty = {level: 0 for level in LEVELS}
            times = []
            for seed in range(reps):
                data = planted_design(seed, 600, 200)
                truth = set(data.truth.tolist())
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = time.perf_counter()
                    result = knockoff_selection(method, data, fdr=0.1, n_repeats=draws,
                                                seed=seed)
                    times.append(time.perf_counter() - start)
                    noise = knockoff_selection(method, planted_design(seed, 600, 200, True),
                                               fdr=0.1, n_repeats=draws, seed=seed)
                W, W_null = result.draw_statistics, noise.draw_statistics
                for level in LEVELS:
                    chosen = set(select_knockoffs(W, level)[0].tolist())
                    fdp[level].append(len(chosen - truth) / max(1, len(chosen)))
                    power[level].append(len(chosen & truth) / len(truth))
                    empty[level] += select_knockoffs(W_null, level)[0].size == 0
            for level in LEVELS:
                table.add(method, draws, level, _mean_se(fdp[level]),
                          _within(fdp[level], level), _mean_se(power[level]),
                          f"{empty[level]}/{reps}", float(np.median(times)))
    tables.append(table)


def probes(args, tables):
    reps = 3 if args.quick else max(5, args.reps // 2)
    table = Table(f"Knockoffs on real columns with appended probes ({reps} draws of the "
                  "probes and the split; one knockoff draw)",
                  ["set", "method", "fdr", "probes among the selected (mean ± se)",
                   "within fdr + se", "selected (mean)", "nothing selected on permuted "
                   "labels"])
    sets = {"breast-cancer": ("fsa", "fgm", "abess"), "digits-3v8": ("fsa", "fgm")}
    for name, methods in sets.items():
        for method in methods:
            share = {level: [] for level in LEVELS}
            sizes = {level: [] for level in LEVELS}
            empty = {level: 0 for level in LEVELS}
            for seed in range(reps):
                data = with_probes(load(name), seed=seed)
                nulls = set(data.probes.tolist())
                rng = np.random.default_rng(seed)
                permuted = replace(data, y=rng.permutation(data.y))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    W = knockoff_selection(method, data, seed=seed).statistic
                    W_null = knockoff_selection(method, permuted, seed=seed).statistic
                for level in LEVELS:
                    chosen = set(select_knockoffs(W, level)[0].tolist())
                    share[level].append(len(chosen & nulls) / max(1, len(chosen)))
                    sizes[level].append(len(chosen))
                    empty[level] += select_knockoffs(W_null, level)[0].size == 0
            for level in LEVELS:
                table.add(name, method, level, _mean_se(share[level]),
                          _within(share[level], level), float(np.mean(sizes[level])),
                          f"{empty[level]}/{reps}")
    tables.append(table)


def planted(args, tables):
    reps = 5 if args.quick else args.reps
    pairs = 5 if args.quick else args.pairs
    table = Table(f"Stability selection at its defaults on the planted design (n = 300, "
                  f"p = 500, 20 signals; PFER 1, cutoff 0.75; {pairs} pairs; {reps} seeds)",
                  ["method", "columns", "q", "false in the stable set (mean ± se)",
                   "bound reported (mean)", "holds (false and permuted ≤ bound)",
                   "signals found (mean of 20)",
                   "stable on permuted labels (mean)", "s per run"])
    for method in PLANTED_METHODS:
        for units in ("as generated", "other units"):
            false, bounds, found, null, times, q = [], [], [], [], [], 0
            for seed in range(reps):
                data = planted_design(seed, 300, 500)
                noise = planted_design(seed, 300, 500, null=True)
                if units == "other units":
                    data, noise = other_units(data, seed), other_units(noise, seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = time.perf_counter()
                    result = stability_selection(method, data, n_pairs=pairs, seed=seed)
                    times.append(time.perf_counter() - start)
                    empty = stability_selection(method, noise, n_pairs=pairs, seed=seed)
                truth = set(data.truth.tolist())
                false.append(len(set(result.stable.tolist()) - truth))
                found.append(len(set(result.stable.tolist()) & truth))
                bounds.append(result.bound)
                null.append(empty.stable.size)
                q = result.q
            holds = max(np.mean(false), np.mean(null)) <= np.mean(bounds)
            table.add(method, units, q, _mean_se(false), float(np.mean(bounds)),
                      "yes" if holds else "NO",
                      float(np.mean(found)), float(np.mean(null)), float(np.median(times)))
    tables.append(table)
    scales = Table(f"Columns of two kinds, labels permuted (200 rows, 5 columns at mean 0 and "
                   f"195 at mean 500; FGM; {reps} seeds): every stable feature is false",
                   ["columns for the selection", "stable (mean)", "bound reported",
                    "the verdict says the bound does not hold"])
    for scale in ("sd", None):
        stable, bounds, said = [], [], 0
        for seed in range(reps):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = stability_selection("fgm", loud_and_quiet(seed), n_pairs=pairs,
                                             seed=seed, scale=scale)
            stable.append(result.stable.size)
            bounds.append(result.bound)
            said += "does not hold" in result.verdict()
        scales.add("standardised (default)" if scale else "as loaded", float(np.mean(stable)),
                   float(np.mean(bounds)), f"{said}/{reps}")
    tables.append(scales)


def real(args, tables):
    pairs = 8 if args.quick else 20
    table = Table(f"Real sets: stability selection at its defaults (PFER 1, cutoff 0.75, "
                  f"{pairs} pairs) against one fit on the same training rows",
                  ["set", "method", "q", "stable features", "bound reported",
                   "stable on permuted labels", "s per run", "s per fit", "run / fit",
                   "knockoffs (fdr 0.1)"])
    for name, methods in REAL.items():
        data = load(name)
        train = data.split(test_size=0.3, seed=0)
        for method in methods:
            cls = get_method(method)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                k_name = "k" if "k" in cls().get_params() else None
                cls(**({k_name: 10} if k_name else {})).fit(train.X, train.y)
                fit_s = time.perf_counter() - start
                start = time.perf_counter()
                result = stability_selection(method, data, n_pairs=pairs)
                run_s = time.perf_counter() - start
                null = permutation_check(result, data, 1).null_stable[-1]
                knock = knockoff_selection(method, data)
            knock_text = ("not used: " + knock.refused.split(":")[0] if knock.refused
                          else f"{knock.selected.size} selected")
            table.add(name, method, result.q, int(result.stable.size), float(result.bound),
                      int(null), run_s, fit_s, run_s / fit_s, knock_text)
    tables.append(table)


def _arguments(p):
    p.add_argument("--reps", type=int, default=20, help="seeds of the planted designs")
    p.add_argument("--pairs", type=int, default=10, help="complementary pairs per run "
                   "(planted designs; the real sets use 20)")


if __name__ == "__main__":
    run("error_control", __doc__, [("knockoffs", knockoffs), ("probes", probes),
                                   ("planted", planted), ("real", real)],
        add_arguments=_arguments)
