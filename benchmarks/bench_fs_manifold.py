"""FS-Manifold on the paper's digit pairs, with the controls that separate a manifold effect
from a rescaled C (Xu et al., Figs. 2–4).

Sections (``--only``):
  digits  pairs 2v3, 3v8, 4v7 (all ≈360 images of each pair), ``--labels`` labels (default 6 and
          20; the paper also has 10 and 40), ``--ms`` selected features (default 10; the paper also
          has 20), ``--trials`` random labelings (default 6), transductive (test = the unlabeled
          rows) and semi-supervised (half the unlabeled rows are new test rows). Test accuracy of a
          linear SVM on the m selected features for: FS-Manifold τ = 0.5 (unnormalised Laplacian, ρ
          = 10, the paper's setting), τ = 0.5 with the normalised Laplacian and ρ = "auto", τ =
          "auto" (CV), the supervised τ = 0, the control τ = 0 with C·(1−τ)², Fisher, and ℓ1-SVM (C
          bisected to m non-zeros; when no C reaches m, the free slots are filled by Fisher score).
          Paired differences against τ = 0 with Wilcoxon p-values. The pixels are fitted raw,
          as in the paper (``feature_scaling=None``; the default "auto" gives pixels unit RMS,
          which costs 0.6–1.0 points of test accuracy on these pairs at m = 10).
  scale   n = 2,000, d = 10,000 sparse text-like: time and peak memory (a d × d float64 matrix
          alone would be 763 MiB).
  rows    many unlabeled rows: FS-Manifold's whole fit (graph, kernel, level method, final SVM;
          300 labeled rows, m = 20, the defaults) on the catalogue's deformed digits (28 × 28,
          d = 784 dense) at n = 1,000 … 100,000 rows, and on sparse text-like rows (d = 10,000,
          41 words a row) at 100,000, each in a fresh process: seconds, when the graph was
          done and when the first record came (graph and kernel), the peak resident memory
          of the process (the data included), the routes that ran and the graph's estimated
          recall. The n × n route (the kernel
          FS-Manifold had) where it can run (n ≤ 4,000). A fresh process includes
          pynndescent's compilation (≈25 s dense, ≈16 s sparse; once per process).
  unlabeled  does the unlabeled data help on real data? Deformed digits 3 v 8, 20,000 rows
          with ``--labels`` labels (default 20 and 100), test rows from held-out originals:
          FS-Manifold given the unlabeled rows against the same method given only the labeled
          rows, ``--trials`` draws; mean test accuracy, the paired difference with its 95 %
          interval (t) and the Wilcoxon p-value.
  cg      why no route solves with Z's action: conjugate gradients on (Z + εI)W = X_lᵀ (300
          labeled rows, ε the default ridge, Jacobi-preconditioned and plain), the only
          product being Xᵀ(𝓛(XV)), against the dense route's H, on fine-foods (4,000 × 4,896
          tf-idf), deformed digits (10,000 × 784) and text-like rows (10,000 × 3,000): the
          relative error of H after 50 … ``--cg-iterations`` iterations and the seconds taken.

Run: ``.venv/bin/python benchmarks/bench_fs_manifold.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import time
import tracemalloc
import warnings

import numpy as np
from _common import Table, run
from scipy.stats import wilcoxon
from sklearn.svm import SVC

from explorer import FSManifold
from explorer.data import make, make_semi_supervised, make_text_like
from explorer.methods import L1SVM
from explorer.methods.baselines import fisher_scores


def _svm_accuracy(ds, cols):
    svm = SVC(kernel="linear", C=1.0).fit(ds.X[:, cols], ds.y)
    return float(np.mean(svm.predict(ds.X_test[:, cols]) == ds.y_test))


def _l1_selection(ds, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = L1SVM(k=m).fit(ds.X, ds.y)
    chosen = list(est.selected_features_)
    if len(chosen) > m:
        order = np.argsort(-np.abs(est.coef_[chosen]))
        chosen = list(np.asarray(chosen)[order[:m]])
    if len(chosen) < m:  # fill-up rule: the best Fisher scores not yet chosen
        ranked = [j for j in np.argsort(-fisher_scores(ds.X, ds.y)) if j not in chosen]
        chosen += ranked[: m - len(chosen)]
    return np.sort(np.asarray(chosen, dtype=int))


def _methods():
    tau = 0.5
    return [
        ("FS-M τ=0.5 unnorm ρ=10", dict(tau=tau, rho=10.0)),
        ("FS-M τ=0.5 norm ρ=auto", dict(tau=tau, rho="auto", laplacian="normalized")),
        ("FS-M τ=auto norm ρ=auto", dict(tau="auto", rho="auto", laplacian="normalized")),
        ("τ=0 (supervised)", dict(tau=0.0)),
        ("τ=0, C·(1−τ)² control", dict(tau=0.0, C=(1 - tau) ** 2)),
    ]


def section_digits(args, tables):
    pairs = ["digits-2v3"] if args.quick else ["digits-2v3", "digits-3v8", "digits-4v7"]
    labels = [6, 20] if args.quick else [int(v) for v in args.labels.split(",")]
    ms = [10] if args.quick else [int(v) for v in args.ms.split(",")]
    trials = 3 if args.quick else args.trials
    settings = ["transductive"] if args.quick else ["transductive", "semi-supervised"]
    names = [n for n, _ in _methods()] + ["Fisher", "ℓ1-SVM (fill-up)"]
    table = Table(f"Digit pairs: mean test accuracy over {trials} trials "
                  "(paired difference to τ = 0 and Wilcoxon p in brackets)",
                  ["pair", "setting", "labels", "m", *names])
    ratio_rows = []
    for pair in pairs:
        base = make(pair)
        for setting in settings:
            for n_lab in labels:
                for m in ms:
                    accs = {n: [] for n in names}
                    ratios = {0: [], 1: []}
                    for trial in range(trials):
                        ds = make_semi_supervised(base, n_lab, setting=setting,
                                                  seed=1000 * trial + n_lab)
                        for i, (name, kw) in enumerate(_methods()):
                            est = FSManifold(m=m, feature_scaling=None, **kw).fit(
                                ds.X, ds.y, X_unlabeled=ds.X_unlabeled)
                            accs[name].append(est.score(ds.X_test, ds.y_test))
                            if i in ratios:
                                ratios[i].append(est.history_[0].info["manifold_ratio"])
                        top = np.sort(np.argsort(-fisher_scores(ds.X, ds.y), kind="stable")[:m])
                        accs["Fisher"].append(_svm_accuracy(ds, top))
                        accs["ℓ1-SVM (fill-up)"].append(_svm_accuracy(ds, _l1_selection(ds, m)))
                    ref = np.array(accs["τ=0 (supervised)"])
                    cells = []
                    for name in names:
                        a = np.array(accs[name])
                        diff = a - ref
                        if name == "τ=0 (supervised)" or np.allclose(diff, 0):
                            cells.append(f"{a.mean():.3f}")
                        else:
                            p = wilcoxon(a, ref).pvalue if trials >= 6 else float("nan")
                            cells.append(f"{a.mean():.3f} ({diff.mean():+.3f}, p={p:.2g})")
                    table.add(pair, setting, n_lab, m, *cells)
                    if setting == "transductive":
                        ratio_rows.append((pair, n_lab, m, float(np.mean(ratios[0])),
                                           float(np.mean(ratios[1]))))
    ratio_table = Table("Manifold/feature kernel trace ratio at the first iteration (mean)",
                        ["pair", "labels", "m", "τ=0.5 unnorm ρ=10", "τ=0.5 norm ρ=auto"])
    for row in ratio_rows:
        ratio_table.add(*row)
    tables.extend([table, ratio_table])


def section_scale(args, tables):
    n, d = (500, 3000) if args.quick else (2000, 10000)
    ds = make_text_like(n_samples=n, n_features=d, n_test=10, seed=0)
    labeled = np.concatenate([np.flatnonzero(ds.y == 1)[:25], np.flatnonzero(ds.y == -1)[:25]])
    rest = np.setdiff1d(np.arange(n), labeled)
    def fit():
        return FSManifold(m=50, tau=0.5, rho="auto", laplacian="normalized",
                          max_iter=50).fit(ds.X[labeled], ds.y[labeled], X_unlabeled=ds.X[rest])

    start = time.perf_counter()
    est = fit()
    elapsed = time.perf_counter() - start
    tracemalloc.start()  # a second, slower run only to measure the peak allocation
    fit()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    table = Table(f"Scale: {n:,} rows ({labeled.size} labeled) × {d:,} sparse features",
                  ["fit s", "level iterations", "peak traced MiB", "d × d float64 MiB",
                   "final gap"])
    table.add(elapsed, est.n_iter_, peak / 2**20, d * d * 8 / 2**20,
              est.history_[-1].info["gap"])
    tables.append(table)


ROW_FIT = """
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
from explorer import FSManifold
from explorer.data import make
n, kind, kernel = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if kind == "digits":
    ds = make("digits-deformed-semi", n_rows=n, n_labeled=300, n_test=1000)
    X, y, U = ds.X, ds.y, ds.X_unlabeled
else:
    ds = make("text-like", n_samples=n, n_features=10000)
    rng = np.random.default_rng(0)
    lab = np.concatenate([rng.choice(np.flatnonzero(ds.y == c), 150, replace=False)
                          for c in np.unique(ds.y)])
    rest = np.setdiff1d(np.arange(n), lab)
    X, y, U = ds.X[lab], ds.y[lab], ds.X[rest]
marks = {}
class Watch:
    def __call__(self, record):
        marks.setdefault("first record", time.perf_counter() - start)
    def progress(self, stage, fraction):
        marks[stage] = time.perf_counter() - start
start = time.perf_counter()
est = FSManifold(m=20, kernel=kernel).fit(X, y, X_unlabeled=U, callback=Watch())
total = time.perf_counter() - start
out = dict(total=total, graph=marks.get("finding the nearest neighbours", 0.0),
           first=marks.get("first record", 0.0),
           rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
           route=est.kernel_route_, graph_route=est.graph_route_, recall=est.graph_recall_,
           acc=float(est.score(ds.X_test, ds.y_test)) if kind == "digits" else float("nan"))
print(json.dumps(out))
"""


def section_rows(args, tables):
    import json
    import subprocess
    import sys

    sizes = [1000, 10000] if args.quick else [1000, 4000, 10000, 30000, 100000]
    runs = [(n, "digits", "auto") for n in sizes]
    runs += [(n, "digits", "gram") for n in sizes if n <= 4000]
    if not args.quick:
        runs.append((100000, "text", "auto"))
    table = Table("Many unlabeled rows: one fit at the defaults (300 labeled, m = 20), each "
                  "in a fresh process",
                  ["data", "rows", "kernel asked", "route", "graph", "recall", "fit s",
                   "graph done s", "first record s", "peak RSS GiB", "test acc"])
    for n, kind, kernel in runs:
        done = subprocess.run([sys.executable, "-c", ROW_FIT, str(n), kind, kernel],
                              capture_output=True, text=True, check=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        data = "deformed digits, d = 784 dense" if kind == "digits" else \
            "text-like, d = 10,000 sparse"
        table.add(data, n, kernel, r["route"], r["graph_route"], r["recall"], r["total"],
                  r["graph"], r["first"], r["rss"], r["acc"])
    tables.append(table)


def section_unlabeled(args, tables):
    from scipy.stats import t as student

    labels = [int(v) for v in args.labels_unlabeled.split(",")]
    trials = 3 if args.quick else args.trials
    n = 4000 if args.quick else 20000
    table = Table(f"Does the unlabeled data help? Deformed digits 3 v 8, {n:,} rows, m = 20, "
                  f"{trials} draws", ["labels", "with unlabeled", "labeled only",
                                      "difference [95 % CI]", "Wilcoxon p"])
    for count in labels:
        semi, alone = [], []
        for seed in range(trials):
            ds = make("digits-deformed-semi", n_rows=n, n_labeled=count, n_test=2000,
                      seed=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                semi.append(FSManifold(m=20).fit(ds.X, ds.y, X_unlabeled=ds.X_unlabeled)
                            .score(ds.X_test, ds.y_test))
                alone.append(FSManifold(m=20).fit(ds.X, ds.y).score(ds.X_test, ds.y_test))
        diff = np.asarray(semi) - np.asarray(alone)
        half = student.ppf(0.975, trials - 1) * diff.std(ddof=1) / np.sqrt(trials)
        p = wilcoxon(diff).pvalue if np.any(diff) else 1.0
        table.add(count, np.mean(semi), np.mean(alone),
                  f"{diff.mean():+.3f} [{diff.mean() - half:+.3f}, {diff.mean() + half:+.3f}]",
                  p)
    tables.append(table)


def _cg_errors(X, L, n_labeled, eps, H0, checkpoints, precondition):
    """Block conjugate gradients on (Z + εI)W = X_lᵀ, Z = Xᵀ𝓛X applied as three products;
    the relative error of the double-centred X_l W against ``H0`` at each checkpoint."""
    import scipy.sparse as sp

    from explorer.engines.fs_manifold.manifold import _centred

    Xl = X[:n_labeled]
    B = Xl.T.toarray() if sp.issparse(Xl) else np.array(Xl.T)
    LX = L @ X
    diag = np.asarray(sp.csr_matrix(X).multiply(LX).sum(0)).ravel() if sp.issparse(X) \
        else np.einsum("ij,ij->j", X, LX)
    M = 1.0 / (diag + eps) if precondition else np.ones(X.shape[1])
    W, R = np.zeros_like(B), B.copy()
    P = M[:, None] * R
    rz = np.einsum("ij,ij->j", R, P)
    out, start = [], time.perf_counter()
    for it in range(1, max(checkpoints) + 1):
        AP = X.T @ (L @ (X @ P)) + eps * P
        alpha = rz / np.einsum("ij,ij->j", P, AP)
        W += alpha * P
        R -= alpha * AP
        Y = M[:, None] * R
        rz_new = np.einsum("ij,ij->j", R, Y)
        P = Y + (rz_new / rz) * P
        rz = rz_new
        if it in checkpoints:
            H = _centred(np.asarray(Xl @ W))
            out.append((it, np.linalg.norm(H - H0) / np.linalg.norm(H0),
                        time.perf_counter() - start))
    return out


def section_cg(args, tables):
    from explorer.engines.fs_manifold import adjacency, laplacian, nearest_neighbours
    from explorer.engines.fs_manifold.manifold import manifold_kernel

    n = 3000 if args.quick else 10000
    cases = [("fine-foods tf-idf", make("fine-foods").X)]
    digits = make("digits-deformed-semi", n_rows=n, n_labeled=300, n_test=100)
    cases.append(("deformed digits", np.vstack([digits.X, digits.X_unlabeled])))
    cases.append(("text-like", make_text_like(n_samples=n, n_features=3000, n_test=10).X))
    last = 100 if args.quick else args.cg_iterations
    checkpoints = sorted({c for c in (50, 100, 200, 400, 800, 1600, last) if c <= last})
    table = Table("Conjugate gradients on Z's action against the dense route (300 labeled "
                  "rows, default ridge): relative error of H after so many iterations",
                  ["data", "rows × features", "dense route s", "preconditioner"]
                  + [f"{c} it" for c in checkpoints] + ["s for the last"])
    for name, X in cases:
        found = nearest_neighbours(X, 20, "cosine")
        L = laplacian(adjacency(found, "binary"), "unnormalized")
        start = time.perf_counter()
        mk = manifold_kernel(X, 300, L)
        dense = time.perf_counter() - start
        for precondition in (False, True):
            errs = _cg_errors(X, L, 300, mk.ridge, mk.H, checkpoints, precondition)
            table.add(name, f"{X.shape[0]:,} × {X.shape[1]:,}", dense,
                      "Jacobi" if precondition else "none",
                      *[f"{e:.1e}" for _, e, _ in errs], errs[-1][2])
    tables.append(table)


def _arguments(p):
    p.add_argument("--cg-iterations", type=int, default=1600)
    p.add_argument("--trials", type=int, default=6)
    p.add_argument("--labels", default="6,20", help="labelled-set sizes (paper: 6,10,20,40)")
    p.add_argument("--ms", default="10", help="numbers of selected features (paper: 10,20)")
    p.add_argument("--labels-unlabeled", default="20,100",
                   help="labelled-set sizes of the 'unlabeled' section")


def main():
    run("fs_manifold", __doc__, [("scale", section_scale), ("rows", section_rows),
                                 ("unlabeled", section_unlabeled), ("digits", section_digits),
                                 ("cg", section_cg)],
        _arguments)


if __name__ == "__main__":
    main()
