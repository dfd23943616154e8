"""FGM against best-subset selection (abess) at the same number of features k.

Sections (``--only`` takes a comma list):
  synthetic  FGM's designs (Tan et al. Figs. 2/6): 4,096 × 4,096 Types I/II/III at B = 4/8/16
             (k ≈ 60/120/240) and 4,096 × 65,536 Type I float32 at B = 10 (k ≈ 150): test
             accuracy, population accuracy (exact for the design: a 4,096-point test set
             measures accuracy to ±0.7 point, the size of the differences at stake), true
             features found (of 400) and fit time for FGM (paper), FGM (refine="auto"),
             abess and ℓ1-SVM (C bisected to k); medians over ``--seeds`` (default 5, from
             ``--first-seed``), and per seed refine against abess (ahead / level / behind).
             ``--designs`` runs some rows only: ``I:16,II:4,III:8`` (type:B), ``wide``.
  real       digits 9-vs-rest (64 pixels) and the sparse text-like set (5 % positives) at
             k ∈ {10, 20, 50}: accuracy and F1 for the same four methods.
  dense      one fit of FGM refine against abess at the same k on the small dense real sets
             (pd-speech, hepatic-injury as any injury against none, breast cancer;
             k ∈ {10, 20}, C = 10, all rows): medians of ``--repeats`` alternated fits,
             abess's time / refine's (above 1 refine is faster); the accuracy of both
             fitted on 70 % of the rows.
  rounds     what FGM refine's exchange rounds (:func:`explorer.engines.fgm.refine.splice`)
             cost and give on the synthetic designs: refine with its rounds and without
             them (the path grown, eliminated to k and refit only), abess at the same k;
             time and population accuracy per seed (``--seeds``, ``--designs``; default the
             B = 8 and 16 rows).
  fsa        FSA against abess on FSA's simulations (Barbu et al. Table 2, N ∈ {300, 1,000},
             M = 1,000, k = 10): all found %, PCD, AUC and time over ``--runs`` seeds.

k for abess and ℓ1-SVM is FGM(refine="auto")'s number of features (the paper's FGM at the same
B selects the same or nearly the same number; it is shown).

Run: ``.venv/bin/python benchmarks/bench_best_subset.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
from _common import Table, add_recovery
from _common import run as run_benchmark

from explorer import FGM, FSA
from explorer.data import make, make_fgm_linear, make_fsa_correlated
from explorer.engines.fgm import refine as refine_engine
from explorer.methods import L1SVM, Abess
from explorer.metrics import f1, gaussian_sign_accuracy, recovery


def _timed(factory, X, y):
    start = time.perf_counter()
    est = factory().fit(X, y)
    return est, time.perf_counter() - start


def _four(X, y, B, k=None):
    """FGM (paper), FGM (refine), abess and ℓ1-SVM at the refined FGM's k (or the given k,
    which the refinement then targets)."""
    out = {}
    out["FGM"] = _timed(lambda: FGM(B=B), X, y)
    out["FGM refine"] = _timed(lambda: FGM(B=B, refine="auto", k=k), X, y)
    k = out["FGM refine"][0].n_selected_
    out["abess"] = _timed(lambda: Abess(k=k), X, y)
    C = L1SVM(k=k).fit(X, y).C_  # bisection to k, then one timed fit at that C
    out["ℓ1-SVM"] = _timed(lambda: L1SVM(C=C), X, y)
    return k, out


def _population(est, w) -> float:
    """The model's accuracy on the design's whole population (labels −1/+1, the decision
    function's positive side is classes_[1] = +1)."""
    if list(est.classes_) != [-1, 1]:
        raise ValueError(f"expected classes [-1, 1], got {list(est.classes_)}")
    return gaussian_sign_accuracy(est.coef_, float(np.ravel(est.intercept_)[0]), w)


def _designs(args, n: int):
    """(weighting, n_features, B) of the rows asked for by ``--designs`` (all by default)."""
    wide = ("I", 4 * n if args.quick else 65536, 10)
    everything = {f"{w}:{B}": (w, n, B) for w in ("I", "II", "III") for B in (4, 8, 16)}
    everything["wide"] = wide
    if not args.designs:
        return list(everything.values())
    asked = [d.strip() for d in args.designs.split(",") if d.strip()]
    unknown = [d for d in asked if d not in everything]
    if unknown or not asked:
        raise SystemExit(f"--designs: unknown {unknown or args.designs!r}; choose from "
                         f"{', '.join(everything)}")
    return [everything[d] for d in asked]


def _paired(rows, key: str, digits: int = 4) -> str:
    """Seeds where refine is ahead of / level with / behind abess on ``key``."""
    diffs = [round(r[f"FGM refine {key}"] - r[f"abess {key}"], digits) for r in rows]
    return f"{sum(d > 0 for d in diffs)}/{sum(d == 0 for d in diffs)}/" \
        f"{sum(d < 0 for d in diffs)}"


def section_synthetic(args, tables):
    n = 1024 if args.quick else 4096
    designs = _designs(args, n)
    seeds = 1 if args.quick else args.seeds
    if seeds < 1 or args.first_seed < 0:
        raise SystemExit("--seeds must be ≥ 1 and --first-seed ≥ 0")
    first = args.first_seed
    table = Table(f"Best subset at matched k (medians over {seeds} seeds"
                  + (f" from seed {first}" if first else "") + "; test accuracy on "
                  f"{n:,} test points, the population accuracy of the same model (exact, "
                  "for the design's x ~ N(0, I), y = sign(xᵀw)), true features found of 400, "
                  "fit seconds)",
                  ["design", "B", "k (paper k)", "FGM acc", "FGM refine acc", "abess acc",
                   "ℓ1-SVM acc", "population acc FGM / refine / abess / ℓ1-SVM",
                   "found FGM / refine / abess", "FGM s", "refine s", "abess s",
                   "abess / refine time",
                   "refine vs abess, seeds ahead/level/behind: test / population / found"])
    for weighting, m, B in designs:
        rows = []
        for seed in range(first, first + seeds):
            dtype = np.float32 if m > 8192 else np.float64
            ds = make_fgm_linear(n, m, 400, weighting, n_test=n, dtype=dtype, seed=seed)
            k, out = _four(ds.X, ds.y, B)
            rows.append({
                "k": k, "paper_k": out["FGM"][0].n_selected_,
                **{f"{name} acc": est.score(ds.X_test, ds.y_test)
                   for name, (est, _) in out.items()},
                **{f"{name} population": _population(est, ds.meta["w"])
                   for name, (est, _) in out.items()},
                **{f"{name} found": recovery(est.selected_features_, ds.truth)["found"]
                   for name, (est, _) in out.items()},
                **{f"{name} s": t for name, (_, t) in out.items()},
            })
            print(weighting, m, B, seed, {key: round(v, 3) for key, v in rows[-1].items()},
                  flush=True)

        def med(key, rows=rows):
            return statistics.median(r[key] for r in rows)

        table.add(f"{n:,} × {m:,} {weighting}", B, f"{int(med('k'))} ({int(med('paper_k'))})",
                  med("FGM acc"), med("FGM refine acc"), med("abess acc"), med("ℓ1-SVM acc"),
                  " / ".join(f"{med(name + ' population'):.4f}"
                             for name in ("FGM", "FGM refine", "abess", "ℓ1-SVM")),
                  f"{int(med('FGM found'))} / {int(med('FGM refine found'))} / "
                  f"{int(med('abess found'))}",
                  med("FGM s"), med("FGM refine s"), med("abess s"),
                  med("abess s") / med("FGM refine s"),
                  " / ".join(_paired(rows, key) for key in ("acc", "population", "found")))
        del ds
    tables.append(table)


def section_real(args, tables):
    table = Table("Real data at k features (test accuracy / F1 of the positive class; the "
                  "paper's FGM at B = k/5 with its own count in parentheses; FGM refine with "
                  "B = k/5 and k)",
                  ["data", "k", "FGM (paper)", "FGM refine", "abess", "ℓ1-SVM", "refine s",
                   "abess s"])
    sets = [("digits 9-vs-rest", make("digits-9vr").split(test_size=0.3, seed=0)),
            ("text-like (sparse)", make("text-like").split(test_size=0.3, seed=0))]
    for name, ds in sets:
        for target in (10, 20, 50):
            B = max(1, target // 5)
            k, out = _four(ds.X, ds.y, B, k=target)

            def cell(est, ds=ds):
                return (f"{est.score(ds.X_test, ds.y_test):.3f} / "
                        f"{f1(ds.y_test, est.predict(ds.X_test)):.3f}")

            paper = out["FGM"][0]
            table.add(name, k, f"{cell(paper)} ({paper.n_selected_})",
                      *(cell(out[key][0]) for key in ("FGM refine", "abess", "ℓ1-SVM")),
                      out["FGM refine"][1], out["abess"][1])
            print(name, target, k, flush=True)
    tables.append(table)


def section_dense(args, tables):
    table = Table("One fit on a small dense real set, FGM refine (C = 10) against abess at the "
                  f"same k: medians of {args.repeats} alternated fits on all rows; accuracy "
                  "of one fit on 70 % of the rows, tested on the rest",
                  ["data", "n × p", "k", "refine ms", "abess ms", "abess / refine time",
                   "refine acc", "abess acc"])
    for name in ("pd-speech", "hepatic-injury", "breast-cancer"):
        ds = make(name).split(test_size=0.3, seed=0)
        if name == "hepatic-injury":  # abess is binary: any injury against none
            ds = replace(ds, y=np.where(ds.y == "none", "none", "injury"),
                         y_test=np.where(ds.y_test == "none", "none", "injury"))
        X, y = np.vstack([ds.X, ds.X_test]), np.concatenate([ds.y, ds.y_test])
        for k in (10, 20):
            fits = {"refine": lambda k=k: FGM(k=k, C=10, refine="auto"),
                    "abess": lambda k=k: Abess(k=k)}
            times = {key: [] for key in fits}
            for _ in range(args.repeats + 1):  # the first round warms up
                for key, factory in fits.items():
                    times[key].append(_timed(factory, X, y)[1])
            med = {key: 1e3 * statistics.median(t[1:]) for key, t in times.items()}
            acc = {key: factory().fit(ds.X, ds.y).score(ds.X_test, ds.y_test)
                   for key, factory in fits.items()}
            table.add(name, f"{X.shape[0]} × {X.shape[1]}", k, med["refine"], med["abess"],
                      med["abess"] / med["refine"], acc["refine"], acc["abess"])
            print(name, k, flush=True)
    tables.append(table)


@contextmanager
def _no_exchange():
    """FGM refine without its exchange rounds (``splice``'s ``max_rounds`` at 0)."""
    defaults = refine_engine.splice.__kwdefaults__
    saved = defaults["max_rounds"]
    defaults["max_rounds"] = 0
    try:
        yield
    finally:
        defaults["max_rounds"] = saved


def section_rounds(args, tables):
    n = 1024 if args.quick else 4096
    if not args.designs:
        args.designs = "I:8,II:8,III:8,I:16,II:16,III:16"
    designs = _designs(args, n)
    seeds = 1 if args.quick else args.seeds
    table = Table("FGM refine's exchange rounds on the synthetic designs: refine with them and "
                  "without them (path grown to 1.5·k, eliminated to k, refit), abess at the "
                  "same k; per seed: fit seconds and population accuracy (exact for the "
                  "design)",
                  ["design", "B", "seed", "k", "refine s", "without rounds s", "abess s",
                   "abess / refine", "abess / without", "population refine / without / abess",
                   "rounds accepted"])
    for weighting, m, B in designs:
        for seed in range(args.first_seed, args.first_seed + seeds):
            ds = make_fgm_linear(n, m, 400, weighting, n_test=16,
                                 dtype=np.float32 if m > 8192 else np.float64, seed=seed)
            full, t_full = _timed(lambda B=B: FGM(B=B, refine="auto"), ds.X, ds.y)
            with _no_exchange():
                bare, t_bare = _timed(lambda B=B: FGM(B=B, refine="auto"), ds.X, ds.y)
            k = full.n_selected_
            peer, t_peer = _timed(lambda k=k: Abess(k=k), ds.X, ds.y)
            w = ds.meta["w"]
            table.add(f"{n:,} × {m:,} {weighting}", B, seed, k, t_full, t_bare, t_peer,
                      t_peer / t_full, t_peer / t_bare,
                      " / ".join(f"{_population(e, w):.4f}" for e in (full, bare, peer)),
                      [r.info["splice_rounds"] for r in full.history_
                       if "splice_rounds" in r.info][-1])
            print(weighting, B, seed, flush=True)
    tables.append(table)


def section_fsa(args, tables):
    runs = 5 if args.quick else args.runs
    table = Table(f"FSA vs abess on FSA's simulations (M = 1,000, δ = 0.9, k = 10, {runs} runs; "
                  "DR: all 10 true features found)",
                  ["N", "method", "DR %", "PCD %", "test AUC", "median s"])
    for N in (300, 1000):
        stats = {name: {"dr": [], "pcd": [], "auc": [], "t": []} for name in ("FSA", "abess")}
        for run in range(runs):
            ds = make_fsa_correlated(N, 1000, k_star=10, n_test=2000, seed=1000 * run + N + 10)
            for name, factory in (("FSA", lambda: FSA(k=10)), ("abess", lambda: Abess(k=10))):
                est, t = _timed(factory, ds.X, ds.y)
                add_recovery(stats[name], est, ds, t)
        for name, s in stats.items():
            table.add(N, name, 100 * np.mean(s["dr"]), np.mean(s["pcd"]), np.mean(s["auc"]),
                      statistics.median(s["t"]))
    tables.append(table)


def main():
    warm = np.random.default_rng(0).normal(size=(40, 6)), np.arange(40) % 2  # JIT warm-up
    FGM(B=2).fit(*warm)
    FGM(B=2, refine="auto", k=2).fit(*warm)
    FSA(k=2).fit(*warm)

    def more(p):
        p.add_argument("--seeds", type=int, default=5, help="seeds per synthetic row")
        p.add_argument("--first-seed", type=int, default=0, help="first synthetic seed")
        p.add_argument("--designs", default="",
                       help="synthetic rows to run, e.g. I:16,II:4,III:8 or wide (all)")
        p.add_argument("--runs", type=int, default=20, help="runs per FSA row")

    run_benchmark("best_subset", __doc__, [("synthetic", section_synthetic),
                                           ("real", section_real), ("dense", section_dense),
                                           ("rounds", section_rounds), ("fsa", section_fsa)],
                  more)


if __name__ == "__main__":
    main()
