"""FGM, FSA and sweeps on Dask: out of core, in-memory overhead, a sweep on a LocalCluster.

Sections (``--only`` takes a comma list):
  disk    Out of core. A float32 matrix (``--rows`` × ``--cols``, default 100,000 × 40,000 =
          16 GB) is written to a Zarr store on disk with 20 true features; a LocalCluster of 2
          worker processes with ``--worker-gb`` (3) GB of memory each opens it lazily. FGM
          (B = 10) and FSA (k = 100) select on it. Reported: passes over X, bytes read (whole
          source chunks), seconds per GB read against a plain read of every chunk (the
          disk/page-cache bound: the target is ≤ 2×), true features found and test accuracy,
          beside the same methods in memory on a ``--sub``-row subsample (what a user without
          the cluster would run).
  memory  The same fits on a 20,000 × 100,000 float32 array (8 GB) in memory: numpy path vs
          the same array wrapped in dask (threaded scheduler): the overhead ratio.
  sweep   16-point sweeps, serial vs a LocalCluster of 2 single-threaded workers: FGM
          (B = 1 … 16) on a 2,048 × 8,192 Type I design (BLAS-bound: the serial run already
          uses both cores) and FSA (k = 5 … 80) on its simulation at 3,000 × 3,000 (one core per
          fit): speed-up, identical selections and accuracies, objective differences (BLAS
          with one thread rounds differently from two).

Run: ``.venv/bin/python benchmarks/bench_scale.py`` (``--quick`` for a small smoke run; the
store is kept under ``--store`` and reused when its shape matches).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
from _common import Table
from _common import run as run_benchmark

from explorer import FGM, FSA
from explorer.metrics import recovery

N_TRUE = 20
TEST_ROWS = 10_000


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], N_TRUE) * rng.uniform(0.5, 1.5, N_TRUE)


def _labels(block_true, w, rng):
    margin = block_true @ w
    return np.where(margin + 0.5 * rng.standard_normal(margin.size) > 0, 1, 0)


def write_store(path: Path, n: int, m: int, rows_per_chunk: int, cols_per_chunk: int):
    """X (n × m float32, uncompressed), y, X_test, y_test; true features 0 … 19 spread over
    the columns at a fixed stride so that they fall in different chunks."""
    import zarr

    truth = np.linspace(0, m - 1, N_TRUE).astype(int)
    if (path / "zarr.json").exists():
        group = zarr.open_group(str(path), mode="r")
        if group["X"].shape == (n, m):
            return truth
        shutil.rmtree(path)
    w = _weights()
    group = zarr.open_group(str(path), mode="w")
    X = group.create_array("X", shape=(n, m), chunks=(rows_per_chunk, cols_per_chunk),
                           dtype="float32", compressors=None)
    y = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(1)
    for start in range(0, n, rows_per_chunk):
        stop = min(n, start + rows_per_chunk)
        block = rng.standard_normal((stop - start, m), dtype=np.float32)
        y[start:stop] = _labels(block[:, truth].astype(np.float64), w, rng)
        X[start:stop] = block
        print(f"  wrote rows {stop:,} of {n:,}", flush=True)
    group.create_array("y", data=y)
    Xt = rng.standard_normal((TEST_ROWS, m), dtype=np.float32)
    group.create_array("X_test", data=Xt, chunks=(TEST_ROWS, cols_per_chunk), compressors=None)
    group.create_array("y_test", data=_labels(Xt[:, truth].astype(np.float64), w, rng))
    return truth


def _touch(block):
    return np.float64(block[-1, -1]).reshape(1, 1)


def _read_pass(X) -> float:
    """Seconds to read every chunk once (one value kept per chunk: the bound for a pass)."""
    import dask

    start = time.perf_counter()
    dask.compute(X.map_blocks(_touch, chunks=(1, 1), dtype=np.float64).sum())
    return time.perf_counter() - start


def _fit(factory, X, y):
    start = time.perf_counter()
    est = factory().fit(X, y)
    return est, time.perf_counter() - start


def _passes(est) -> tuple[int, int]:
    last = [r.info for r in est.history_ if "passes" in r.info]
    return (last[-1]["passes"], last[-1]["bytes_read"]) if last else (0, 0)


def section_disk(args, tables):
    import dask.array as da
    from distributed import Client, LocalCluster

    import explorer

    n, m = (20_000, 8_000) if args.quick else (args.rows, args.cols)
    path = Path(args.store) / f"scale-{n}x{m}.zarr"
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"writing {n:,} × {m:,} float32 ({n * m * 4 / 1e9:.1f} GB) to {path}")
    truth = write_store(path, n, m, rows_per_chunk=min(n, 25_000), cols_per_chunk=128)
    ds = explorer.load(path)
    gb = n * m * 4 / 1e9
    factories = [("FGM B=10", lambda: FGM(B=10)), ("FSA k=100", lambda: FSA(k=100))]
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=f"{args.worker_gb}GB",
                      dashboard_address=":0") as cluster, Client(cluster):
        read = min(_read_pass(ds.X) for _ in range(2))
        table = Table(f"Out of core: {n:,} × {m:,} float32 ({gb:.1f} GB) in Zarr on disk, "
                      f"LocalCluster 2 workers × {args.worker_gb:g} GB; a plain read of every "
                      f"chunk takes {read:.1f} s ({gb / read:.2f} GB/s); subsample: "
                      f"{args.sub:,} rows in memory",
                      ["method", "where", "passes", "GB read", "fit s", "s per GB read",
                       "÷ plain read", "true found (of 20)", "test acc"])
        for name, factory in factories:
            est, t = _fit(factory, ds.X, ds.y)
            passes, nbytes = _passes(est)
            per_gb = t / max(nbytes / 1e9, 1e-9)
            acc = est.score(ds.X_test, ds.y_test)
            found = recovery(est.selected_features_, truth)["found"]
            table.add(name, "dask, on disk", passes, nbytes / 1e9, t, per_gb,
                      per_gb / (read / gb), found, acc)
    sub = np.asarray(da.asarray(ds.X)[: args.sub].compute())
    Xt = np.asarray(ds.X_test.compute())
    for name, factory in factories:
        est, t = _fit(factory, sub, ds.y[: args.sub])
        table.add(name, f"numpy, {args.sub:,} rows", "", "", t, "", "",
                  recovery(est.selected_features_, truth)["found"], est.score(Xt, ds.y_test))
    tables.append(table)


def section_memory(args, tables):
    import dask.array as da

    n, m = (4_000, 20_000) if args.quick else (20_000, 100_000)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((n, m), dtype=np.float32)
    truth = np.linspace(0, m - 1, N_TRUE).astype(int)
    y = _labels(X[:, truth].astype(np.float64), _weights(), rng)
    lazy = da.from_array(X, chunks=(n, 4096))
    table = Table(f"In memory: {n:,} × {m:,} float32 ({X.nbytes / 1e9:.1f} GB), numpy vs the "
                  "same array as dask (threaded scheduler), best of 2",
                  ["method", "numpy s", "dask s", "dask ÷ numpy", "same selection"])
    for name, factory in (("FGM B=10", lambda: FGM(B=10)), ("FSA k=100", lambda: FSA(k=100))):
        a_t = b_t = np.inf
        for _ in range(2):
            a, t = _fit(factory, X, y)
            a_t = min(a_t, t)
            b, t = _fit(factory, lazy, y)
            b_t = min(b_t, t)
        same = np.array_equal(a.selected_features_, b.selected_features_)
        table.add(name, a_t, b_t, b_t / a_t, same)
    tables.append(table)


def section_sweep(args, tables):
    from distributed import Client, LocalCluster

    from explorer.data import make_fgm_linear, make_fsa_correlated
    from explorer.experiments import sweep

    n, m = (1024, 2048) if args.quick else (2048, 8192)
    cases = [("FGM B = 1 … 16", "fgm", make_fgm_linear(n, m, weighting="I", n_test=n, seed=0),
              f"{n:,} × {m:,} Type I"),
             ("FSA k = 5 … 80", "fsa", make_fsa_correlated(3000, 3000, k_star=10, n_test=1000,
                                                          seed=0), "3,000 × 3,000 FSA sim.")]
    table = Table("16-point sweeps: serial vs a LocalCluster of 2 single-threaded workers "
                  "(2 cores)", ["sweep", "data", "serial s", "LocalCluster s", "speed-up",
                                "same selections and accuracy", "max objective difference"])
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        client.run(_warm)
        for name, method, ds, what in cases:
            values = list(range(1, 17)) if method == "fgm" else list(range(5, 85, 5))
            start = time.perf_counter()
            serial = sweep(method, ds, values=values)
            t_serial = time.perf_counter() - start
            start = time.perf_counter()
            parallel = sweep(method, ds, values=values, client=client)
            t_cluster = time.perf_counter() - start
            same = bool(serial[["value", "n_selected", "accuracy"]].equals(
                parallel[["value", "n_selected", "accuracy"]]))
            diff = float(np.max(np.abs(serial["objective"] - parallel["objective"]) /
                                np.abs(serial["objective"])))
            table.add(name, what, t_serial, t_cluster, t_serial / t_cluster, same, f"{diff:.1e}")
    tables.append(table)


def _warm():
    X = np.random.default_rng(0).normal(size=(40, 6))
    FGM(B=2).fit(X, np.arange(40) % 2)
    FSA(k=2).fit(X, np.arange(40) % 2)


def main():
    _warm()  # JIT

    def more(p):
        p.add_argument("--rows", type=int, default=100_000)
        p.add_argument("--cols", type=int, default=40_000)
        p.add_argument("--worker-gb", type=float, default=3.0)
        p.add_argument("--sub", type=int, default=10_000, help="rows of the in-memory run")
        p.add_argument("--store", default="/tmp/explorer-scale", help="where the Zarr goes")

    run_benchmark("scale", __doc__, [("disk", section_disk), ("memory", section_memory),
                                     ("sweep", section_sweep)], more)


if __name__ == "__main__":
    main()
