"""Sweeps and comparisons on a real dask.distributed LocalCluster equal the serial run."""

from __future__ import annotations

import os
import signal

import dask.array as da
import numpy as np
import pandas as pd
import pytest

import explorer
from explorer.experiments import compare, sweep

COLUMNS = ["method", "value", "n_selected", "accuracy", "objective", "n_iter"]


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as local, \
            Client(local) as client:
        yield client


@pytest.fixture(scope="module")
def dataset():
    return explorer.load("fsa-correlated", n_samples=300)


def test_sweep_on_a_cluster_equals_the_serial_sweep(cluster, dataset):
    serial = sweep("fgm", dataset, values=[2, 4, 6, 8], C=1.0)
    rows = []
    parallel = sweep("fgm", dataset, values=[2, 4, 6, 8], C=1.0, client=cluster,
                     callback=rows.append)
    assert len(rows) == 4
    assert serial[COLUMNS].equals(parallel[COLUMNS])


def test_a_killed_worker_is_retried_and_the_sweep_completes(cluster, dataset):
    serial = sweep("fsa", dataset, values=[2, 4, 6, 8, 10, 12])
    pids = list(cluster.run(os.getpid).values())
    killed = []

    def kill_one(row):
        if not killed:  # after the first point: the others are queued or running
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    parallel = sweep("fsa", dataset, values=[2, 4, 6, 8, 10, 12], client=cluster,
                     callback=kill_one)
    assert killed and serial[COLUMNS].equals(parallel[COLUMNS])
    cluster.wait_for_workers(2, timeout=60)
    assert pids[0] not in cluster.run(os.getpid).values()  # the nanny started a new one


@pytest.mark.slow
def test_compare_with_a_local_cluster(dataset):
    serial = compare(["fsa", "l1-svm"], dataset, ks=[2, 6], cv=3, repeats=2)
    parallel = compare(["fsa", "l1-svm"], dataset, ks=[2, 6], cv=3, repeats=2, client="local")
    assert serial.rows[COLUMNS].equals(parallel.rows[COLUMNS])
    pd.testing.assert_frame_equal(serial.differences(), parallel.differences())


@pytest.mark.slow
def test_a_lazy_dataset_sweeps_on_the_cluster(cluster, dataset):
    lazy = explorer.data.Dataset(X=da.from_array(dataset.X, chunks=(150, 250)), y=dataset.y,
                                 X_test=dataset.X_test, y_test=dataset.y_test)
    serial = sweep("fgm", dataset, values=[3, 6], C=1.0)
    on_cluster = sweep("fgm", lazy, values=[3, 6], C=1.0, client=cluster)
    np.testing.assert_array_equal(serial["n_selected"], on_cluster["n_selected"])
    np.testing.assert_allclose(serial["objective"], on_cluster["objective"], rtol=1e-8)


def test_a_bad_client_is_a_clear_error(dataset):
    with pytest.raises(TypeError, match="client must be None, 'local'"):
        sweep("fgm", dataset, values=[2], client=3)


def test_a_scheduler_address_is_connected_to(cluster, dataset):
    serial = sweep("fgm", dataset, values=[2, 5], C=1.0)
    by_address = sweep("fgm", dataset, values=[2, 5], C=1.0, client=cluster.scheduler.address)
    assert serial[COLUMNS].equals(by_address[COLUMNS])


def test_an_address_without_a_scheduler_is_a_clear_error(dataset, monkeypatch):
    import socket

    import explorer.experiments.sweeps as experiments

    monkeypatch.setattr(experiments, "CONNECT_TIMEOUT", 1.0)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectionError, match=f"no dask scheduler answered at 'tcp://127.0.0.1:"
                                              f"{port}' within 1 s.*client='local'"):
        sweep("fgm", dataset, values=[2], client=f"tcp://127.0.0.1:{port}")
    with pytest.raises(ValueError, match="'nowhere' is not a scheduler address"):
        sweep("fgm", dataset, values=[2], client="nowhere")
    from dask.base import get_scheduler

    # the failed connections left no half-made client as dask's default (every later
    # dask computation in this process would wait on it)
    default = getattr(get_scheduler(), "__self__", None)
    assert default is None or default.status == "running"


def test_kernels_share_the_cores_with_a_workers_threads(cluster, monkeypatch):
    """A sparse Xᵀs splits over the cores it may use; in a dask.distributed worker those are
    shared: worker processes get OMP_NUM_THREADS=1 from their nanny, and the threads of one
    worker run tasks side by side, so each kernel call uses cores ÷ threads (1 here), not
    every core on top of the worker's own threads."""
    from distributed import Client, LocalCluster

    import explorer.kernels as kernels

    affinity = kernels._affinity()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert kernels._cores() == affinity
    assert cluster.run(lambda: __import__("explorer.kernels").kernels._cores()) == \
        dict.fromkeys(cluster.scheduler_info()["workers"], 1)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=":0") as local, Client(local) as client:
        threads = client.submit(lambda: __import__("explorer.kernels").kernels._cores(),
                                pure=False).result()
    assert threads == max(1, affinity // 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert kernels._cores() == 1


def test_stability_on_a_cluster_equals_the_serial_run(cluster, dataset):
    from explorer.experiments import stability

    serial = stability("fsa", dataset, n_resamples=6, k=5, chance=2)
    seen = []
    parallel = stability("fsa", dataset, n_resamples=6, k=5, client=cluster,
                         callback=seen.append, chance=2)
    assert [u["stage"] for u in seen] == ["resample"] * 6 + ["chance"] * 10
    np.testing.assert_array_equal(serial.selected, parallel.selected)
    assert serial.phi == parallel.phi
    np.testing.assert_array_equal(serial.chance.phis, parallel.chance.phis)


def test_a_cv_sweep_on_a_cluster_equals_the_serial_one(cluster, dataset):
    serial = sweep("fsa", dataset, values=[3, 6], cv=3)
    parallel = sweep("fsa", dataset, values=[3, 6], cv=3, client=cluster)
    assert serial[["value", "accuracy", "accuracy_sd", "n_selected"]].equals(
        parallel[["value", "accuracy", "accuracy_sd", "n_selected"]])
