"""FSA against ℓ1 with C bisected to k features (Barbu et al., Tables 2–4, Figs. 1 and 6).

Sections (``--only`` takes a comma list):
  table2   classification, δ = 0.9, relevant 10, 20, …: all-found rate (DR), percent found
           (PCD), test AUC and median fit time over ``--runs`` seeds for FSA (logistic), FSV
           (Huber SVM), FSL (Lorenz) and ℓ1-logistic bisected to k then refitted.
  table3   the same with 10% random labels.
  table4   regression y = Σ x_{10i} + N(0,1), k = 30: RMSE, DR, PCD, time; FSA vs Lasso
           bisected to k then refitted.
  scale    §3.1.3 equally correlated float32, N = 50,000, M = 10,000, k = 100: time and data
           touched as a multiple of one pass.
  steps    per-step cost on N = M = 1,000, k = 10 (logistic): fit time in passes of Xᵀv
           (each fit timed beside its own unit),
           the schedule's arithmetic (2·Σ alive columns / M), compiled steps vs numpy steps.
  stability  Fig. 6: test AUC versus η, μ and N_iter on the N = M = 1,000 problem.
  nonlinear  relevant variables acting through |x|: piecewise-linear FSA versus linear FSA.
  interactions  the catalogue's planted pairwise products (5 pairs + main effects among 500
           variables, 2,000 rows, k = 10, ``--seeds`` draws): variables found, test accuracy
           of FSA's own model (linear and piecewise-linear), of ``model="rbf_svm"`` (the
           kernel SVM refitted on FSA's selection) and of a random forest (500 trees) on the
           same selection; the refit's extra seconds.

Run: ``.venv/bin/python benchmarks/bench_fsa.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from _common import Table, add_recovery, in_passes, median_time, xts_pass_time
from _common import run as run_benchmark

from explorer import FSA
from explorer.data import make_fsa_correlated, make_fsa_equicorrelated, make_fsa_nonlinear
from explorer.methods import L1LogReg, LassoSelector
from explorer.metrics import auc, recovery, rmse


def _runs(args):
    return 5 if args.quick else args.runs


def _classification(args, tables, noise: float, title: str, methods):
    Ns = [300, 1000] if args.quick else [300, 1000, 3000, 10000]
    table = Table(title, ["N", "k", "method", "DR %", "PCD %", "test AUC", "median s",
                          "ℓ1/FSA time"])
    for N in Ns:
        for k in (10, 30):
            stats = {name: {"dr": [], "pcd": [], "auc": [], "t": []} for name, _ in methods}
            for run in range(_runs(args)):
                ds = make_fsa_correlated(N, 1000, k_star=k, label_noise=noise, n_test=2000,
                                         seed=1000 * run + N + k)
                for name, factory in methods:
                    start = time.perf_counter()
                    est = factory(k).fit(ds.X, ds.y)
                    add_recovery(stats[name], est, ds, time.perf_counter() - start)
            base = statistics.median(stats[methods[0][0]]["t"])
            for name, _ in methods:
                s = stats[name]
                t = statistics.median(s["t"])
                table.add(N, k, name, 100 * np.mean(s["dr"]), np.mean(s["pcd"]),
                          np.mean(s["auc"]), t, t / base)
    tables.append(table)


CLASSIFIERS = [
    ("FSA (logistic)", lambda k: FSA(k=k)),
    ("FSV (Huber SVM)", lambda k: FSA(k=k, loss="huber_svm")),
    ("FSL (Lorenz)", lambda k: FSA(k=k, loss="lorenz")),
    ("ℓ1-LR bisected+refit", lambda k: L1LogReg(k=k, refit=True, refit_C=10.0)),
]


def section_table2(args, tables):
    _classification(args, tables, 0.0,
                     "Table 2: classification, δ = 0.9, M = 1,000 "
                     f"({_runs(args)} runs per row; time includes the ℓ1 bisection)",
                     CLASSIFIERS)


def section_table3(args, tables):
    _classification(args, tables, 0.1,
                     f"Table 3: 10% random labels, M = 1,000 ({_runs(args)} runs per row)",
                     [m for m in CLASSIFIERS if "Lorenz" in m[0] or "logistic" in m[0]])


def section_table4(args, tables):
    Ns = [300, 1000] if args.quick else [300, 1000, 3000]
    table = Table(f"Table 4: regression y = Σ x_(10i) + N(0,1), M = 1,000, k = 30 "
                  f"({_runs(args)} runs per row)",
                  ["N", "method", "RMSE", "DR %", "PCD %", "median s"])
    for N in Ns:
        stats = {"FSA (squared)": [], "Lasso bisected+refit": []}
        for run in range(_runs(args)):
            ds = make_fsa_correlated(N, 1000, k_star=30, task="regression", n_test=2000,
                                     seed=7000 + 1000 * run + N)
            for name, est in (("FSA (squared)", FSA(k=30, loss="squared")),
                              ("Lasso bisected+refit", LassoSelector(k=30, refit=True))):
                start = time.perf_counter()
                est.fit(ds.X, ds.y)
                elapsed = time.perf_counter() - start
                rec = recovery(est.selected_features_, ds.truth)
                stats[name].append((rmse(ds.y_test, est.predict(ds.X_test)), rec["all_found"],
                                    rec["percent_found"], elapsed))
        for name, rows in stats.items():
            a = np.array(rows, dtype=float)
            table.add(N, name, a[:, 0].mean(), 100 * a[:, 1].mean(), a[:, 2].mean(),
                      float(np.median(a[:, 3])))
    tables.append(table)


def section_scale(args, tables):
    N, M, k = (10_000, 2_000, 20) if args.quick else (50_000, 10_000, 100)
    ds = make_fsa_equicorrelated(N, M, k_star=k, n_test=5000, seed=0)
    unit = xts_pass_time(ds.X, repeats=3)
    t, est = median_time(lambda: FSA(k=k, loss="lorenz").fit(ds.X, ds.y), 1)
    # every iteration reads the working matrix twice (outputs and gradient)
    touched = 2 * sum(r.info["work_columns"] for r in est.history_) / M
    table = Table(f"Scale (§3.1.3): equally correlated float32, {N:,} × {M:,}, k = {k}",
                  ["method", "fit s", "one pass s", "data touched (passes)", "PCD %",
                   "test AUC"])
    rec = recovery(est.selected_features_, ds.truth)
    table.add("FSL (Lorenz)", t, unit, touched, rec["percent_found"],
              auc(ds.y_test, est.decision_function(ds.X_test)))
    tables.append(table)


def section_stability(args, tables):
    runs = 3 if args.quick else 10
    grids = {"eta": [0.5, 2, 5, 20, 50, 100], "mu": [1, 10, 100, 300, 1000],
             "n_iter": [50, 100, 200, 500, 1000]}
    table = Table(f"Stability (Fig. 6): mean test AUC over {runs} runs, N = M = 1,000, k = 10 "
                  "(one knob moved, the others at the paper's defaults)",
                  ["knob", "value", "test AUC", "PCD %"])
    data = [make_fsa_correlated(1000, 1000, k_star=10, n_test=2000, seed=500 + r)
            for r in range(runs)]
    for knob, values in grids.items():
        for value in values:
            aucs, pcds = [], []
            for ds in data:
                est = FSA(k=10, **{knob: value}).fit(ds.X, ds.y)
                aucs.append(auc(ds.y_test, est.decision_function(ds.X_test)))
                pcds.append(recovery(est.selected_features_, ds.truth)["percent_found"])
            table.add(knob, value, np.mean(aucs), np.mean(pcds))
    tables.append(table)


def section_nonlinear(args, tables):
    runs = 3 if args.quick else 10
    table = Table(f"Nonlinear: relevant variables act through |x| (M = 200, k = 5, {runs} runs)",
                  ["method", "PCD %", "DR %", "test AUC", "median s"])
    for name, factory in (("FSA linear", lambda: FSA(k=5)),
                          ("FSA piecewise-linear", lambda: FSA(k=5, basis="piecewise_linear"))):
        rows = []
        for r in range(runs):
            ds = make_fsa_nonlinear(1000, 200, k_star=5, n_test=2000, seed=r)
            start = time.perf_counter()
            est = factory().fit(ds.X, ds.y)
            elapsed = time.perf_counter() - start
            rec = recovery(est.selected_features_, ds.truth)
            rows.append((rec["percent_found"], rec["all_found"],
                         auc(ds.y_test, est.decision_function(ds.X_test)), elapsed))
        a = np.array(rows, dtype=float)
        table.add(name, a[:, 0].mean(), 100 * a[:, 1].mean(), a[:, 2].mean(),
                  float(np.median(a[:, 3])))
    tables.append(table)


def section_interactions(args, tables):
    from sklearn.ensemble import RandomForestClassifier

    from explorer.data import make

    seeds = 2 if args.quick else args.seeds
    table = Table(f"Planted interactions (M = 500, 10 relevant in 5 pairs, k = 10, {seeds} "
                  "draws): test accuracy on FSA's selection",
                  ["basis", "found of 10", "FSA's model", "model='rbf_svm'",
                   "random forest", "rbf_svm − forest", "refit s"])
    for basis in (None, "piecewise_linear"):
        found, own, svm, forest, extra = [], [], [], [], []
        for seed in range(seeds):
            ds = make("interactions", seed=seed)
            est = FSA(k=10, basis=basis).fit(ds.X, ds.y)
            start = time.perf_counter()
            refit = FSA(k=10, basis=basis, model="rbf_svm").fit(ds.X, ds.y)
            extra.append(time.perf_counter() - start - est.fit_time_)
            cols = est.selected_features_
            rf = RandomForestClassifier(500, random_state=0, n_jobs=-1)
            found.append(np.isin(cols, ds.truth).sum())
            own.append(est.score(ds.X_test, ds.y_test))
            svm.append(refit.score(ds.X_test, ds.y_test))
            forest.append(rf.fit(ds.X[:, cols], ds.y).score(ds.X_test[:, cols], ds.y_test))
        diff = np.subtract(svm, forest)
        table.add(basis or "linear", np.mean(found), np.mean(own), np.mean(svm),
                  np.mean(forest), f"{diff.mean():+.3f} ({diff.min():+.3f} … {diff.max():+.3f})",
                  float(np.median(extra)))
    tables.append(table)


def section_steps(args, tables):
    import explorer.engines.fsa.annealing as annealing_module

    ds = make_fsa_correlated(1000, 1000, 10, seed=0)
    table = Table("Per-step cost, N = M = 1,000, k = 10, logistic, 500 iterations (medians of "
                  "15 rounds, each timing 21 passes of Xᵀv then one fit: the fit in passes is "
                  "the median of the rounds' ratios)",
                  ["path", "fit ms", "one pass ms", "fit in passes", "schedule passes"])
    default = annealing_module.COMPILED_CELLS

    def fit():
        return FSA(k=10).fit(ds.X, ds.y)

    def fit_and_read():  # the 500 records built (a fit without a callback defers them)
        est = fit()
        assert len(est.history_) == est.n_iter_
        return est

    def fit_streamed():  # the app's case: every record handed to a callback as it is made
        return FSA(k=10).fit(ds.X, ds.y, callback=lambda record: None)

    for name, cells, fn in (("compiled steps (default)", default, fit),
                            ("compiled steps, records read", default, fit_and_read),
                            ("compiled steps, records to a callback", default, fit_streamed),
                            ("numpy steps", 0, fit)):
        annealing_module.COMPILED_CELLS = cells
        try:
            t, unit, ratio, est = in_passes(fn, ds.X, 15)
        finally:
            annealing_module.COMPILED_CELLS = default
        # two products per step over the columns alive before it (the kernel skips the dead)
        touched = 2 * sum(r.info["before"] for r in est.history_) / 1000
        table.add(name, 1e3 * t, 1e3 * unit, ratio, touched)
    tables.append(table)


def main():
    FSA(k=2).fit(np.random.default_rng(0).normal(size=(20, 5)), np.arange(20) % 2)  # JIT warm
    run_benchmark("fsa", __doc__, [("table2", section_table2), ("table3", section_table3),
                         ("table4", section_table4), ("scale", section_scale),
                         ("steps", section_steps), ("stability", section_stability),
                         ("nonlinear", section_nonlinear),
                         ("interactions", section_interactions)], _arguments)


def _arguments(p):
    p.add_argument("--runs", type=int, default=100, help="seeds per table row")
    p.add_argument("--seeds", type=int, default=5, help="draws of the interactions section")


if __name__ == "__main__":
    main()
