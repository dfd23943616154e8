"""The app on a lazily opened (dask) dataset, in a real browser: its size shown without
reading X, a fit's passes in the status, Stop, and methods that need memory refused."""

from __future__ import annotations

import re

import numpy as np
import pytest
import zarr
from playwright.sync_api import Page

from .conftest import start_server, stop_server
from .test_browser import settled_status, status, wait_for, wait_text
from .test_truth import FIGURE, assert_clean_log

pytestmark = pytest.mark.ui


@pytest.fixture(scope="module")
def lazy_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lazy")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1500, 2400)).astype(np.float32)
    y = (X[:, :8].sum(axis=1) > 0).astype(np.int64)
    group = zarr.open_group(str(folder / "wide.zarr"), mode="w")
    group.create_array("X", data=X, chunks=(500, 600))
    group.create_array("y", data=y)
    proc, url, _, log_path = start_server("--data", str(folder / "wide.zarr"),
                                          log_name="lazy.log")
    yield url, log_path
    stop_server(proc)


def test_a_zarr_dataset_fits_shows_passes_and_stops(page: Page, lazy_server, shot):
    url, log_path = lazy_server
    page.goto(f"{url}/explorer?dataset=wide.zarr&method=fgm&B=4")
    message = wait_text(page, ".message", "lazy (dask", timeout=60)
    assert "1,050 × 2,400" in message and "float32" in message  # size, without reading X
    line = settled_status(page, timeout=90)
    passes = int(re.search(r"(\d+) passes over X, [\d.]+ [kMG]?B read", line).group(1))
    assert passes >= 2
    scores = re.search(r"test accuracy ([\d.]+)", line)
    assert scores and float(scores.group(1)) > 0.8
    n = int(re.search(r"Selected: (\d+)", line).group(1))
    fig = wait_for(lambda: (lambda f: f if f and f["x"][1] >= n else None)(
        page.evaluate(FIGURE, "entries and exits")), 30)
    assert fig["y"][1] >= 15  # every outer iteration on the map
    shot(page, "fgm")

    page.goto(f"{url}/explorer?dataset=wide.zarr&method=fgm&B=2&max_outer=200&tol=0")
    wait_for(lambda: "running" in status(page) and "passes over X" in status(page), 90)
    page.locator(".btn-stop button").click()
    line = wait_text(page, ".status-line", "stopped", timeout=60)
    assert int(re.search(r"iteration (\d+)", line).group(1)) < 200
    shot(page, "stopped")

    page.goto(f"{url}/explorer?dataset=wide.zarr&method=grfl")
    wait_text(page, ".message", "GrFL needs the data in memory", timeout=60)
    shot(page, "grfl")
    assert_clean_log(log_path.read_text)
