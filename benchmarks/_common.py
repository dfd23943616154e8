"""Helpers shared by the benchmark scripts: timing, memory, the Xᵀs unit, markdown tables.

Every script runs the method and its peer on the same data in one process, reports medians of
several runs and the ratio, prints a markdown table and also writes it to
``benchmarks/results/<name>.md`` so the README can carry the latest numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    p.add_argument("--repeats", type=int, default=3, help="runs per timing (median)")
    p.add_argument("--only", default="", help="comma-separated section names to run")
    return p


def wanted(args, section: str) -> bool:
    return not args.only or section in args.only.split(",")


def run(name: str, doc: str, sections, add_arguments=None) -> None:
    """A benchmark script's main: parse the common options (and ``add_arguments``'s), run the
    wanted sections in order, print the total time and save the tables under ``name``."""
    import gc

    p = parser(doc)
    if add_arguments is not None:
        add_arguments(p)
    args = p.parse_args()
    tables: list[Table] = []
    start = time.time()
    for section, fn in sections:
        if wanted(args, section):
            fn(args, tables)
            gc.collect()
    print(f"\ntotal {time.time() - start:.0f} s")
    save(name + ("-quick" if args.quick else ""), tables)


def median_time(fn, repeats: int = 3):
    """(median seconds, last result) of ``fn()`` over ``repeats`` runs."""
    times, result = [], None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def add_recovery(stats: dict, est, ds, elapsed: float) -> None:
    """Append a fitted selector's all-found flag (DR), percent of true features found (PCD),
    test AUC and fit time to the lists in ``stats``."""
    from explorer.metrics import auc, recovery

    rec = recovery(est.selected_features_, ds.truth)
    stats["dr"].append(rec["all_found"])
    stats["pcd"].append(rec["percent_found"])
    stats["auc"].append(auc(ds.y_test, est.decision_function(ds.X_test)))
    stats["t"].append(elapsed)


def timed_fit(estimator, X, y, repeats: int = 1, **fit_kwargs):
    """(median seconds, fitted estimator) of ``estimator.fit(X, y)`` over ``repeats`` runs."""
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        estimator.fit(X, y, **fit_kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times), estimator


def xts_pass_time(X, repeats: int = 5) -> float:
    """Median time of one pass Xᵀs over X (the physical unit)."""
    from explorer.kernels import xts

    s = np.random.default_rng(0).normal(size=X.shape[0])
    xts(X, s)  # compile / warm caches
    return median_time(lambda: xts(X, s), repeats)[0]


def in_passes(fn, X, rounds: int = 15, passes_per_round: int = 21):
    """A fit measured in passes of Xᵀs over X, the unit timed beside each fit: each round
    times ``passes_per_round`` passes (their median is that round's unit) and then one
    ``fn()``. Returns (median fit seconds, median unit seconds, median of the per-round ratios,
    last result). The unit measured once before the fits drifts with this host's load (0.09 to
    0.19 ms for the same pass within an hour): a ratio taken within one round does not."""
    from explorer.kernels import xts

    s = np.random.default_rng(0).normal(size=X.shape[0])
    xts(X, s)  # compile / warm caches
    fits, units, ratios, result = [], [], [], None
    for _ in range(max(1, rounds)):
        unit = median_time(lambda: xts(X, s), passes_per_round)[0]
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        fits.append(elapsed)
        units.append(unit)
        ratios.append(elapsed / unit)
    return (statistics.median(fits), statistics.median(units), statistics.median(ratios),
            result)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class Table:
    """A markdown table accumulated row by row (printed as it grows)."""

    def __init__(self, title: str, columns: list[str]):
        self.title = title
        self.columns = columns
        self.rows: list[list[str]] = []
        print(f"\n### {title}\n")
        print("| " + " | ".join(columns) + " |")
        print("|" + "|".join("---" for _ in columns) + "|", flush=True)

    def add(self, *values) -> None:
        row = [_fmt(v) for v in values]
        self.rows.append(row)
        print("| " + " | ".join(row) + " |", flush=True)

    def markdown(self) -> str:
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, float):
        if np.isnan(v):
            return "–"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.3g}"
    return str(v)


SUBSET_FLAGS = ("--only", "--designs", "--sets", "--methods")  # options that run part of a script


def save(name: str, tables: list[Table], command: str | None = None, notes: str = "") -> Path:
    """Write the tables to ``results/<name>.md`` with the exact command line that produced them
    (``results/<name>-<sections>.md`` for a ``--only`` run, ``-<designs>`` appended for a
    ``--designs`` one, so a partial run never overwrites the full one). ``command`` is
    ignored: the header always carries the real argv."""
    RESULTS.mkdir(exist_ok=True)
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(RESULTS.parents[1])
    except ValueError:
        pass
    argv = sys.argv[1:]
    command = " ".join(["python", script.as_posix(), *argv])
    for flag in SUBSET_FLAGS:  # a partial run is saved under its own name
        value = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag), None)
        if value is None:
            value = next((a.split("=", 1)[1] for a in argv if a.startswith(flag + "=")),
                         None)
        if value:
            name = f"{name}-{value.replace(',', '+').replace(':', '').replace(' ', '_')}"
    header = (f"<!-- produced by `{command}` on {time.strftime('%Y-%m-%d')}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores -->\n")
    body = "\n\n".join(t.markdown() for t in tables)
    path = RESULTS / f"{name}.md"
    path.write_text(header + body + ("\n\n" + notes if notes else "") + "\n")
    print(f"\nwritten {path}")
    return path
