"""The app's logic without a browser: set parameters on ExplorerState, assert on results."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from explorer.ui import ExplorerState, _session, _status
from explorer.viz import selected_table


@pytest.fixture
def state():
    s = ExplorerState(dataset="digits-3v8", live=False)
    yield s
    s.close()


def test_default_dataset_is_split_and_summarised(state):
    assert state.data.has_test and state.data.image_shape == (8, 8)
    assert "Loaded digits-3v8" in state.feedback.message and state.feedback.message_level == "info"


def test_fit_produces_records_status_and_a_model(state):
    state.method = "fgm"
    state.set_param("B", 5)
    assert state.fit()
    update = state.wait(30)
    assert update.reset and update.finished and update.records
    assert state.estimator is not None and state.records == state.estimator.history_
    n = state.estimator.n_selected_
    assert state.feedback.status.startswith(f"Selected: {n} features")
    assert "done" in state.feedback.status
    frame = selected_table(state.estimator, state.data)
    assert len(frame) == n and {"feature", "name", "weight"} <= set(frame.columns)
    assert _status.test_scores(state.estimator, state.data)["accuracy"] > 0.9


def test_live_refit_on_parameter_change(state):
    state.live = True
    state.method = "fsa"
    assert state.set_param("k", 6)
    state.wait(30)
    assert state.estimator.n_selected_ == 6
    assert state.set_param("k", 4)
    state.wait(30)
    assert state.estimator.n_selected_ == 4


def test_live_off_waits_for_run(state):
    state.method = "fsa"
    state.set_param("k", 5)
    assert state.wait(1).records == [] and state.estimator is None
    state.run()
    state.wait(30)
    assert state.estimator.n_selected_ == 5


def test_bad_parameter_value_is_reported_and_ignored(state):
    state.method = "fgm"
    assert not state.set_param("B", -3)
    assert state.feedback.message_level == "error" and "below its minimum" in state.feedback.message
    assert state.current_params()["B"] is None  # unchanged: auto (10, or from k)
    assert not state.set_param("nope", 1)
    assert "no parameter 'nope'" in state.feedback.message


def _selected_after(state, **knobs):
    for name, value in knobs.items():
        assert state.set_param(name, value)
    state.fit()
    state.wait(60)
    return state.estimator.selected_features_.tolist()


@pytest.mark.parametrize("method, dataset, first, second", [
    ("fgm", "fgm-type1", {"B": 10}, {"B": 5}),
    ("grfl", "xor", {"max_features": 30}, {"max_features": 17}),
])
def test_one_setting_one_result_whatever_ran_before(method, dataset, first, second):
    """The issue's cases: B 10 → 5 on fgm-type1 kept 145 features where a fresh B = 5 gives
    75; GrFL 100 → 57 on xor kept 84 features. A refit depends on its knobs alone."""
    path = ExplorerState(dataset=dataset, live=False)
    fresh = ExplorerState(dataset=dataset, live=False)
    try:
        path.method = fresh.method = method
        _selected_after(path, **first)
        after_history = _selected_after(path, **second)
        assert not any(r.info.get("warm_start") for r in path.records)
        assert after_history == _selected_after(fresh, **second)
        assert np.isfinite([r.objective for r in path.records]).all()
    finally:
        path.close()
        fresh.close()


def test_warm_start_only_when_ticked_and_the_records_say_so(state):
    state.method = "fgm"
    state.fit()
    state.wait(30)
    state.set_param("C", 20.0)
    assert not hasattr(state.next_estimator(), "_warm")  # box not ticked: cold
    state.set_param("warm_start", True)
    estimator = state.next_estimator()
    assert estimator._warm is state.estimator._warm
    state.fit()
    state.wait(30)
    assert all(r.info.get("warm_start") for r in state.records)
    assert not hasattr(state.next_estimator(fresh=True), "_warm")  # Restart
    state.method = "l1-svm"  # a different method starts cold
    assert not hasattr(state.next_estimator(), "_warm")


def test_upload_good_and_bad_files(state):
    rows = ["a,b,c,label"] + [f"{i % 7},{(i * 3) % 5},{i % 2},{i % 2}" for i in range(60)]
    assert state.upload("\n".join(rows).encode(), "good.csv")
    assert state.dataset == "upload" and state.data.n_features == 3
    assert state.source.table_columns() == ["a", "b", "c", "label"]
    before = state.data
    assert not state.upload(b"a,b,label\n1,2,0\n3,4,5,1\n", "broken.csv")
    assert state.feedback.message_level == "error"
    assert "broken.csv" in state.feedback.message and "ragged" in state.feedback.message
    assert state.data is before  # the previous data stays
    # choosing another label column re-reads the same file
    assert state.upload(state.source.upload_bytes, "good.csv", "c")
    assert state.data.n_features == 3 and set(state.data.y) <= {0, 1}


def test_incompatible_method_is_explained(state):
    state.dataset = "wine"
    state.method = "lasso"
    assert not state.fit()
    assert state.feedback.message_level == "error" and "regressor" in state.feedback.message


def test_stop_keeps_the_last_model():
    s = ExplorerState(dataset="fsa-correlated", live=False)
    try:
        s.method = "fsa"
        s.set_param("n_iter", 20000)
        s.fit()
        import time

        for _ in range(200):
            if s.poll().records:
                break
            time.sleep(0.01)
        s.stop()
        s.wait(30)
        assert s.estimator is not None and s.estimator.stopped_early_
        assert "Stopped" in s.feedback.message
        assert s.estimator.n_iter_ < 20000
        assert s.estimator.predict(s.data.X_test).shape == (s.data.X_test.shape[0],)
    finally:
        s.close()


def test_step_runs_one_iteration_at_a_time(state):
    import time

    state.method = "fgm"
    state.set_param("B", 3)

    def until(cond):
        for _ in range(500):
            state.poll()
            if cond():
                return True
            time.sleep(0.01)
        return False

    state.step()
    assert until(lambda: state.fits.paused and len(state.records) == 1)
    assert "Outer iteration 1" in state.feedback.explanation
    state.step()
    assert until(lambda: state.fits.paused and len(state.records) == 2)
    assert "Outer iteration 2" in state.feedback.explanation
    state.run()  # resume to the end
    state.wait(30)
    assert not state.fits.paused and not state.fits.running and state.estimator is not None
    assert len(state.records) >= 2


def test_url_query_round_trip(state):
    problems = state.from_query({"dataset": ["digits-3v8"], "method": ["fgm"], "B": ["5"],
                                 "C": ["10"]}, fit=False)
    assert problems == []
    assert state.method == "fgm" and state.current_params()["B"] == 5
    query = _session.to_query(state.dataset, state.source, state.settings)
    assert query == {"dataset": "digits-3v8", "method": "fgm", "B": "5"}
    assert state.query_string() == "?dataset=digits-3v8&method=fgm&B=5"
    other = ExplorerState(live=False)
    try:
        other.from_query(_session.to_query(state.dataset, state.source, state.settings), fit=False)
        assert other.current_params() == state.current_params()
    finally:
        other.close()


def test_url_with_dataset_knobs_and_bad_values(state):
    problems = state.from_query({"dataset": "fsa-correlated", "data.n_samples": "200",
                                 "data.n_features": "100", "data.k_star": "3",
                                 "method": "fsa", "k": "3", "bogus": "1", "mu": "abc"},
                                fit=False)
    assert state.data.n_features == 100 and state.data.n_samples + state.data.X_test.shape[0]
    assert state.current_params()["k"] == 3
    assert any("bogus" in p for p in problems) and any("mu" in p for p in problems)
    assert state.feedback.message_level == "warning"


def test_url_bad_dataset_knobs_are_named_and_left_out(state):
    problems = state.from_query({"dataset": "fsa-correlated", "data.n_samples": "many",
                                 "data.colour": "red", "method": "fsa"}, fit=False)
    assert any(p.startswith("n_samples:") for p in problems)
    assert any("'fsa-correlated' has no parameter 'colour'" in p for p in problems)
    assert state.source.params == {} and state.data is not None  # defaults, nothing lost


def test_export_session_is_json_and_reproducible(tmp_path, state):
    state.method = "fgm"
    state.set_param("B", 4)
    state.fit()
    state.wait(30)
    session = json.loads(json.dumps(state.export_session(), indent=2))
    assert session["method"] == "fgm" and session["params"]["B"] == 4
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session))
    from explorer.cli import main

    out = tmp_path / "selected.csv"
    assert main(["run", str(path), "--out", str(out)]) == 0
    import pandas as pd

    table = pd.read_csv(out)
    assert sorted(table["feature"]) == sorted(state.estimator.selected_features_.tolist())


def test_sweep_streams_rows_for_method_and_baselines(state):
    state.method = "fisher"
    state.baselines = ["rfe"]
    assert state.sweep(n_points=4)
    update = state.wait(60)
    frame = state.sweeps.frame
    # the method, its baseline and the chance baseline (random columns), at the same k
    assert set(frame["method"]) == {"fisher", "rfe", "random"}
    own = state.current_params()["k"]
    fisher = frame[frame["method"] == "fisher"]
    assert own in set(fisher["value"])  # the user's setting is a point of its curve
    for other in ("rfe", "random"):
        assert list(frame[frame["method"] == other]["value"]) == list(fisher["value"])
    assert len(update.sweep_rows) == len(frame) == state.sweeps.total
    assert state.sweeps.progress == 100 and "finished" in state.sweeps.status
    assert frame["accuracy"].between(0, 1).all()
    assert (frame["cv"] == 5).all() and (frame["repeats"] == 2).all()
    assert (frame["accuracy_low"] <= frame["accuracy"]).all()
    current, choice = state.sweeps.marks("accuracy")
    mine = fisher[fisher["value"] == own].iloc[0]
    assert current == (mine["n_selected"], mine["accuracy"])
    best = fisher.loc[fisher["accuracy"].idxmax()]
    assert choice[1] >= best["accuracy"] - best["accuracy_se"]
    differences, verdicts, _ = state.sweeps.differences("accuracy")
    assert set(differences["other"]) == {"rfe", "random"}
    assert any(line.startswith("fisher against random:") for line in verdicts)


def test_a_compared_method_that_cannot_run_on_the_data_is_said_in_the_sweep():
    """ℓ1-SVM, the default comparison, on a regression target: the sweep's status says it is
    left out and why (it was dropped without a word when the data changed under it)."""
    s = ExplorerState(dataset="fsa-regression", live=False)
    try:
        s.method = "lasso"
        s.baselines = ["l1-svm"]
        assert s.sweep(n_points=2)
        assert "l1-svm left out: ℓ1-SVM is a classifier but the target is a regression " \
               "target" in s.sweeps.status
        s.wait(120)
        assert set(s.sweeps.frame["method"]) == {"lasso"}
        assert "l1-svm left out" in s.sweeps.status and "finished" in s.sweeps.status
    finally:
        s.close()


def test_a_setting_off_the_swept_knob_is_named_so_in_the_legend(state):
    """FGM set by B (k empty) has no point on a sweep over k: its legend entry says so, and
    once k is set the mark is the user's point again."""
    state.method = "fgm"
    state.baselines = []
    state.set_param("B", 3, refit=False)
    assert state.sweep(n_points=2)
    state.wait(120)
    assert state.sweeps.marks("accuracy")[0] is None
    assert state.sweeps.current_label == "current setting: not on the curve (k unset)"
    state.set_param("k", 4, refit=False)
    assert state.sweep(n_points=2)
    state.wait(120)
    assert state.sweeps.current_label == "current setting"
    assert state.sweeps.marks("accuracy")[0] is not None


def test_show_a_fitted_estimator():
    from explorer import FGM
    from explorer.data import make

    ds = make("digits-2v3").split()
    est = FGM(B=3).fit(ds.X, ds.y)
    s = ExplorerState(dataset=ds, estimator=est, live=False)
    try:
        assert s.method == "fgm" and s.records == est.history_
        assert s.current_params()["B"] == 3
        assert s.feedback.status.startswith(f"Selected: {est.n_selected_} features")
    finally:
        s.close()


def test_large_data_switches_live_off():
    s = ExplorerState(live=True)
    try:
        s.source.params = {"n_samples": 4000, "n_features": 10000, "n_test": 50}
        with __import__("param").parameterized.discard_events(s):
            s.dataset = "fgm-type1"
        s.load()
        assert not s.live and "live refits are off" in s.feedback.message
    finally:
        s.close()


def test_close_stops_the_worker(state):
    state.close()
    assert not state.fits.worker._thread.is_alive() or state.fits.worker._closed
    assert np.isfinite(1.0)


def test_grfl_gabor_gets_the_image_shape_and_warm_starts():
    s = ExplorerState(dataset="textures", live=False)
    try:
        s.method = "grfl"
        s.set_param("family", "gabor")
        s.set_param("max_features", 4)
        assert s.fit()
        s.wait(60)
        first = s.estimator
        assert first.family_.shape == s.data.image_shape
        assert len(first.generated_params_) == 4
        assert _status.test_scores(s.estimator, s.data)["accuracy"] > 0.8
        # more features continue from the learned ones instead of starting over
        s.set_param("max_features", 6)
        assert s.fit()
        s.wait(60)
        assert s.estimator.generated_params_[:4] == first.generated_params_
        assert len(s.estimator.generated_params_) == 6
    finally:
        s.close()


def test_a_failing_fit_says_so_in_message_and_status():
    s = ExplorerState(dataset="breast-cancer", live=False)
    try:
        s.method = "grfl"
        s.set_param("family", "gabor")
        assert s.fit()
        update = s.wait(30)
        assert update.finished and not s.fits.running
        assert s.feedback.message_level == "error" and "image_shape" in s.feedback.message
        assert "failed" in s.feedback.status and "running" not in s.feedback.status
    finally:
        s.close()


def test_status_shows_the_models_test_measures(state):
    state.method = "fgm"
    state.fit()
    state.wait(30)
    accuracy = _status.test_scores(state.estimator, state.data)["accuracy"]
    line = state.feedback.status
    assert f"test accuracy {accuracy:.3f}" in line and "test F1" in line


def test_fsa_regression_settings_are_compatible_with_a_regression_target():
    """The check used to look at a default (classifying) FSA and refused loss="squared"."""
    s = ExplorerState(dataset="fsa-regression", live=False)
    try:
        s.method = "fsa"
        s.set_param("loss", "squared")
        assert s.fit()
        s.wait(60)
        assert s.estimator is not None and "test RMSE" in s.feedback.status
        s.set_param("loss", "logistic")
        assert not s.fit() and "classifier" in s.feedback.message
    finally:
        s.close()


def test_a_stop_ends_the_fit_within_an_inner_step_and_says_stopped():
    s = ExplorerState(dataset="fgm-type1", live=False)
    try:
        s.method = "fgm"
        for name, value in dict(B=2, max_outer=200, tol=0, inner_tol=1e-12,
                                max_inner=5000).items():
            s.set_param(name, value)
        s.fit()
        while len(s.records) < 3:
            s.poll()
            time.sleep(0.01)
        s.stop()
        assert s.fits.worker.wait(2.0)  # far less than one outer iteration of 5,000 APG steps
        s.poll()
        assert "stopped" in s.feedback.status and s.estimator.stopped_early_
    finally:
        s.close()


def test_an_upload_above_the_limit_is_refused_with_a_message(state, monkeypatch):
    monkeypatch.setenv("EXPLORER_MAX_UPLOAD_MB", "0.001")
    before = state.data
    assert not state.upload(b"a,b,label\n" + b"1,2,0\n" * 400, "big.csv")
    said = state.feedback.message
    assert "upload limit of 0.001 MB" in said and "--data" in said
    assert state.data is before


def test_served_local_files_are_datasets(tmp_path, monkeypatch):
    """`explorer serve --data PATH` offers a file too big to upload, by its name."""
    path = tmp_path / "local.csv"
    path.write_text("a,b,label\n" + "".join(f"{i % 5},{i % 3},{i % 2}\n" for i in range(40)))
    monkeypatch.setenv("EXPLORER_DATA", str(path))
    from explorer.ui._state import available_datasets

    assert "local.csv" in available_datasets()
    s = ExplorerState(dataset="local.csv", live=False, start_worker=False)
    assert s.data.n_features == 2 and "Loaded local.csv" in s.feedback.message
    assert s.from_query({"dataset": "local.csv", "method": "fisher"}, fit=False) == []


def test_the_last_record_is_explained_when_the_end_comes_in_a_later_poll():
    """The worker's last record and its 'done' can arrive in different polls (a busy server):
    the explanation box must still show the last iteration."""
    from explorer import FGM
    from explorer.ui._worker import Event

    s = ExplorerState(dataset="digits-3v8", live=False, start_worker=False)
    try:
        est = FGM(B=2, max_outer=2).fit(s.data.X, s.data.y)
        s.fits.running, s.fits.token = True, 5
        for record in est.history_:
            s._events.put(Event("record", 5, record))
        s.poll()
        assert s.feedback.explanation == ""  # still running: nothing to explain yet
        s._events.put(Event("done", 5, est))
        s.poll()
        assert f"Outer iteration {len(est.history_)}" in s.feedback.explanation
    finally:
        s.close()


@pytest.mark.parametrize(("dataset", "loss", "task"), [("fsa-ranking", "ranking", "ranking"),
                                                       ("fsa-regression", "squared",
                                                        "regression")])
def test_fsa_takes_the_loss_of_the_loaded_target(dataset, loss, task):
    """FSA on its own ranking or regression data: the loss that fits the target is set (and
    said), not a refusal telling the user FSA is a classifier; both orders of choosing."""
    s = ExplorerState(dataset=dataset, live=False)
    try:
        s.method = "fsa"
        assert s.current_params()["loss"] == loss
        assert s.feedback.message_level == "info" and f"loss = '{loss}' for this {task} target" in \
            s.feedback.message
        assert s.fit()
        update = s.wait(60)
        assert update.finished and s.estimator.loss == loss and s.estimator.n_selected_ == 10
        # the status line's measure is the task's: pairwise accuracy inside each query for a
        # ranking (its scores have no scale of the grades: an RMSE of them said nothing)
        headline = _status.headline_scores(s.estimator, s.data)
        assert set(headline) == ({"pairwise"} if task == "ranking" else {"rmse", "r2"})
        if task == "ranking":
            assert 0.6 < headline["pairwise"] <= 1.0
            assert "test pairwise accuracy" in s.feedback.status and "RMSE" not in s.feedback.status
        assert f"loss={loss}" in s.query_string()  # the URL carries the setting
        s.dataset = "fsa-correlated"  # back to labels: the classifier's loss again
        assert s.current_params()["loss"] == "logistic" and "for this classification" in \
            s.feedback.message
    finally:
        s.close()


def test_a_default_larger_than_the_data_is_cut_to_it():
    """FS-Manifold's m = 20 on the 13 features of wine: the default is cut to 13, as the
    slider's range is, and the fit runs (it failed with 'm=20 is larger than the number of
    features'); a value the user sets beyond it is still refused by the fit."""
    s = ExplorerState(dataset="wine", live=False)
    try:
        s.method = "fs-manifold"
        assert s.current_params()["m"] == 13
        assert s.fit()
        update = s.wait(60)
        assert update.finished and s.estimator.n_selected_ == 13
        assert s.export_session()["params"]["m"] == 13
    finally:
        s.close()


def test_an_unfit_method_names_the_ones_that_fit():
    s = ExplorerState(dataset="fsa-regression", live=False)
    try:
        s.method = "fgm"
        assert not s.fit()
        assert s.feedback.message_level == "error"
        assert "FGM is a classifier but the target is a regression target; methods for it:" \
            in s.feedback.message
        assert "Lasso" in s.feedback.message and "FSA (loss='squared')" in s.feedback.message
    finally:
        s.close()


def test_a_one_vs_rest_fit_reports_the_models_selection_not_a_members():
    """10 digit classes, FGM (binary: one fit per class): the status counts the model's
    features (the union of the members'), names the class whose objective it shows, and the
    explanation says which class's fit it describes."""
    s = ExplorerState(dataset="digits", live=False)
    try:
        s.method = "fgm"
        s.set_param("B", 2)
        s.set_param("max_outer", 3)
        assert s.fit()
        s.wait(120)
        est = s.estimator
        last = est.classes_[-1]
        assert len(est.classes_) == 10 and est.n_selected_ > s.records[-1].n_selected
        assert s.feedback.status.startswith(
            f"Selected: {est.n_selected_} features (the union over 10 one-vs-rest fits; "
            f"class {last}: {s.records[-1].n_selected}) · class {last}'s objective ")
        assert "done" in s.feedback.status and "test accuracy" in s.feedback.status
        assert s.feedback.explanation.startswith(f"Class {last} against the rest")
    finally:
        s.close()


@pytest.mark.parametrize("measure, first, absent", [("prbep", "PRBEP", "accuracy"),
                                                    ("f1", "F1", None)])
def test_status_leads_with_the_measure_the_model_was_trained_for(state, measure, first,
                                                                  absent):
    state.method = "fs-multi"
    state.set_param("measure", measure)
    state.fit()
    state.wait(60)
    scores = state.feedback.status.split(" · test ")[1:]
    assert scores[0].startswith(f"{first} ") and "(trained for it)" in scores[0]
    if absent:
        assert f"test {absent}" not in state.feedback.status
        assert "ranking measure sets no threshold" in state.feedback.status


def test_auto_knobs_report_the_values_the_fit_used(state):
    state.method = "fs-multi"
    state.fit()
    state.wait(60)
    used = state.settings.used_auto_values(state.estimator, state.data)
    assert used["C"] == pytest.approx(0.1 * state.data.n_samples)
    # FGM's k on auto is the paper's count at B: its disabled slider shows the features the
    # model holds, not a default of 10 beside 28-31 kept ones
    state.method = "fgm"
    state.fit()
    state.wait(60)
    used = state.settings.used_auto_values(state.estimator, state.data)
    assert used["k"] == state.estimator.n_selected_ and used["B"] == 10
    state.set_param("C", "cv", refit=False)
    state.fit()
    state.wait(120)
    assert state.settings.used_auto_values(state.estimator, state.data)["C"] == \
        state.estimator.C_


def test_ticking_warm_start_alone_does_not_refit_and_a_warm_model_says_it_is_not_in_the_url():
    s = ExplorerState(dataset="fgm-type1", live=True)
    try:
        s.method = "fgm"
        s.set_param("B", 10)
        s.wait(60)
        fits = s.fits.token
        s.set_param("warm_start", True)
        assert s.fits.token == fits  # the box alone starts no fit
        s.set_param("B", 7)
        s.wait(60)
        assert s.records[-1].info.get("warm_start")
        assert "warm-started from the previous fit" in s.feedback.status
        assert "warm_start=True" in s.query_string()
        cold = ExplorerState(dataset="fgm-type1", live=False)
        try:  # the URL of this view gives a cold fit: the status of a warm one said so
            cold.from_query(_session.to_query(s.dataset, s.source, s.settings), fit=False)
            cold.fit()
            cold.wait(60)
            assert not cold.records[-1].info.get("warm_start")
            assert "warm-started" not in cold.feedback.status
        finally:
            cold.close()
    finally:
        s.close()


def test_a_running_fits_status_line_is_rationed_but_never_left_behind():
    """The first record shows at once; while the fit runs, the line changes at most every
    STATUS_EVERY_S; a record it skipped is shown once that time has passed, and the end at
    once."""
    import time as clock

    from explorer import FGM
    from explorer.ui._status import STATUS_EVERY_S
    from explorer.ui._worker import Event

    s = ExplorerState(dataset="digits-3v8", live=False, start_worker=False)
    try:
        est = FGM(B=2, max_outer=6, tol=0).fit(s.data.X, s.data.y)
        records = est.history_
        assert len(records) >= 4
        s.fits.running, s.fits.token = True, 9
        s._events.put(Event("record", 9, records[0]))
        s.poll()
        assert "iteration 1 " in s.feedback.status
        s._events.put(Event("record", 9, records[1]))
        s.poll()
        assert "iteration 1 " in s.feedback.status  # within the ration: not yet
        clock.sleep(STATUS_EVERY_S + 0.05)
        s.poll()  # no new record, but the one skipped is shown now
        assert "iteration 2 " in s.feedback.status and len(s.records) == 2
        for record in records[2:]:
            s._events.put(Event("record", 9, record))
        s._events.put(Event("done", 9, est))
        s.poll()
        assert f"iteration {len(records)} " in s.feedback.status and "done" in s.feedback.status
    finally:
        s.close()


def test_a_refused_fit_says_so_and_its_message_goes_with_the_next_fit():
    s = ExplorerState(dataset="wine", live=False)
    try:
        s.method = "lasso"  # a regressor on class labels: refused before it starts
        assert not s.fit()
        assert s.feedback.message_level == "error" and "regressor" in s.feedback.message
        assert s.feedback.status == _status.REFUSED and s.estimator is None
        s.method = "fgm"
        assert s.fit()
        assert s.feedback.message == ""  # the refusal belonged to the lasso's fit
        s.wait(60)
        assert s.feedback.status.startswith("Selected:") and "done" in s.feedback.status
    finally:
        s.close()


def test_an_image_shape_by_hand_by_url_and_in_the_session(tmp_path):
    import scipy.io

    rng = np.random.default_rng(0)
    path = tmp_path / "faces.mat"
    scipy.io.savemat(path, {"X": rng.random((60, 1024)), "Y": np.repeat(np.arange(15), 4)})
    s = ExplorerState(dataset="digits-3v8", live=False)
    try:
        assert s.upload(path.read_bytes(), "faces.mat")
        assert s.data.image_shape == (32, 32) and "guessed" in s.feedback.message
        assert s.set_image_shape("64x16") and s.data.image_shape == (64, 16)
        assert s.export_session()["image_shape"] == [64, 16]
        assert not s.set_image_shape("30x30") and s.data.image_shape == (64, 16)
        assert "900 pixels and the data have 1,024 features" in s.feedback.message
        assert s.set_image_shape("none") and s.data.image_shape is None
        assert "image=none" in s.query_string()
        s.dataset = "digits-3v8"
        problems = s.from_query({"dataset": "digits-3v8", "image": "4x16"}, fit=False)
        assert not problems and s.data.image_shape == (4, 16)
        problems = s.from_query({"dataset": "digits-3v8", "image": "9x9"}, fit=False)
        assert problems == ["image: 9 × 9 has 81 pixels and the data have 64 features"]
        assert s.data.image_shape == (8, 8)
    finally:
        s.close()


def test_a_url_asking_for_more_features_than_the_data_have_is_ignored_as_one_below_zero():
    s = ExplorerState(dataset="digits-3v8", live=False)
    try:
        problems = s.from_query({"dataset": "digits-3v8", "method": "fsa", "k": "99999"},
                                fit=False)
        assert problems == ["k: 99999 is above the 64 features of this dataset"]
        assert s.current_params()["k"] == 10 and "Ignored in the URL" in s.feedback.message
        assert s.from_query({"dataset": "digits-3v8", "method": "fsa", "k": "0"},
                            fit=False) == ["k: k=0 is below its minimum 1"]
    finally:
        s.close()


def test_grfl_is_swept_at_k_and_paired_and_a_method_without_a_count_says_why(monkeypatch):
    """GrFL is asked for k inputs (its ``k``): swept at the baselines' k and paired with them
    fold for fold; a method that cannot be asked for k says why it has no difference."""
    from explorer.ui import _sweeps

    s = ExplorerState(dataset="xor", live=False)
    try:
        s.set_dataset_param("n_samples", 200)
        s.set_dataset_param("n_features", 6)
        s.method = "grfl"
        s.set_param("max_features", 3)
        s.baselines = ["fisher"]
        assert s.sweep(n_points=2)
        s.wait(240)
        assert s.sweeps.finished
        table, verdicts, note = s.sweeps.differences("accuracy")
        assert not table.empty and verdicts and note == ""
        assert any("grfl" in v and "fisher" in v for v in verdicts)
        monkeypatch.setattr(_sweeps, "counts_features", lambda name: name != "grfl")
        _, verdicts, note = s.sweeps.differences("accuracy")
        assert verdicts == [] and "grfl is swept over its own max_features" in note
    finally:
        s.close()


def test_the_status_says_a_fit_waits_for_the_compiler_not_for_a_queue():
    from explorer.ui._fit_session import Update

    pacer = _status.StatusPacer()
    shown = pacer.after_poll(Update(queued=1), records=[], running=True, paused=False,
                             has_model=False, warming=0.4)
    assert shown.text == ("Selected: – features · waiting while the numerical kernels "
                          "compile once after an install (40% done)")
    shown = pacer.after_poll(Update(queued=2), records=[], running=True, paused=False,
                             has_model=False)
    assert shown.text == "Selected: – features · queued (2 ahead)"


def test_an_uploaded_mat_file_and_its_image_shape_reproduce_with_explorer_run(tmp_path,
                                                                              capsys):
    import scipy.io

    from explorer.cli import main
    from explorer.data import make_faces

    faces = make_faces(5, 6, 16)
    path = tmp_path / "faces.mat"
    scipy.io.savemat(path, {"X": faces.X, "Y": faces.y[:, None]})
    s = ExplorerState(dataset="digits-3v8", live=False)
    try:
        assert s.upload(path.read_bytes(), "faces.mat") and s.set_image_shape("8x32")
        s.method = "fsa"
        s.set_param("k", 6)
        s.fit()
        s.wait(60)
        session = s.export_session()
        assert session["dataset"] == "faces.mat" and session["image_shape"] == [8, 32]
        saved = tmp_path / "session.json"
        saved.write_text(json.dumps(session))
        out = tmp_path / "selected.csv"
        assert main(["run", str(saved), "--out", str(out)]) == 0  # the file beside it
        import pandas as pd

        assert sorted(pd.read_csv(out)["feature"]) == \
            sorted(s.estimator.selected_features_.tolist())
        assert "5 classes" in capsys.readouterr().out
    finally:
        s.close()
