"""LiveFit: a fit in a background thread whose records reach the views on the event loop.

Each test runs in a thread of its own: the browser tests' Playwright keeps an event loop
running in the main thread of the test session, which LiveFit would (rightly) use."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from explorer import FGM
from explorer.data import make
from explorer.ui import ConvergenceView, LiveFit


@pytest.fixture(scope="module")
def digits():
    return make("digits-3v8")


def in_thread(fn):
    """Run ``fn()`` in a fresh thread (no event loop there) and return its result."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(120)
    if "error" in out:
        raise out["error"]
    return out["value"]


class Recorder:
    def __init__(self):
        self.batches, self.threads = [], set()

    def push(self, records):
        self.batches.append(list(records))
        self.threads.add(threading.current_thread().name)


def test_without_an_event_loop_the_records_reach_the_view_as_they_come(digits):
    view = ConvergenceView()
    live = in_thread(lambda: view.watch(FGM(B=5), digits.X, digits.y))
    est = live.result(60)
    assert [r.iteration for r in live.records] == [r.iteration for r in est.history_]
    assert view.n_points == ConvergenceView(estimator=est).n_points


def test_on_an_event_loop_records_are_pushed_by_the_loop_in_batches(digits):
    recorder = Recorder()

    async def main():
        live = LiveFit(FGM(B=2, max_outer=20, tol=0), digits.X, digits.y, [recorder],
                       every=0.05)
        while live.running:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # the last flush
        return live

    def run():
        return threading.current_thread().name, asyncio.run(main())

    loop_thread, live = in_thread(run)
    model = live.result()
    pushed = [r for batch in recorder.batches for r in batch]
    assert [r.iteration for r in pushed] == [r.iteration for r in model.history_]
    assert recorder.threads == {loop_thread}  # never from the fit's thread
    assert len(recorder.batches) >= 1


def test_stop_ends_the_fit_with_a_usable_model(digits):
    recorder = Recorder()
    live = LiveFit(FGM(B=1, max_outer=200, tol=0), digits.X, digits.y, [recorder])
    while not live.records:
        threading.Event().wait(0.01)
    live.stop()
    model = live.result(60)
    assert model.stopped_early_ and len(model.history_) < 200
    assert np.isfinite(model.decision_function(digits.X)).all()


def test_errors_are_reraised_and_bad_settings_refused(digits):
    live = LiveFit(FGM(B=0), digits.X, digits.y, [Recorder()])
    with pytest.raises(ValueError):
        live.result(30)
    with pytest.raises(TypeError, match="callback"):
        LiveFit(FGM(), digits.X, digits.y, [], callback=print)
    for every in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="every"):
            LiveFit(FGM(), digits.X, digits.y, [], every=every)
