"""Headless rendering: build the Bokeh models of the views and assert on their data."""

from __future__ import annotations

import re

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import pytest
from bokeh.models import ColumnDataSource, GlyphRenderer, Title

from explorer import FGM, FSA, viz
from explorer.data import make
from explorer.texts import explain
from explorer.ui import (
    AccuracyView,
    ConvergenceView,
    ExplorerApp,
    SelectedTable,
    SparsityView,
)
from explorer.ui._tabs import ViewTab, ViewTabs  # noqa: E402

hv.extension("bokeh")


@pytest.fixture(scope="module")
def fgm_fit():
    ds = make("digits-3v8").split()
    return ds, FGM(B=4, feature_scaling=None).fit(ds.X, ds.y)


@pytest.fixture(scope="module")
def fsa_fit():
    ds = make("fsa-correlated", n_samples=300, n_features=120, k_star=4)
    return ds, FSA(k=4, n_iter=60).fit(ds.X, ds.y)


def _sources(model):
    return [r.data_source for r in model.select({"type": GlyphRenderer})
            if isinstance(r.data_source, ColumnDataSource)]


def _render(element):
    return hv.render(element, backend="bokeh")


def test_convergence_frames_match_the_records(fgm_fit):
    from explorer.viz._frames import MAX_TRACE_POINTS

    _, est = fgm_fit
    conv, bounds, kept, end = viz.convergence_frames(est.history_)
    total = sum(len(r.info["inner_objective"]) for r in est.history_)
    drawn = sum(min(len(r.info["inner_objective"]), MAX_TRACE_POINTS) for r in est.history_)
    assert end == total and len(conv) <= drawn and conv["step"].is_monotonic_increasing
    # each record's points sit on its own inner steps and are its trace's values there,
    # its first and last step included
    step = 0
    for record in est.history_:
        trace = np.asarray(record.info["inner_objective"], dtype=float)
        mine = conv[conv["outer"] == record.iteration + 1]
        at = mine["step"].to_numpy() - step
        assert at[0] == 0 and at[-1] == trace.size - 1 and np.all(np.diff(at) > 0)
        np.testing.assert_array_equal(mine["objective"].to_numpy(), trace[at.astype(int)])
        step += trace.size
    assert list(bounds["outer"]) == [r.iteration + 1 for r in est.history_]
    assert (bounds["upper"] >= bounds["lower"] - 1e-9).all()
    assert kept["n_selected"].tolist() == [r.n_selected for r in est.history_]


def test_convergence_view_streams_into_its_plots(fgm_fit):
    _, est = fgm_fit
    view = ConvergenceView()
    view.push(est.history_[:1])
    first = view.n_points
    view.push(est.history_[1:])
    assert view.n_points == len(viz.convergence_frames(est.history_)[0]) > first
    root = pn.panel(view).get_root()
    xs = [np.asarray(src.data.get("step", [])) for src in _sources(root)]
    assert any(x.size == view.n_points for x in xs)
    view.reset()
    assert view.n_points == 0


def _drawn(root) -> list[tuple[str, dict]]:
    """Every glyph's data as drawn: (glyph type, column → values), in a stable order."""
    out = []
    for renderer in root.select({"type": GlyphRenderer}):
        data = renderer.data_source.data
        out.append((type(renderer.glyph).__name__,
                    {key: np.asarray(data[key]).tolist() for key in sorted(data)}))
    return sorted(out, key=repr)


@pytest.mark.parametrize("first_loss", ["squared_hinge", "logistic"])
def test_a_refit_draws_only_the_new_fit(fgm_fit, first_loss):
    """One setting → one result: after a refit (the app's replace at each new fit), and
    while a fit streams in record by record, every plot holds exactly the rows of that fit's
    records. HoloViews streams a Buffer's sends into the browser's source when an element
    holds the buffer's own data: after an emptied buffer the previous fit's rows stayed (the
    selected-features and gap plots drew both fits), and the upper bound's steps-post line
    (2n − 1 points for n records) kept only its last n points."""
    ds, _ = fgm_fit
    old = FGM(B=5, loss=first_loss).fit(ds.X, ds.y).history_
    new = FGM(B=3, loss="logistic").fit(ds.X, ds.y).history_
    assert len(old) != len(new)

    def view_root():
        view = ConvergenceView()
        view.configure_for(FGM)
        return view, pn.panel(view).get_root()

    refit, refit_root = view_root()
    refit.replace(old)
    refit.replace(new)
    streamed, streamed_root = view_root()
    streamed.replace(old)
    streamed.replace(new[:1])
    for record in new[1:]:
        streamed.push([record])
    once, once_root = view_root()
    once.replace(new)
    drawn = _drawn(once_root)
    assert _drawn(refit_root) == drawn and _drawn(streamed_root) == drawn
    # and what is drawn is the records', independently of the views
    kept = [cols for _, cols in drawn if "n_selected" in cols]
    assert kept and all(cols["n_selected"] == [r.n_selected for r in new] for cols in kept)
    _, bounds, _, _ = viz.convergence_frames(new)
    upper = [cols for glyph, cols in drawn if glyph == "Line" and "upper" in cols
             and "step" in cols]
    assert len(upper) == 1 and len(upper[0]["upper"]) == 2 * len(bounds) - 1
    assert upper[0]["upper"][::2] == bounds["upper"].tolist()
    assert upper[0]["step"][0] == bounds["step"].iloc[0]


def test_a_view_displayed_again_after_a_refit_draws_the_refit(fgm_fit):
    """A notebook shows a view, the user refits and displays the same view again (a new
    Bokeh root): the new plots draw the refit. The DynamicMaps kept the element of their
    first draw, and every plot drawn later from them started from the first fit's data."""
    ds, _ = fgm_fit
    old = FGM(B=5).fit(ds.X, ds.y)
    new = FGM(B=3, loss="logistic").fit(ds.X, ds.y)
    assert old.history_[-1].iteration != new.history_[-1].iteration  # the titles differ
    view = ConvergenceView()
    view.configure_for(FGM)
    view.replace(old.history_)
    first = pn.panel(view).get_root()
    view.replace(new.history_)
    drawn = _drawn(pn.panel(ConvergenceView(estimator=new)).get_root())
    assert _drawn(pn.panel(view).get_root()) == drawn and _drawn(first) == drawn

    sparsity = SparsityView(dataset=ds)
    sparsity.show(old.history_)
    pn.panel(sparsity).get_root()
    sparsity.show(new.history_)
    titles = [t.text for t in pn.panel(sparsity).get_root().select({"type": Title})]
    assert f"iteration {new.history_[-1].iteration + 1}" in " ".join(titles)

    def frame(method, accuracy):
        n = len(accuracy)
        return pd.DataFrame({"method": [method] * n, "n_selected": np.arange(1, n + 1),
                             "accuracy": accuracy, "value": np.ones(n), "fit_time": 0.1})

    accuracy = AccuracyView(frame=frame("a", [0.6, 0.8]))
    pn.panel(accuracy).get_root()
    accuracy.show(frame("b", [0.5, 0.7, 0.9]))
    ys = [list(src.data["accuracy"]) for src in _sources(pn.panel(accuracy).get_root())
          if "accuracy" in src.data and len(src.data["accuracy"])]
    assert ys and all(y == [0.5, 0.7, 0.9] for y in ys)


def test_convergence_view_of_a_fitted_estimator_hides_absent_bounds(fsa_fit):
    _, est = fsa_fit
    view = ConvergenceView(estimator=est)
    assert view.n_points == est.n_iter_ and not view.bounds_box.visible
    assert ConvergenceView(estimator=FGM()).bounds_box.visible


def test_a_refinement_is_drawn_as_its_own_curve(fgm_fit):
    """FGM(refine='auto')'s last record refits the ℓ2 model on the kept features: another
    objective than the path's, so it is drawn as a separate dashed curve that does not join
    the path's line, and its start is not marked as an outer iteration."""
    ds, _ = fgm_fit
    est = FGM(B=3, refine="auto").fit(ds.X, ds.y)
    refit = est.history_[-1]
    assert refit.info["refine"] == "auto"
    conv, _, _, _ = viz.convergence_frames(est.history_)
    mine = conv[conv["refit"]]
    assert len(mine) and (mine["outer"] == refit.iteration + 1).all()
    assert not conv[~conv["refit"]]["outer"].eq(refit.iteration + 1).any()
    view = ConvergenceView()
    view.push(est.history_)
    root = pn.panel(view).get_root()
    lines = {}  # dashed or not → the objective values of the lines drawn
    for renderer in root.select({"type": GlyphRenderer}):
        data = renderer.data_source.data
        if type(renderer.glyph).__name__ == "Line" and "objective" in data:
            lines[bool(list(renderer.glyph.line_dash))] = np.asarray(data["objective"])
    np.testing.assert_allclose(lines[True], mine["objective"])  # the dashed line: the refit
    np.testing.assert_allclose(lines[False], conv[~conv["refit"]]["objective"])
    marks = viz.outer_marks(conv).data
    assert refit.iteration + 1 not in set(marks["outer"])

    def legend_labels():
        from bokeh.models import Legend

        return {getattr(item.label, "value", item.label) for legend in root.select({"type": Legend})
                for item in legend.items}

    assert "ℓ2 refit (kept features)" in legend_labels()
    view.replace(FGM(B=3).fit(ds.X, ds.y).history_)  # the next fit has no refinement
    assert "ℓ2 refit (kept features)" not in legend_labels() and "objective" in legend_labels()


def test_sparsity_image_on_the_pixel_grid(fgm_fit):
    ds, est = fgm_fit
    element = SparsityView._render({"records": est.history_, "dataset": ds})
    fig = _render(element)
    images = [src.data["image"][0] for src in _sources(fig) if "image" in src.data]
    assert len(images) == 2 and images[0].shape == images[1].shape == (8, 8)
    weights = next(i for i in images if np.isnan(i).any())
    mean = next(i for i in images if not np.isnan(i).any())
    assert mean.max() > 10  # the mean digit under the weights
    painted = np.count_nonzero(np.isfinite(weights))  # only weighted pixels are painted
    assert painted == est.history_[-1].n_selected
    points = [src for src in _sources(fig) if "x" in src.data and "image" not in src.data]
    assert any(len(src.data["x"]) == est.history_[-1].n_selected for src in points)


def test_entry_exit_map_marks_true_features(fsa_fit):
    ds, est = fsa_fit
    matrix, cols = viz.selection_matrix(est.history_, ds.n_features)
    assert matrix.shape == (len(est.history_), cols.size)
    np.testing.assert_array_equal(matrix[0].sum(), est.history_[0].n_selected)
    assert matrix[-1].sum() == 4
    element = SparsityView._render({"records": est.history_, "dataset": ds})
    fig = _render(element)
    marks = [src for src in _sources(fig) if "x" in src.data and "image" not in src.data]
    assert sum(len(src.data["x"]) for src in marks) == np.isin(cols, ds.truth).sum()


def test_group_blocks_are_drawn():
    ds = make("fgm-groups", n_samples=200, n_groups=30, group_size=5,
              n_informative_groups=3, n_test=50)
    est = FGM(B=2, max_outer=3).fit(ds.X, ds.y, groups=ds.groups)
    element = SparsityView._render({"records": est.history_, "dataset": ds})
    segments = element.traverse(lambda x: x, [hv.Segments])[0]
    assert len(segments) >= 1  # one boundary between the groups that were selected


def test_accuracy_plot_has_one_curve_per_method():
    frame = pd.DataFrame({"method": ["a", "a", "b", "b", "b"], "n_selected": [1, 5, 2, 4, 8],
                          "accuracy": [0.6, 0.8, 0.5, 0.7, 0.9], "value": [1, 2, 3, 4, 5],
                          "fit_time": [0.1] * 5})
    overlay = viz.accuracy_plot(frame, "accuracy")
    curves = overlay.traverse(lambda x: x, [hv.Curve])
    assert sorted(len(c) for c in curves) == [2, 3]
    view = AccuracyView(frame=frame)
    root = pn.panel(view).get_root()
    ys = [list(src.data["accuracy"]) for src in _sources(root) if "accuracy" in src.data]
    assert [0.6, 0.8] in ys


def test_selected_table_and_csv(fgm_fit):
    ds, est = fgm_fit
    frame = viz.selected_table(est, ds)
    assert len(frame) == est.n_selected_
    assert frame["weight_per_sd"].abs().is_monotonic_decreasing
    assert frame["name"].iloc[0].startswith("r")  # pixel names r{row}c{col}
    table = SelectedTable(frame)
    csv = table._csv().getvalue()
    assert csv.splitlines()[0].startswith("feature,name,weight")
    assert len(csv.splitlines()) == est.n_selected_ + 1


def test_the_selected_table_compares_features_in_different_units_per_sd():
    """pd-speech's features span units from 1e-6 to 1e10: their weights in their own units
    span 1e-4 to 1e5, so the table ranks the features by the change one standard deviation
    makes, and says it."""
    import warnings

    from explorer import FSA
    from explorer.data import load

    ds = load("pd-speech")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FSA(k=20).fit(ds.X, ds.y)
    frame = viz.selected_table(est, ds)
    X = np.asarray(ds.X)
    np.testing.assert_allclose(frame["weight_per_sd"],
                               frame["weight"] * X[:, frame["feature"]].std(axis=0), rtol=1e-9)
    assert frame["abs_weight"].max() > 1e6 * frame["abs_weight"].min()  # units apart
    # the largest raw weight (a small-unit column's) is not first: per sd it is ordinary
    assert frame["abs_weight"].iloc[0] < frame["abs_weight"].max()
    table = SelectedTable(frame)
    assert table.sort.value.startswith("largest |weight × sd|")
    table.sort.value = "largest |weight| first"
    assert table.sorted_frame()["abs_weight"].iloc[0] == frame["abs_weight"].max()


def test_teaching_frames(fgm_fit, fsa_fit):
    _, est = fgm_fit
    frame = viz.candidate_scores(est.history_[1])
    assert frame["chosen"].sum() == 4 and frame["score"].is_monotonic_decreasing
    _, fsa = fsa_fit
    paths = viz.coefficient_paths(fsa.history_, max_features=10)
    assert paths["feature"].nunique() == 10
    assert set(fsa.selected_features_) <= set(paths["feature"])


def test_whole_app_builds_headless():
    app = ExplorerApp(dataset="digits-3v8")
    app.state.live = False
    root = pn.panel(app).get_root()
    classes = {c for m in root.references() for c in (getattr(m, "css_classes", None) or [])}
    for needed in ("select-dataset", "select-method", "btn-run", "btn-stop", "btn-step",
                   "status-line", "param-B", "param-C"):
        assert needed in classes, needed
    app.state.close()


def test_long_inner_traces_are_thinned_on_their_true_steps():
    from explorer.methods.base import IterationRecord
    from explorer.viz._frames import MAX_TRACE_POINTS

    trace = np.linspace(10.0, 1.0, 5000)
    records = [IterationRecord(t, 5000, float(trace[-1]), 1, np.array([t]), 0.0,
                               info={"inner_objective": trace}) for t in range(2)]
    conv, _, _, nxt = viz.convergence_frames(records)
    assert nxt == 10_000 and len(conv) <= 2 * MAX_TRACE_POINTS
    first = conv[conv["outer"] == 1]
    assert first["step"].iloc[0] == 0 and first["step"].iloc[-1] == 4999
    np.testing.assert_allclose(first["objective"], trace[first["step"].astype(int)])
    assert conv[conv["outer"] == 2]["step"].iloc[0] == 5000


def test_log_ranges_span_whole_decades_around_every_gap():
    from explorer.viz._elements import decades

    assert decades([]) == (None, None)
    assert decades([np.nan, 0.0]) == (None, None)  # no certified gap yet
    assert decades([1e-12]) == (1e-13, 1e-11)      # a closed gap, at the plot's floor
    assert decades([1000.0]) == (100.0, 10000.0)   # a power of ten is not on an edge
    assert decades([7000.0, 3.0, 2.9]) == (1.0, 10000.0)


def test_log_spans_and_ticks_keep_every_objective_inside_and_labelled():
    from explorer.viz._elements import log_span, log_ticks

    assert log_span([]) == (None, None) and log_ticks(None, None) is None
    low, high = log_span([0.94498])  # a one-record fit: inside, off both edges
    assert 0.8 < low < 0.94498 < high < 1.1 and log_ticks(low, high) is None
    low, high = log_span([4.2, 0.111, 1.3])  # FSA: no value below the lowest label's decade
    assert low < 0.111 and high > 4.2
    assert log_ticks(low, high) == pytest.approx([0.1, 0.2, 0.5, 1, 2, 5])
    ticks = log_ticks(*log_span([1e-3, 1e9]))  # thinned to powers, then every other one
    assert len(ticks) <= 8 and ticks[0] == pytest.approx(1e-3) and ticks[-1] == pytest.approx(1e9)


def test_the_objective_axis_is_logarithmic_around_every_drawn_value(fgm_fit):
    """The objective falls by decades in its first steps (here 128 → 0.3 in two): on a
    linear axis the rest of the fit was a flat line on the floor."""
    from bokeh.models import LogScale, Plot

    _, est = fgm_fit
    root = pn.panel(ConvergenceView(estimator=est)).get_root()
    plot, = [m for m in root.select({"type": Plot}) if m.title is not None
             and m.title.text.startswith("objective")]
    assert isinstance(plot.y_scale, LogScale) and "log scale" in plot.yaxis[0].axis_label
    drawn = np.concatenate([np.asarray(src.data["objective"], dtype=float)
                            for src in _sources(plot) if "objective" in src.data])
    drawn = drawn[np.isfinite(drawn)]
    assert drawn.size and drawn.max() / drawn.min() > 100
    assert 0 < plot.y_range.start < drawn.min() and drawn.max() < plot.y_range.end


def test_fsa_schedule_is_drawn_on_a_log_axis_covering_it(fsa_fit):
    """FSA's kept count falls from all variables to k in a few of its iterations: on a log
    axis (FSA only; a path's growing count stays linear) every count and M_e is inside."""
    from bokeh.models import LinearScale, LogScale, Plot

    def kept_plot(view):
        plot, = [m for m in pn.panel(view).get_root().select({"type": Plot})
                 if m.title is not None and m.title.text.startswith("#features")]
        return plot

    _, est = fsa_fit
    plot = kept_plot(ConvergenceView(estimator=est))
    counts = np.array([r.n_selected for r in est.history_] + [r.info["M_e"] for r in
                                                              est.history_], dtype=float)
    assert counts.max() / counts.min() > 3
    assert isinstance(plot.y_scale, LogScale) and "log scale" in plot.yaxis[0].axis_label
    assert 0 < plot.y_range.start < counts.min() and counts.max() < plot.y_range.end
    path = ConvergenceView()
    path.configure_for(FGM)
    assert isinstance(kept_plot(path).y_scale, LinearScale)


def test_an_objective_of_zero_is_drawn_on_a_linear_axis():
    """A log axis cannot show 0 (degenerate data: a Fisher score sum of constant columns, a
    perfect fit): the view then draws the objective on a linear axis, streamed or not, and
    goes back to the log axis for a fit that allows it."""
    from bokeh.models import LinearScale, LogScale, Plot

    from explorer.methods.base import IterationRecord

    def records(values):
        return [IterationRecord(iteration=i, inner_steps=0, objective=v, n_selected=2,
                                selected=np.arange(2), elapsed=0.0)
                for i, v in enumerate(values)]

    def objective_plot(view):
        plot, = [m for m in pn.panel(view).get_root().select({"type": Plot})
                 if m.title is not None and m.title.text.startswith("objective")]
        return plot

    view = ConvergenceView()
    view.configure_for(FSA)
    view.replace(records([2.0, 0.0]))
    plot = objective_plot(view)
    assert isinstance(plot.y_scale, LinearScale) and "log" not in plot.title.text
    assert plot.y_range.start <= 0.0 and plot.y_range.end >= 2.0
    view.replace(records([2.0, 0.5]))
    assert isinstance(objective_plot(view).y_scale, LogScale)
    view.push(records([0.0]))  # streamed in during a fit
    assert isinstance(objective_plot(view).y_scale, LinearScale)
    assert view.n_points == 3


def test_a_finished_fit_draws_its_map_with_its_last_curves():
    """When a fit ends, the tick that draws its last curves draws its sparsity map too: the
    map used to wait for the drawing budget, 2–5 s in which the page showed the new fit's
    'done' and curves beside the previous fit's map."""
    import time

    from explorer.ui import app as app_module

    app = ExplorerApp(dataset="digits-3v8")
    app.state.live = False
    pn.panel(app).get_root()
    try:
        for B in (5, 3):  # a first fit, then a refit whose map must not lag
            app.state.set_param("B", B, refit=False)
            assert app.state.run()
            deadline = time.perf_counter() + 60
            while True:
                assert time.perf_counter() < deadline, "the fit's curves were never drawn"
                app_module.DRAWING.next_free = 0.0  # other sessions' turns are not tested here
                app._tick()
                records = app.state.records
                curves_done = not app.state.fits.running and records and \
                    len(app.convergence._kept.data) == len(records)
                if curves_done:
                    break
                time.sleep(0.02)
            drawn = app.sparsity._pipe.data["records"]
            assert len(drawn) == len(records) and drawn[-1] is records[-1]
    finally:
        app.state.close()


def test_a_finished_fit_is_drawn_whatever_the_drawing_budget():
    """Under a class's load the shared drawing budget is always spent by other sessions: a
    finished fit's last frame — its curves and its map — is drawn on the tick after its
    'done' all the same (a page read 'Selected: 33 features … done' over empty plots)."""
    import time

    from explorer.ui import app as app_module

    app = ExplorerApp(dataset="digits-3v8")
    app.state.live = False
    pn.panel(app).get_root()
    try:
        app.state.set_param("B", 5, refit=False)
        assert app.state.run()
        deadline = time.perf_counter() + 60
        while app.state.fits.running:
            assert time.perf_counter() < deadline
            app_module.DRAWING.next_free = time.perf_counter() + 3600  # never this one's turn
            app._tick()
            time.sleep(0.02)
        for _ in range(3):  # the tick with 'done' draws nothing; the next ones must
            app_module.DRAWING.next_free = time.perf_counter() + 3600
            app._tick()
        records = app.state.records
        assert len(app.convergence._kept.data) == len(records) > 0
        drawn = app.sparsity._pipe.data["records"]
        assert len(drawn) == len(records) and drawn[-1] is records[-1]
    finally:
        app_module.DRAWING.next_free = 0.0
        app.state.close()


def test_the_legend_goes_to_the_corner_its_lines_leave_empty():
    """matplotlib's loc="best" for Bokeh: the corner whose box the drawn lines cross least,
    counted along the lines (a step with no vertex in a corner still counts there)."""
    falling = (np.linspace(0, 1, 50), np.linspace(1, 0, 50) ** 3)
    rising = (np.linspace(0, 1, 50), np.linspace(0, 1, 50))
    corner = viz.emptiest_corner
    assert corner([falling], (0, 1), (0, 1), (0.4, 0.3)) == "top_right"
    assert corner([rising], (0, 1), (0, 1), (0.4, 0.3)) == "top_left"
    # a bound held at 0.8 from x = 0.1 to 0.9 (two vertices, neither in a corner's box)
    # crosses both top boxes: the legend goes below
    bound = (np.array([0.1, 0.9]), np.array([0.8, 0.8]))
    assert corner([bound], (0, 1), (0, 1), (0.3, 0.3)) == "bottom_left"
    assert corner([bound, (np.array([0.0, 0.25]), np.array([0.3, 0.0]))], (0, 1), (0, 1),
                  (0.3, 0.3)) == "bottom_right"
    # on a log axis the shares are of decades: 10 → 1,000 falls through the middle decade
    assert corner([(np.array([0.0, 1.0]), np.array([1e3, 1e3]))], (0, 1), (1, 1e4),
                  (0.4, 0.3), logy=True) == "bottom_left"
    # markers count too, and what is off the plot does not
    assert corner([], (0, 1), (0, 1), (0.4, 0.3), points=[(np.array([0.9]), np.array([0.9]))]) \
        == "top_left"
    assert corner([(np.array([2.0, 3.0]), np.array([0.9, 0.9]))], (0, 1), (0, 1)) == "top_right"


def test_the_objective_legend_leaves_the_drawn_curve_visible():
    """The convergence view's legend moves off the data: a rising objective (the top right
    taken) puts it top left, in a compact box, updated as records stream in."""
    from bokeh.models import Legend, Plot

    from explorer.methods.base import IterationRecord

    def records(traces, start=0):
        return [IterationRecord(iteration=start + i, inner_steps=len(t), objective=t[-1],
                                n_selected=2, selected=np.arange(2), elapsed=0.0,
                                info={"inner_objective": t})
                for i, t in enumerate(traces)]

    def legend(root):
        plot, = [m for m in root.select({"type": Plot})
                 if m.title is not None and m.title.text.startswith("objective")]
        legend, = [a for a in plot.center if isinstance(a, Legend)]
        return legend

    view = ConvergenceView()
    view.configure_for(FGM)
    page = pn.panel(view).get_root()  # the page a user has open while records arrive
    view.replace(records([np.geomspace(1.0, 3.0, 20), np.geomspace(3.0, 1e3, 20)]))
    assert legend(page).location == "top_left"
    assert legend(page).label_text_font_size == viz.LEGEND_OPTS["label_text_font_size"]
    view.replace(records([np.geomspace(1e3, 1.0, 40)]))  # a falling one: the usual corner
    assert legend(page).location == "top_right"
    view.push(records([np.geomspace(1.0, 1e4, 40)], start=1))  # streamed: it rises again
    assert legend(page).location == "top_left"


@pytest.fixture(scope="module")
def ovr_fit():
    """A one-vs-rest fit (FGM has no multi-class form): one binary fit per class."""
    ds = make("digits").split()
    keep = np.isin(ds.y, [0, 1, 2])
    X, y = ds.X[keep], ds.y[keep]
    return FGM(B=2, max_outer=3).fit(X, y)


def test_one_vs_rest_records_are_drawn_class_after_class(ovr_fit):
    """A one-vs-rest fit's records come one class after another: the frames say whose each
    row is, dotted lines mark where the next class's fit starts (named by the x axis, never
    by a legend entry that comes with the second class: BokehJS lost the legend's view, page
    errors "cannot find a view for Legend"), and the model's selection is the union of the
    members' — not the last member's count."""
    from bokeh.models import Legend, LinearAxis

    est = ovr_fit
    members = [r.member for r in est.history_]
    assert members == sorted(members) and set(members) == {0, 1, 2}
    conv, _, kept, _ = viz.convergence_frames(est.history_)
    assert kept["member"].tolist() == [str(m) for m in members]
    assert set(conv["member"]) == {"0", "1", "2"}
    firsts = [conv[conv["member"] == m]["step"].min() for m in ("1", "2")]
    view = ConvergenceView()
    view.push(est.history_)
    root = pn.panel(view).get_root()
    spans = [np.asarray(r.data_source.data["step"]) for r in root.select({"type": GlyphRenderer})
             if type(r.glyph).__name__ == "VSpan" and "step" in r.data_source.data]
    assert len(spans) == 1
    np.testing.assert_array_equal(spans[0], np.asarray(firsts) - 0.5)
    iterations = [np.asarray(r.data_source.data["iteration"])
                  for r in root.select({"type": GlyphRenderer})
                  if type(r.glyph).__name__ == "VSpan" and "iteration" in r.data_source.data]
    starts = [kept[kept["member"] == m]["iteration"].min() for m in ("1", "2")]
    np.testing.assert_array_equal(iterations[0], np.asarray(starts) - 0.5)
    _, bounds, _, _ = viz.convergence_frames(est.history_)
    outers = [np.asarray(r.data_source.data["outer"]) for r in root.select({"type": GlyphRenderer})
              if type(r.glyph).__name__ == "VSpan" and "outer" in r.data_source.data]
    firsts = [bounds[bounds["member"] == m]["outer"].min() for m in ("1", "2")]
    np.testing.assert_array_equal(outers[0], np.asarray(firsts) - 0.5)
    labels = {getattr(item.label, "value", item.label)
              for legend in root.select({"type": Legend}) for item in legend.items}
    assert not any("class" in str(label) for label in labels)
    axes = {a.axis_label for a in root.select({"type": LinearAxis}) if a.axis_label}
    assert any("dotted: the next class" in label for label in axes), axes
    assert viz.one_vs_rest_selection(est.history_) == (est.n_selected_, 3)
    assert est.n_selected_ > est.history_[-1].n_selected  # the last member's is not the model's
    assert explain("fgm", est.history_[-1]).startswith("Class 2 against the rest")
    # the next fit, a single one, draws no class lines (the page's plots, updated) and lists
    # none
    binary = make("digits-3v8")
    view.replace(FGM(B=2, max_outer=3).fit(binary.X, binary.y).history_)
    shown = [r for r in root.select({"type": GlyphRenderer})
             if type(r.glyph).__name__ == "VSpan" and r.visible]
    assert len(shown) == 3
    assert all(len(next(iter(r.data_source.data.values()))) == 0 for r in shown)
    axes = {a.axis_label for a in root.select({"type": LinearAxis}) if a.axis_label}
    assert not any("dotted" in label for label in axes), axes


def _clim(overlay):
    image = overlay.get(1)  # the weights, over the background layer
    options = {**hv.Store.lookup_options("bokeh", image, "plot").kwargs,
               **hv.Store.lookup_options("bokeh", image, "style").kwargs}
    return tuple(options["clim"])


def test_an_empty_weight_image_has_a_zero_to_one_scale_not_one_around_zero():
    assert _clim(viz.weight_image(np.zeros(64), (8, 8), [])) == (0.0, 1.0)
    w = np.zeros(64)
    w[5] = -3.0
    assert _clim(viz.weight_image(w, (8, 8), [5])) == (0.0, 3.0)


def test_signed_weights_are_drawn_diverging_over_the_mean_image():
    """Red for +, blue for −, symmetric about 0; pixels without weight are transparent so
    the mean image shows through; the hover names the value w, not |w|."""
    w = np.zeros(64)
    w[[3, 10]] = (2.0, -0.5)
    mean = np.linspace(0, 16, 64)
    overlay = viz.weight_image(w, (8, 8), [3, 10], background=mean, signed=True)
    base, image = overlay.get(0), overlay.get(1)
    np.testing.assert_allclose(base.data, mean.reshape(8, 8))  # first row at the top
    values = image.data
    assert values[0, 3] == 2.0 and values[1, 2] == -0.5
    assert np.isnan(values).sum() == 62  # only the weighted pixels are painted
    assert _clim(overlay) == (-2.0, 2.0)
    options = hv.Store.lookup_options("bokeh", image, "style").kwargs
    assert options["cmap"] == "RdBu_r"
    assert image.vdims[0].name == "w"


def test_a_blank_pixel_selected_under_norm_scaling_is_explained():
    from explorer.texts import blank_weight_note

    names = [f"r{i}c{j}" for i in range(8) for j in range(8)]
    counts = np.full(64, 200)
    counts[7] = 3  # r0c7: non-zero in 3 of 249 images
    note = blank_weight_note([7, 20], counts, 249, "norm", names)
    assert "r0c7 (non-zero in 3 of 249 rows)" in note and "r2c4" not in note
    assert "feature_scaling = None" in note
    assert blank_weight_note([7], counts, 249, None, names) == ""  # no scaling: nothing to say
    assert blank_weight_note([20], counts, 249, "norm", names) == ""


def test_explorer_around_a_fitted_estimator_keeps_its_curves_when_polled():
    """In a notebook the app's poll runs once the kernel is idle: it must not empty the
    fitted model's curves, and Stop is not lit when nothing runs."""
    data = make("digits-3v8").split(test_size=0.3, seed=0)
    fgm = FGM(B=5).fit(data.X, data.y)
    app = ExplorerApp(dataset=data, estimator=fgm)
    try:
        pn.panel(app).get_root()
        for _ in range(5):
            app._tick()
        assert app.convergence.n_points == ConvergenceView(estimator=fgm).n_points > 10
        assert app.stop_button.disabled and not app.state.fits.running
        assert f"Selected: {fgm.n_selected_} features" in app.state.feedback.status
    finally:
        app.state.close()


def test_a_standalone_image_map_is_a_fixed_square_figure_with_its_colorbar(fgm_fit):
    """Shown on its own (a notebook cell), the |w| grid keeps square pixels and its colorbar:
    a figure stretched to the cell's width cropped the grid to three columns."""
    from bokeh.models import ColorBar, Plot

    ds, est = fgm_fit
    root = pn.panel(SparsityView(estimator=est, dataset=ds)).get_root()
    figures = [m for m in root.references() if isinstance(m, Plot)]
    assert len(figures) == 1
    fig = figures[0]
    assert fig.sizing_mode in (None, "fixed") and fig.frame_width == fig.frame_height
    assert any(isinstance(m, ColorBar) for m in root.references())


def test_the_entry_map_names_its_columns_on_the_axis_and_in_the_hover():
    """The map's axis and hover say the dataset's names (as the table and the text do), and
    follow the columns as features enter during a fit."""
    from bokeh.models import FixedTicker, HoverTool, Plot

    ds = make("fgm-type1", n_samples=200, n_features=400, n_test=50)
    ds.feature_names = [f"gene_{j}" for j in range(ds.n_features)]
    est = FGM(B=2).fit(ds.X, ds.y)
    view = SparsityView(dataset=ds)
    view.show(est.history_[:1])
    root = pn.panel(view).get_root()
    fig = next(m for m in root.references() if isinstance(m, Plot))

    def axis_names():
        axis = fig.xaxis[0]
        assert isinstance(axis.ticker, FixedTicker)
        return [axis.major_label_overrides[t] for t in axis.ticker.ticks]

    first = sorted(f"gene_{j}" for j in est.history_[0].selected)
    assert sorted(axis_names()) == first
    view.show(est.history_)  # the same figure, updated as the fit streams
    _, columns = viz.selection_matrix(est.history_, ds.n_features)
    assert axis_names() == [f"gene_{j}" for j in columns]
    hover = [m for m in root.references() if isinstance(m, HoverTool)]
    assert any(("feature", "@feature") in h.tooltips for h in hover)
    named = [src.data for src in _sources(root) if "feature" in src.data]
    assert named and list(named[0]["feature"]) == [f"gene_{j}" for j in columns]
    assert list(named[0]["number"]) == list(columns)


def test_a_wide_map_names_evenly_spaced_columns():
    matrix = np.ones((3, 200), dtype=np.int8)
    names = [f"word{j}" for j in range(200)]
    fig = _render(viz.selection_map(matrix, np.arange(200), names=names))
    labels = fig.xaxis[0].major_label_overrides
    assert len(labels) <= viz.MAP_LABELS and labels[0.5] == "word0"
    assert all(labels[t] == names[int(t)] for t in labels)
    with pytest.raises(ValueError, match="names"):
        viz.selection_map(matrix, np.arange(200), names=names[:3])


def test_the_pixel_hover_names_the_pixel_as_the_table_does(fgm_fit):
    from bokeh.models import CustomJSHover

    ds, est = fgm_fit
    root = pn.panel(SparsityView(estimator=est, dataset=ds)).get_root()
    pixel = [m for m in root.references() if isinstance(m, CustomJSHover)]
    assert pixel and pixel[0].args["names"] == ds.names()
    assert pixel[0].args["h"] * pixel[0].args["w"] == ds.n_features


def test_a_failing_ui_reaction_is_said_in_the_message_box():
    """A reaction that raises is logged and shown to the user, not lost in the event loop."""
    app = ExplorerApp(dataset="wine")
    try:
        app._press(lambda: 1 / 0)
        said = app.state.feedback
        assert said.message_level == "error"
        assert said.message.startswith("Something went wrong (press): ZeroDivisionError")
        assert app.message.alert_type == "danger" and "ZeroDivisionError" in app.message.object
    finally:
        app.state.close()


def test_the_gap_plot_says_why_a_path_cut_to_k_never_closes_its_gap():
    """FGM with k on digits: the path stops once it holds k features, its certified gap
    stays wide, and the caption under the gap plot says what the number certifies; a path
    run to convergence says its gap closed."""
    from explorer.data import load

    d = load("digits-3v8")
    view = ConvergenceView()
    view.configure_for(FGM)
    est = FGM(k=10).fit(d.X, d.y)
    bounded = [r for r in est.history_ if r.lower is not None]
    assert (bounded[-1].upper - bounded[-1].lower) > 0.5 * bounded[-1].upper  # still wide
    view.replace(est.history_)
    said = view.gap_note.object
    assert view.gap_note.visible
    assert re.search(r"ends at \d+ %|ends at \d+%", said) and "cut k" in said
    assert "10-feature model" in said
    closed = FGM(B=2, C=0.5, max_outer=60, tol=1e-9).fit(d.X[:, :40], d.y)
    view.replace(closed.history_)
    assert "closed to" in view.gap_note.object
    view.reset()
    assert not view.gap_note.visible


def test_the_apps_view_tabs_are_named_in_the_order_of_the_page():
    """The app refers to a tab by its name, never its position: the names follow the page's
    tabs, and showing a tab by name shows that one."""
    app = ExplorerApp(dataset="digits-3v8")
    app.state.live = False
    try:
        pn.panel(app).get_root()
        titles = list(app.views.widget._names)
        assert len(titles) == len(app.views.names)
        for name, title in zip(app.views.names, titles, strict=True):
            assert name.split()[0] in title.lower(), (name, title)
        app.views.show("selected")
        assert app.views.showing("selected") and not app.views.showing("map")
        assert app.views["selected"].shown and not app.views["map"].shown
    finally:
        app.state.close()


def test_a_hidden_tab_draws_when_it_is_next_shown():
    """A tab asked to draw while hidden draws once, when shown; a shown tab draws at once;
    without a page every tab draws at once and none counts as shown."""
    drawn, shown = [], []
    tabs = ViewTabs(ViewTab("a", "A", pn.pane.Markdown("a"), draw=lambda: drawn.append("a")),
                    ViewTab("b", "B", pn.pane.Markdown("b"), draw=lambda: drawn.append("b"),
                            on_shown=lambda: shown.append("b")))
    tabs["b"].draw()
    assert drawn == ["b"] and not tabs["b"].shown  # no page: drawn at once
    pn.panel(tabs).get_root()
    tabs["b"].draw()
    tabs["b"].draw()
    assert drawn == ["b"] and tabs["b"].stale  # hidden: waits
    tabs["a"].draw()
    assert drawn == ["b", "a"]
    tabs.show("b")
    assert drawn == ["b", "a", "b"] and not tabs["b"].stale and shown == ["b"]
    tabs.show("a")
    tabs.show("b")
    assert drawn == ["b", "a", "b"] and shown == ["b", "b"]  # nothing new: not redrawn
    with pytest.raises(KeyError, match="no tab named 'c'; the tabs are a, b"):
        tabs.show("c")


def test_a_shares_axis_ends_at_one_whatever_its_bands():
    """An accuracy of 1.0 with a band drew the axis up to 1.05 (a tick label above 1)."""
    frame = pd.DataFrame({"method": ["a"] * 3, "n_selected": [1, 4, 16],
                          "accuracy": [0.7, 0.95, 1.0], "accuracy_low": [0.6, 0.9, 0.97],
                          "accuracy_high": [0.8, 1.0, 1.0], "value": [1, 2, 3],
                          "fit_time": [0.1] * 3})
    bounded = hv.render(viz.accuracy_plot(frame, "accuracy", bounded=True))
    assert 1.0 <= bounded.y_range.end <= 1.0 + 0.01 * (1.0 - 0.55)
    assert bounded.y_range.start < 0.6  # the lowest band is shown
    free = hv.render(viz.accuracy_plot(frame, "accuracy"))  # an RMSE, say: padded
    assert free.y_range.end > 1.01


def test_every_features_axis_labels_one_two_five():
    """Bokeh's own log ticks crowded 30 40 50 60 70 80 at the right of the fit-time plot and
    wrote 10⁰ 10¹ under the differences plot beside it: every #features axis labels 1, 2, 5,
    10, 20, 50 over its span."""
    from explorer.viz._compare import difference_plot

    frame = pd.DataFrame({"method": ["a"] * 4, "n_selected": [1, 3, 11, 64],
                          "accuracy": [0.7, 0.8, 0.9, 0.95], "value": [1, 3, 11, 64],
                          "fit_time": [0.003, 0.01, 0.05, 0.2]})
    for overlay in (viz.accuracy_plot(frame, "accuracy", bounded=True),
                    viz.fit_time_plot(frame)):
        axis = hv.render(overlay).xaxis[0]
        assert list(axis.ticker.ticks) == [1, 2, 5, 10, 20, 50]
    times = hv.render(viz.fit_time_plot(frame)).yaxis[0]
    assert list(times.ticker.ticks) == pytest.approx([0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2])
    assert times.formatter.format == "%g"  # 0.001 s, not 10⁻³
    diffs = pd.DataFrame({"method": ["a"] * 3, "other": ["b"] * 3, "value": [1, 8, 60],
                          "mean": [0.01, 0.02, 0.0], "low": [-0.01, 0.0, -0.02],
                          "high": [0.03, 0.04, 0.02], "verdict": ["no difference"] * 3})
    axis = hv.render(difference_plot(diffs, "a", "accuracy")).xaxis[0]
    assert list(axis.ticker.ticks) == [1, 2, 5, 10, 20, 50]


def test_an_empty_difference_plot_has_round_limits():
    """Lasso on a regression target with nothing to pair: the empty RMSE differences spanned
    ±1e-3 and read 1.000e−3 on the axis; they span ±1 in the measure's units (±0.5 points
    for a share)."""
    from explorer.viz._compare import difference_plot

    rmse = hv.render(difference_plot(pd.DataFrame(), "lasso", "RMSE", points=False))
    assert (rmse.y_range.start, rmse.y_range.end) == (-1.0, 1.0)
    share = hv.render(difference_plot(pd.DataFrame(), "fgm", "accuracy"))
    assert (share.y_range.start, share.y_range.end) == (-0.5, 0.5)
