"""The status line's text, without a session: what it says of a record, a model and a run."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import FSMulti
from explorer.data import load
from explorer.methods.base import IterationRecord
from explorer.ui import ExplorerState, _status


def _record(**info):
    return IterationRecord(iteration=4, inner_steps=12, objective=3.25, n_selected=7,
                           selected=np.arange(7), elapsed=0.5, info=info)


def test_the_run_state_word():
    assert _status.run_state(paused=True, running=True, stopped=False) == "paused"
    assert _status.run_state(paused=False, running=True, stopped=False) == "running…"
    assert _status.run_state(paused=False, running=False, stopped=True) == "stopped"
    assert _status.run_state(paused=False, running=False, stopped=False) == "done"


def test_a_running_line_has_no_scores_and_says_the_work():
    line = _status.status_line(_record(passes=3, bytes_read=2048), records=[], estimator=None,
                               data=None, state="running…", scored=False)
    assert line.startswith("Selected: 7 features · objective 3.25 · iteration 5 · 0.50 s")
    assert "3 passes over X" in line and line.endswith("running…")
    in_memory = _status.status_line(_record(passes=3), records=[], estimator=None, data=None,
                                    state="done", scored=False)
    assert "passes" not in in_memory and "read" not in in_memory  # no "0 B read" in memory
    learned = _status.status_line(_record(n_learned=29), records=[], estimator=None,
                                  data=None, state="done", scored=False)
    assert "7 input features (through 29 learned features)" in learned
    # GrFL's Gabor filters on textures are pooled over the image: each reads all 256 pixels,
    # so a count of input pixels says nothing; the learned features are what it selected
    pooled = _status.status_line(_record(n_learned=12, pooled=True), records=[],
                                 estimator=None, data=None, state="done", scored=False)
    assert pooled.startswith("Selected: 12 learned features (filters pooled over the whole "
                             "image: each reads every pixel)")
    warm = _status.status_line(_record(warm_start=True), records=[], estimator=None,
                               data=None, state="done", scored=False)
    assert "warm-started from the previous fit" in warm


def test_a_ranking_model_shows_its_ranking_measures_not_accuracy():
    data = load("digits-3v8").split(test_size=0.3, seed=0)
    model = FSMulti(measure="prbep", B=3, max_outer=2).fit(data.X, data.y)
    assert _status.headline_measures(model) == ("prbep", "auc")
    scores = _status.headline_scores(model, data)
    assert set(scores) == {"prbep", "auc"}
    line = _status.status_line(model.history_[-1], records=model.history_, estimator=model,
                               data=data, state="done", scored=True)
    assert "(trained for it)" in line and "no accuracy" in line
    assert _status.test_scores(model, None) == {}


def test_the_pacer_shows_first_and_settled_records_at_once_and_rations_the_rest():
    """StatusPacer alone, on a clock it is given: a fit's first record is shown and not
    explained while it runs; a second record within STATUS_EVERY_S is held back, then shown
    by a poll without records once the time has passed; a paused fit's record is shown and
    explained at once; failure, queueing and a cancel before any record are fixed texts."""
    from explorer.ui._fit_session import Update
    from explorer.ui._status import STATUS_EVERY_S, StatusPacer

    pacer, r1, r2, r3 = StatusPacer(), object(), object(), object()
    shown = pacer.after_poll(Update(records=[r1]), records=[r1], running=True, paused=False,
                             has_model=False, now=10.0)
    assert shown.record is r1 and not shown.explain and shown.text is None
    shown = pacer.after_poll(Update(records=[r2]), records=[r1, r2], running=True,
                             paused=False, has_model=False, now=10.0 + STATUS_EVERY_S / 2)
    assert shown.record is None and pacer.behind
    shown = pacer.after_poll(Update(), records=[r1, r2], running=True, paused=False,
                             has_model=False, now=10.0 + STATUS_EVERY_S * 1.01)
    assert shown.record is r2 and not pacer.behind
    shown = pacer.after_poll(Update(records=[r3]), records=[r1, r2, r3], running=True,
                             paused=True, has_model=True, now=10.0 + STATUS_EVERY_S * 1.02)
    assert shown.record is r3 and shown.explain
    assert "failed" in pacer.after_poll(Update(failed=True), records=[], running=False,
                                        paused=False, has_model=False).text
    assert "queued (3 ahead)" in pacer.after_poll(Update(queued=3), records=[], running=True,
                                                  paused=False, has_model=False).text
    long_stage = pacer.after_poll(Update(progress=("finding the nearest neighbours", 0.4)),
                                  records=[], running=True, paused=False, has_model=False)
    assert long_stage.text.endswith("finding the nearest neighbours… 40%")
    assert "stopped before its first model" in pacer.after_poll(
        Update(cancelled=True), records=[], running=False, paused=False, has_model=False).text
    finished = pacer.after_poll(Update(finished=True), records=[r1, r2, r3], running=False,
                                paused=False, has_model=True)
    assert finished.record is r3 and finished.explain


def test_a_pause_in_a_later_poll_than_its_record_turns_the_line_to_paused():
    """A step's record and its pause come in separate polls when the worker is between them
    at the poll: the line showed the record as running and stayed "running…" (the page's
    Step then looked stuck beside its explanation)."""
    import queue

    from explorer.ui._fit_session import FitSession, Update
    from explorer.ui._status import Feedback
    from explorer.ui._worker import Event

    record = _record()
    feedback = Feedback()
    fits = FitSession(queue.Queue(), feedback.notify, start_worker=False)
    fits.token, fits.records, fits.running = 1, [], True
    first = Update()
    fits.apply(Event("record", 1, record), first)
    feedback.after_poll(first, fits, None, "fgm")
    assert feedback.status.endswith("running…")
    later = Update()
    fits.apply(Event("paused", 1, record), later)
    assert later.paused and fits.paused
    feedback.after_poll(later, fits, None, "fgm")
    assert feedback.status.endswith("paused"), feedback.status


def test_the_status_line_slows_down_with_the_fits_running_in_the_server(monkeypatch):
    """0.2 s alone and up to six fits at once, then one step more per six: a class of 30
    fitting sees its line change every second, and a closed session stops counting."""
    monkeypatch.setattr(_status, "RUNNING", set())
    assert _status.StatusPacer().every == pytest.approx(0.2)
    for session in range(30):
        _status.set_running(session, True)
    assert _status.StatusPacer().every == pytest.approx(1.0)
    for session in range(24):
        _status.set_running(session, False)
    assert _status.status_interval() == pytest.approx(0.2)
    state = ExplorerState(dataset="digits-3v8", live=False)
    try:
        state.fit()
        assert id(state.fits) in _status.RUNNING or not state.fits.running
    finally:
        state.close()
    assert id(state.fits) not in _status.RUNNING


class _Fits:
    """What Feedback reads of a fit session: its records, model and run state."""

    def __init__(self, records, *, running=False, paused=False, stopped=False):
        self.records, self.estimator = records, object()
        self.running, self.paused, self.stopped = running, paused, stopped


def test_feedback_without_a_session_writes_the_line_the_notice_and_the_explanation():
    from explorer.ui._fit_session import Update

    said = _status.Feedback()
    assert said.status == _status.IDLE and said.message == ""
    record = _record()
    fits = _Fits([record])
    said.after_poll(Update(records=[record], finished=True), fits, None, "fgm")
    assert said.status.startswith("Selected: 7 features · objective 3.25 · iteration 5")
    assert said.status.endswith("done") and "Outer iteration 5" in said.explanation
    said.starting(compiling=True)
    assert "running…" in said.status and "compiling" in said.status
    assert said.reported(int, "12") == 12 and said.message == ""
    assert said.reported(int, "twelve") is None
    assert said.message_level == "error" and "twelve" in said.message
    assert said.reported(lambda: None) is True  # a check that passes
    said.clear()
    assert said.status == _status.IDLE and said.explanation == ""


def test_a_served_page_starts_its_fit_with_the_session_and_draws_once_loaded(monkeypatch):
    """Under a class's load the browser drew the page 8-12 s before its onload callback ran,
    and a fit started there left the line at "Selected: 0 features" meanwhile: the fit starts
    with the session, and its curves are drawn once the page is loaded (drawn into a page
    still loading, they kept the browser busy and *Stop* arrived 3.5 s late)."""
    import panel as pn

    from explorer.ui import app as app_module

    monkeypatch.setattr(app_module, "in_server", lambda: True)
    loads = []
    monkeypatch.setattr(pn.state, "onload", loads.append)
    monkeypatch.setattr(pn.state, "on_session_destroyed", lambda callback: None)
    monkeypatch.setattr(app_module, "poll_every", lambda callback: None)
    explorer = app_module.ExplorerApp(dataset="breast-cancer",
                                      query={"method": "fsa", "k": "5"})
    try:
        explorer.servable_template()
        assert explorer.state.fits.running or explorer.state.estimator is not None
        token = explorer.state.fits.token
        assert explorer.state.feedback.status.startswith("Selected: – features · running")
        explorer.state.fits.wait(60)
        for _ in range(3):
            explorer._tick()
        assert explorer.state.estimator is not None  # fitted before the page is there …
        assert "done" in explorer.state.feedback.status
        assert len(explorer.convergence._conv.data) == 0  # … and not drawn into it
        assert len(loads) == 1
        loads[0]()  # the page is there
        assert explorer.state.fits.token == token  # no second fit
        for _ in range(3):
            explorer._tick()
        assert len(explorer.convergence._conv.data) == len(explorer.state.records) > 0
    finally:
        explorer.close()
