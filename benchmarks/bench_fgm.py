"""FGM against the ℓ1 peers on the paper's synthetic designs (Tan et al. Figs. 2–7).

Sections (``--only`` takes a comma list):
  small    4,096 × 4,096 Types I/II/III: accuracy and recovered true features at matched #features
           for FGM (squared hinge, logistic), ℓ1-SVM and ℓ1-LR (C bisected to FGM's count);
           fit times and ratios.
  unit     the physical unit: one Xᵀs pass, and FGM's fit time in passes.
  large    4,096 × 65,536 (Fig. 6): FGM vs ℓ1-SVM at the same #features.
  density  8,192 × 100,000 float32 at densities 0.005…1 (Fig. 7): best accuracy and time.
  text     news20.binary-sized sparse CSR (20,000 × 1,350,000): time and extra memory, B = 10.
  poly2    2,000 × 1,000 base features (≈500,000 pairs): time and the planted interaction.
  debias   Fig. 4: FGM vs FGM-retrained, ℓ1-SVM vs ℓ1-SVM-retrained.
  stopping the certified stop at default settings: FGM with one block against scikit-learn's
           ℓ2 SVM / logistic regression (coefficient error, time), and the default fit's time,
           APG steps and last certified gap on the 4,096 × 4,096 designs.

Run: ``.venv/bin/python benchmarks/bench_fgm.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import gc
import time
import warnings

import numpy as np
from _common import Table, current_rss_mb, median_time, run, xts_pass_time
from sklearn.svm import LinearSVC

from explorer import FGM
from explorer.data import make_fgm_linear, make_sparse_wide
from explorer.methods import L1SVM, L1LogReg
from explorer.metrics import recovery


def matched_l1(cls, X, y, k):
    """Bisect C to k features; return (estimator refitted once at that C, its fit time)."""
    probe = cls(k=k).fit(X, y)
    C = probe.C_
    t, est = median_time(lambda: cls(C=C).fit(X, y), 1)
    return est, t


def section_small(args, tables):
    n = 1024 if args.quick else 4096
    Bs = [2, 5, 10] if args.quick else [2, 4, 8, 16, 30]
    table = Table(f"FGM vs ℓ1 at matched #features, {n:,} × {n:,} (Fig. 2/3; test accuracy, "
                  "recovered true features of 400, one fit's time)",
                  ["type", "B", "#feat", "FGM-SH acc", "FGM-LR acc", "ℓ1-SVM acc", "ℓ1-LR acc",
                   "FGM-SH found", "ℓ1-SVM found", "FGM-SH s", "ℓ1-SVM s", "ℓ1-SVM/FGM time"])
    for weighting in ("I", "II", "III"):
        ds = make_fgm_linear(n, n, 400, weighting, n_test=n, seed=0)
        for B in Bs:
            t_sh, sh = median_time(lambda B=B, X=ds.X, y=ds.y: FGM(B=B).fit(X, y), args.repeats)
            lr = FGM(B=B, loss="logistic").fit(ds.X, ds.y)
            k = sh.n_selected_
            l1s, t_l1s = matched_l1(L1SVM, ds.X, ds.y, k)
            l1l, _ = matched_l1(L1LogReg, ds.X, ds.y, k)
            table.add(weighting, B, k, sh.score(ds.X_test, ds.y_test),
                      lr.score(ds.X_test, ds.y_test), l1s.score(ds.X_test, ds.y_test),
                      l1l.score(ds.X_test, ds.y_test),
                      recovery(sh.selected_features_, ds.truth)["found"],
                      recovery(l1s.selected_features_, ds.truth)["found"],
                      t_sh, t_l1s, t_l1s / t_sh)
        gc.collect()
    tables.append(table)


def section_unit(args, tables):
    n = 1024 if args.quick else 4096
    ds = make_fgm_linear(n, n, 400, "I", n_test=16, seed=0)
    unit = xts_pass_time(ds.X)
    table = Table(f"Physical unit on {n:,} × {n:,}: FGM time in Xᵀs passes",
                  ["B", "outer T", "scoring passes", "fit s", "pass s", "fit / pass",
                   "budget 3(T+1)", "APG steps", "master s (est.)"])
    for B in (5, 10, 20):
        t, est = median_time(lambda B=B: FGM(B=B).fit(ds.X, ds.y), args.repeats)
        T = est.n_outer_
        steps = sum(r.inner_steps for r in est.history_)
        table.add(B, T, est.n_passes_, t, unit, t / unit, 3 * (T + 1), steps,
                  max(0.0, t - est.n_passes_ * unit))
    tables.append(table)


def section_large(args, tables):
    n, m = (1024, 16384) if args.quick else (4096, 65536)
    ds = make_fgm_linear(n, m, 400, "I", n_test=n, seed=1)
    unit = xts_pass_time(ds.X)
    table = Table(f"Large: {n:,} × {m:,} Type I (Fig. 6)",
                  ["method", "#feat", "test acc", "found", "fit s", "ℓ1-SVM/FGM", "Xᵀs pass s"])
    for B in (5, 10):
        t, est = median_time(lambda B=B: FGM(B=B).fit(ds.X, ds.y), args.repeats)
        l1, t_l1 = matched_l1(L1SVM, ds.X, ds.y, est.n_selected_)
        table.add(f"FGM B={B}", est.n_selected_, est.score(ds.X_test, ds.y_test),
                  recovery(est.selected_features_, ds.truth)["found"], t, 1.0, unit)
        table.add("ℓ1-SVM (matched)", l1.n_selected_, l1.score(ds.X_test, ds.y_test),
                  recovery(l1.selected_features_, ds.truth)["found"], t_l1, t_l1 / t, unit)
    tables.append(table)


def section_density(args, tables):
    n, m, nt = (2048, 20000, 1024) if args.quick else (8192, 100000, 4096)
    table = Table(f"Density sweep, {n:,} × {m:,} float32 (Fig. 7): best test accuracy over "
                  "settings and the time of that fit",
                  ["density", "FGM best acc", "FGM s", "ℓ1-SVM best acc", "ℓ1-SVM s",
                   "ℓ1-SVM/FGM"])
    for density in (0.005, 0.01, 0.05, 0.1, 0.5, 1.0):
        ds = make_fgm_linear(n, m, 400, "I", n_test=nt, density=density, dtype=np.float32,
                             seed=2)
        best = (-1, 0.0)
        for B in (5, 10, 20):
            t, est = median_time(lambda B=B, X=ds.X, y=ds.y: FGM(B=B).fit(X, y), 1)
            best = max(best, (est.score(ds.X_test, ds.y_test), t))
        nnz = ds.X.nnz if hasattr(ds.X, "nnz") else ds.X.size
        if nnz <= 2.5e8:
            l1best = (-1, 0.0)
            from sklearn.svm import l1_min_c

            c0 = l1_min_c(ds.X, ds.y, loss="squared_hinge")
            for factor in (3, 10, 30):
                t, est = median_time(
                    lambda C=c0 * factor, X=ds.X, y=ds.y: L1SVM(C=C).fit(X, y), 1)
                l1best = max(l1best, (est.score(ds.X_test, ds.y_test), t))
            table.add(density, best[0], best[1], l1best[0], l1best[1], l1best[1] / best[1])
        else:
            table.add(density, best[0], best[1], float("nan"), float("nan"),
                      "ℓ1 not run: liblinear would copy ≈16 B per non-zero")
        gc.collect()
    tables.append(table)


def section_text(args, tables):
    n, m = (4000, 200_000) if args.quick else (20_000, 1_350_000)
    ds = make_sparse_wide(n, m, nnz_per_row=360, seed=0)
    X, y = ds.X, ds.y
    unit = xts_pass_time(X)
    gc.collect()
    before = current_rss_mb()
    start = time.perf_counter()
    est = FGM(B=10).fit(X, y)
    fit = time.perf_counter() - start
    after = current_rss_mb()
    table = Table(f"Sparse text scale: {n:,} × {m:,} CSR, {X.nnz / n:.0f} non-zeros per row",
                  ["B", "#feat", "train acc", "outer T", "fit s", "Xᵀs pass s",
                   "extra memory MiB (RSS after − before)", "X MiB"])
    table.add(10, est.n_selected_, est.score(X, y), est.n_outer_, fit, unit, after - before,
              (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20)
    tables.append(table)


def section_poly2(args, tables):
    n, m = (1000, 300) if args.quick else (2000, 1000)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, m))
    a, b = 13, 377 % m
    y = np.sign(X[:, a] * X[:, b] + 0.3 * X[:, 5] + 0.2 * rng.normal(size=n))
    start = time.perf_counter()
    est = FGM(B=5, feature_map="poly2", max_outer=5).fit(X, y)
    fit = time.perf_counter() - start
    names = [name for name, _ in est.generated_features_]
    table = Table(f"Degree-2 FGM on {n:,} × {m:,} base features "
                  f"({m + m * (m + 1) // 2:,} candidate columns)",
                  ["fit s", "outer T", "generated selected", "planted pair found", "top 5"])
    table.add(fit, est.n_outer_, len(names), f"x{a}·x{b}" in names, ", ".join(names[:5]))
    tables.append(table)


def section_debias(args, tables):
    n = 1024 if args.quick else 4096
    ds = make_fgm_linear(n, n, 400, "I", n_test=n, seed=0)
    table = Table(f"De-bias (Fig. 4), {n:,} × {n:,} Type I: test accuracy of each selection "
                  "before and after retraining a standard squared-hinge SVM (C = 10) on it",
                  ["B", "#feat", "FGM", "FGM retrained", "ℓ1-SVM", "ℓ1-SVM retrained"])

    def retrained(cols):
        svm = LinearSVC(C=5.0, dual=False, max_iter=5000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm.fit(ds.X[:, cols], ds.y)
        return svm.score(ds.X_test[:, cols], ds.y_test)

    for B in (2, 5, 10, 20):
        fgm = FGM(B=B).fit(ds.X, ds.y)
        k = fgm.n_selected_
        l1, _ = matched_l1(L1SVM, ds.X, ds.y, k)
        table.add(B, k, fgm.score(ds.X_test, ds.y_test), retrained(fgm.selected_features_),
                  l1.score(ds.X_test, ds.y_test), retrained(l1.selected_features_))
    tables.append(table)


def section_stopping(args, tables):
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression

    one = Table("One block at default settings vs scikit-learn (references solved to 1e-12)",
                ["data", "loss", "C", "rel. coef error", "FGM s", "sklearn (default tol) s"])
    rng = np.random.default_rng(0)
    for n, m in ((300, 40), (2000, 200)):
        X = rng.standard_normal((n, m))
        y = np.sign(X[:, :5] @ rng.standard_normal(5) + 0.5 * rng.standard_normal(n))
        for c in (0.1, 1.0):
            for loss in ("squared_hinge", "logistic"):
                # FGM's C·½Σξ² is LinearSVC's C/2; the logistic losses agree as written
                fgm = FGM(B=m, C=2 * c if loss == "squared_hinge" else c, loss=loss,
                          fit_intercept=False)
                peer = LinearSVC(C=c, fit_intercept=False, dual=False) \
                    if loss == "squared_hinge" else LogisticRegression(C=c, fit_intercept=False)
                ref = clone(peer).set_params(tol=1e-12, max_iter=100000)
                t, est = median_time(lambda f=fgm, X=X, y=y: clone(f).fit(X, y), args.repeats)
                t_peer, _ = median_time(lambda p=peer, X=X, y=y: clone(p).fit(X, y),
                                        args.repeats)
                w = ref.fit(X, y).coef_.ravel()
                one.add(f"{n}×{m}", loss, c,
                        np.linalg.norm(est.coef_ - w) / np.linalg.norm(w), t, t_peer)
    tables.append(one)
    n = 1024 if args.quick else 4096
    table = Table(f"Default fit, {n:,} × {n:,}: time, APG steps, last certified gap",
                  ["type", "B", "#feat", "test acc", "fit s", "APG steps", "last gap"])
    for weighting in ("I", "II", "III"):
        ds = make_fgm_linear(n, n, 400, weighting, n_test=n, seed=0)
        for B in (4, 16, 30):
            t, est = median_time(lambda B=B, ds=ds: FGM(B=B).fit(ds.X, ds.y), args.repeats)
            table.add(weighting, B, est.n_selected_, est.score(ds.X_test, ds.y_test), t,
                      sum(r.inner_steps for r in est.history_), est.history_[-1].inner_measure)
    tables.append(table)


def main():
    run("fgm", __doc__, [("unit", section_unit), ("small", section_small),
                         ("debias", section_debias), ("poly2", section_poly2),
                         ("large", section_large), ("text", section_text),
                         ("density", section_density), ("stopping", section_stopping)])


if __name__ == "__main__":
    main()
