"""The speed guard: every method on its paper's design, a real sparse set and a small dense
set, its fit timed in passes of Xᵀv over the same X in the same process (each round times a
block of 21 passes, then one fit; the fastest fit over the fastest pass), against the
budgets checked in beside this script (``budgets.json``, section ``"time"``). Prints one row
per method and design and exits non-zero naming every method over its budget, so that a
change that makes a method much slower cannot land unseen: the budgets sit 1.6× above the
larger of two runs measured when they were set, so a method made 2× slower fails, and the
±30 % a 2-core host's timings wander does not. ``--slow-down METHOD`` fits that method twice
per timed fit, to see the guard fail.

The designs are the benchmarks' own, at sizes that keep the run under five minutes on 2
cores: FGM's Type I (2,048 × 8,192, B = 10), FSA's Table 2 (N = M = 1,000, k = 10), FS-multi
on the sparse text-like set (F1, B = 5, C = 10·n), GrFL on the high-dimensional XOR,
FS-Manifold on ten labelled digits with the rest unlabelled; then fine-foods (tf-idf words,
sparse) and pd-speech (252 × 751 dense), every method at 10 features (FS-Manifold: not on the
4,000-row text, its graph and kernels are n × n). The pass counts each method keeps of
itself (``n_passes_``) are held to their budgets by ``tests/test_budgets.py``.

Run: ``make bench-guard`` (``.venv/bin/python benchmarks/bench_guard.py``; ``--update``
rewrites the time budgets at 1.6× the times measured, ``--only`` takes method names).
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import RESULTS, Table, save
from _common import parser as common_parser

from explorer import FGM, FSA, FSManifold, FSMulti, GrFL, load
from explorer.data import make
from explorer.kernels import xts

BUDGETS = Path(__file__).resolve().parent / "budgets.json"
MARGIN = 1.6  # budget = MARGIN × the time measured when it was set


def _designs():
    """(method, design label, estimator factory, data loader) of every guarded fit."""
    def fgm_design():
        return make("fgm-type1", n_samples=2048, n_features=8192, n_test=50, seed=0)

    def foods():
        return load("fine-foods")

    def speech():
        data = load("pd-speech")
        return data

    def text():
        return make("text-like", seed=0)

    def fsa_design():
        return make("fsa-correlated", n_samples=1000, n_features=1000, k_star=10, n_test=50,
                    seed=0)

    def xor():
        return make("xor", seed=0)

    def semi():
        return load("digits-3v8-semi")

    rows = []
    for name, factory in (("fgm", lambda n: FGM(B=10)),
                          ("fgm refine", lambda n: FGM(k=10, refine="auto"))):
        rows.append((name, "paper's Type I, 2,048 × 8,192", factory, fgm_design))
        rows.append((name, "fine-foods", factory, foods))
        rows.append((name, "pd-speech", factory, speech))
    rows.append(("fsa", "Table 2, 1,000 × 1,000", lambda n: FSA(k=10), fsa_design))
    rows.append(("fsa", "fine-foods", lambda n: FSA(k=10), foods))
    rows.append(("fsa", "pd-speech", lambda n: FSA(k=10), speech))
    multi = lambda n: FSMulti(B=5, C=10.0 * n, measure="f1")  # noqa: E731
    rows.append(("fs-multi", "text-like 2,000 × 10,000", multi, text))
    rows.append(("fs-multi", "fine-foods", multi, foods))
    rows.append(("fs-multi", "pd-speech", multi, speech))
    rows.append(("grfl", "XOR 1,000 × 20", lambda n: GrFL(max_features=20), xor))
    rows.append(("grfl", "fine-foods", lambda n: GrFL(max_features=5), foods))
    rows.append(("grfl", "pd-speech", lambda n: GrFL(max_features=5), speech))
    rows.append(("fs-manifold", "digits 3 v 8, 10 labelled", lambda n: FSManifold(m=10),
                 semi))
    rows.append(("fs-manifold", "pd-speech", lambda n: FSManifold(m=10), speech))
    return rows


def _in_passes(fit, X, rounds: int) -> float:
    """One fit's time in passes of Xᵀv: the fastest of ``rounds`` fits over the fastest of
    as many blocks of 21 passes, each block timed just before its fit (the fastest, not the
    median: a 2-core host's other load only ever adds time, and a tiny X's single pass is
    too short to time alone)."""
    s = np.random.default_rng(0).normal(size=X.shape[0])
    xts(X, s)
    units, fits = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(21):
            xts(X, s)
        units.append((time.perf_counter() - start) / 21)
        start = time.perf_counter()
        fit()
        fits.append(time.perf_counter() - start)
    return min(fits) / min(units)


def main() -> int:
    p = common_parser(__doc__)
    p.add_argument("--update", action="store_true",
                   help="write the time budgets at 1.6× the times measured")
    p.add_argument("--slow-down", default="", help="fit this method twice per timed fit")
    args = p.parse_args()
    wanted = {m.strip() for m in args.only.split(",") if m.strip()}
    budgets = json.loads(BUDGETS.read_text()) if BUDGETS.exists() else {}
    limits = budgets.setdefault("time", {})
    table = Table("Speed guard: one fit in passes of Xᵀv over the same X (fastest of rounds) "
                  "against its budget",
                  ["method", "design", "fit in passes", "budget", "fit / budget", "verdict"])
    over = []
    cache: dict = {}
    started = time.time()
    for method, label, factory, loader in _designs():
        if wanted and method not in wanted:
            continue
        if loader not in cache:
            cache.clear()  # one dataset in memory at a time
            cache[loader] = loader()
        data = cache[loader]
        X, y = data.X, data.y
        kwargs = {"X_unlabeled": data.X_unlabeled} if method == "fs-manifold" and \
            data.X_unlabeled is not None else {}
        twice = method == args.slow_down

        def fit(factory=factory, X=X, y=y, kwargs=kwargs, twice=twice):
            for _ in range(2 if twice else 1):
                factory(X.shape[0]).fit(X, y, **kwargs)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit()  # compile, untimed
            first = time.perf_counter()
            fit()
            rounds = 5 if time.perf_counter() - first < 1.0 else 3
            ratio = _in_passes(fit, X, 1 if args.quick else rounds)
        key = f"{method} | {label}"
        if args.update:
            limits[key] = round(MARGIN * ratio, 1)
        budget = limits.get(key)
        if budget is None:
            table.add(method, label, ratio, "–", "–", "no budget")
            continue
        share = ratio / budget
        verdict = "within" if share <= 1.0 else "OVER BUDGET"
        if share > 1.0:
            over.append(f"{method} on {label}: {ratio:.0f} passes, budget {budget:.0f}")
        table.add(method, label, ratio, budget, share, verdict)
    if args.update:
        BUDGETS.write_text(json.dumps(budgets, indent=2, sort_keys=True) + "\n")
        print(f"\nbudgets written to {BUDGETS}")
    print(f"\ntotal {time.time() - started:.0f} s")
    if not args.quick and not wanted and not args.slow_down:
        save("guard", [table])
    if over:
        print("\nOver budget:\n  " + "\n  ".join(over))
        return 1
    print("\nEvery method within its budget.")
    return 0


if __name__ == "__main__":
    RESULTS.mkdir(exist_ok=True)
    sys.exit(main())
