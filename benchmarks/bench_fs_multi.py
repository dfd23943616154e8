"""FS-multi against FS-hamming, FGM and all-features models (Mao & Tsang, Table II / Fig. 3).

Sections (``--only``):
  curves    test F1, PRBEP and Rec@2p versus #selected on imbalanced problems — digits 9 vs rest
            (≈10% positives), a sparse text-like set (5% positives), and multi-class digits
            (macro averages) — for FS-F1, FS-PRBEP, FS-Rec, FS-hamming, FGM over a B grid, and
            the all-features model trained for each measure (FSMulti with B ≥ #features).
  search    time of the most-violated-labeling search: sorted O(n log n) versus Joachims'
            O(n_pos·n_neg) grid, n = 10³ … 10⁵.

Run: ``.venv/bin/python benchmarks/bench_fs_multi.py`` (``--quick`` for a smoke run; ``--data
digits9,text`` for some of the curves' data sets, saved as ``fs_multi-digits9+text.md``).
"""

from __future__ import annotations

import numpy as np
from _common import Table, median_time, run, timed_fit

from explorer import FGM, FSMulti
from explorer import metrics as M
from explorer.data import make
from explorer.optim.structured import most_violated, most_violated_grid


def _scores(est, X, y):
    s = est.decision_function(X)
    if np.ndim(s) == 2:
        classes = est.classes_
        return (M.macro_f1(y, est.predict(X)), M.macro_prbep(y, s, classes),
                M.macro_recall_at_k(y, s, classes))
    pos = est.classes_[1]
    return (M.f1(y, est.predict(X), pos_label=pos), M.prbep(y, s, pos_label=pos),
            M.recall_at_k(y, s, pos_label=pos))


DATA = ("digits9", "text", "digits10")


def _problems(quick, data=DATA):
    out = []
    if "digits9" in data:
        out.append(("digits 9-vs-rest", make("digits-9vr").split(test_size=0.3, seed=0)))
    if "text" in data:
        out.append(("text-like 5%", make("text-like", n_samples=1000 if quick else 2000,
                                          n_features=3000 if quick else 10000, seed=0)))
    if "digits10" in data and not quick:
        out.append(("digits 10-class (macro)", make("digits").split(test_size=0.3, seed=0)))
    return out


def _choose_C(ds, measure, B, quick):
    """C from {0.1n (the paper's), n, 10n, 100n} by the measure on a validation split of the
    training part."""
    from explorer.data import Dataset

    inner = Dataset(X=ds.X, y=ds.y, task=ds.task).split(test_size=0.3, seed=1)
    n = inner.n_samples
    best = (-1.0, None)
    for factor in ((0.1, 10) if quick else (0.1, 1, 10, 100)):
        est = FSMulti(B=B, C=factor * n, measure=measure, max_outer=6).fit(inner.X, inner.y)
        f1, prbep, rec = _scores(est, inner.X_test, inner.y_test)
        value = {"f1": f1, "hamming": f1, "prbep": prbep, "rec@k": rec}[measure]
        best = max(best, (value, factor), key=lambda t: t[0])
    return best[1]


def section_curves(args, tables):
    Bs = [2, 5, 10] if args.quick else [2, 5, 10, 20, 40]
    for name, ds in _problems(args.quick, args.data.split(",")):
        n = ds.n_samples
        methods = [("FS-F1", "f1"), ("FS-PRBEP", "prbep"), ("FS-Rec@2p", "rec@k"),
                   ("FS-hamming", "hamming")]
        factors = {measure: _choose_C(ds, measure, 10, args.quick) for _, measure in methods}
        chosen = ", ".join(f"{label} {factors[m]}·n" for label, m in methods)
        table = Table(f"{name}: test F1 / PRBEP / Rec@2p versus #selected ({n:,} training rows; "
                      f"C chosen on a validation split: {chosen}; FGM with C = 10)",
                      ["method", "B", "#feat", "F1", "PRBEP", "Rec@2p", "fit s"])
        for B in Bs:
            for label, measure in methods:
                C = factors[measure] * n
                t, est = timed_fit(FSMulti(B=B, C=C, measure=measure), ds.X, ds.y)
                table.add(label, B, est.n_selected_, *_scores(est, ds.X_test, ds.y_test), t)
            t, est = timed_fit(FGM(B=B), ds.X, ds.y)
            table.add("FGM", B, est.n_selected_, *_scores(est, ds.X_test, ds.y_test), t)
        m = ds.n_features
        for label, measure in methods:
            C = factors[measure] * n
            t, est = timed_fit(FSMulti(B=m, C=C, measure=measure, max_outer=1), ds.X, ds.y)
            table.add(f"all features, {label[3:]}", m, est.n_selected_,
                      *_scores(est, ds.X_test, ds.y_test), t)
        tables.append(table)


def section_search(args, tables):
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    table = Table("Most-violated labeling for F1 (5% positives): sorted search versus the "
                  "contingency-table grid", ["n", "sorted ms", "grid ms", "grid / sorted",
                                            "same labeling"])
    rng = np.random.default_rng(0)
    for n in sizes:
        y = np.where(rng.random(n) < 0.05, 1.0, -1.0)
        f = rng.normal(size=n) + y
        t_sorted, a = median_time(lambda y=y, f=f: most_violated(y, f, "f1"), 5)
        t_grid, b = median_time(lambda y=y, f=f: most_violated_grid(y, f, "f1"),
                                1 if n > 10_000 else 3)
        same = bool(np.array_equal(a[0], b[0]))
        table.add(n, 1e3 * t_sorted, 1e3 * t_grid, t_grid / t_sorted, same)
    tables.append(table)


def _data_option(p):
    p.add_argument("--data", default=",".join(DATA),
                   help=f"comma-separated data sets of the curves ({', '.join(DATA)})")


def main():
    import sys

    data = next((a.split("=", 1)[1] if "=" in a else sys.argv[i + 2]
                 for i, a in enumerate(sys.argv[1:]) if a.startswith("--data")), None)
    unknown = set((data or "").split(",")) - set(DATA) - {""}
    if unknown:
        raise SystemExit(f"--data: unknown data sets {sorted(unknown)}; known: {DATA}")
    name = "fs_multi" if data is None else "fs_multi-" + data.replace(",", "+")
    run(name, __doc__, [("search", section_search), ("curves", section_curves)],
        add_arguments=_data_option)


if __name__ == "__main__":
    main()
