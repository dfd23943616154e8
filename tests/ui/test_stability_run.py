"""The Stability tab's background run: resamples stream as events, Stop ends the run with
what was done, and a new run's events never mix with the old one's."""

from __future__ import annotations

import time

from explorer.data import load
from explorer.ui.stability_view import StabilityView


def _drain(view, until, timeout=60.0):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        view.tick()
        if until():
            return True
        time.sleep(0.02)
    return False


def test_stop_keeps_the_resamples_done_and_says_stopped():
    data = load("digits-3v8").split()
    view = StabilityView()
    view.resamples.value = 200
    view.start("fgm", data, {"k": 10}, [], None)
    assert _drain(view, lambda: len(view._phis) >= 3)
    view.run.stop()
    assert _drain(view, lambda: view.result is not None and not view.run.worker.busy)
    assert 3 <= view.result.n_resamples < 200
    _drain(view, lambda: "stopped" in view.status.object, timeout=5)
    assert "stopped" in view.status.object


def test_a_new_run_ignores_the_old_runs_events():
    data = load("digits-3v8").split()
    view = StabilityView()
    view.resamples.value = 200
    view.start("fgm", data, {"k": 10}, [], None)
    assert _drain(view, lambda: len(view._phis) >= 2)
    view.resamples.value = 10
    view.start("fgm", data, {"k": 5}, ["fisher"], 5)
    assert _drain(view, lambda: view.agreement is not None)
    assert view.result.n_resamples == 10 and view.result.selected.sum(axis=1).max() == 5
    assert list(view.agreement.jaccard.index) == ["fgm", "fisher"]
    assert [p[0] for p in view._phis] == list(range(1, 11))
