"""One orientation for pixel images in every view: a planted top-left pixel is drawn top-left
(the sparsity map, the stability tab's frequency grid, the FS-Manifold lesson's weights) and
the marks sit on it — read from the Bokeh models the browser draws."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pytest
from bokeh.models import GlyphRenderer, Image, Scatter

from explorer import viz

hv.extension("bokeh")

SHAPE = (6, 8)  # not square: rows and columns cannot be confused either


def _planted(row: int = 0, col: int = 0) -> np.ndarray:
    values = np.zeros(SHAPE[0] * SHAPE[1])
    values[row * SHAPE[1] + col] = 1.0
    return values


def _bright_cell(element):
    """(x, y) of the centre of the image's brightest cell in plot coordinates, as Bokeh draws
    it: the glyph's first array row at y = glyph.y (the bottom), rising."""
    model = hv.render(element, backend="bokeh")
    images = [r for r in model.select({"type": GlyphRenderer}) if isinstance(r.glyph, Image)
              and np.nanmax(np.nan_to_num(np.asarray(r.data_source.data["image"][0]))) > 0]
    assert images, "no painted image"
    renderer = images[-1]
    array = np.nan_to_num(np.asarray(renderer.data_source.data["image"][0], dtype=float))
    i, j = np.unravel_index(np.argmax(np.abs(array)), array.shape)
    glyph, source = renderer.glyph, renderer.data_source.data

    def value(name):
        v = getattr(glyph, name)
        return source[v][0] if isinstance(v, str) else (v.value if hasattr(v, "value") else v)

    dw, dh = value("dw"), value("dh")
    x0, y0 = value("x"), value("y")
    return (x0 + (j + 0.5) * dw / array.shape[1], y0 + (i + 0.5) * dh / array.shape[0]), model


def _marks(model):
    points = []
    for r in model.select({"type": GlyphRenderer}):
        if isinstance(r.glyph, Scatter) and len(r.data_source.data.get("x", [])):
            points += list(zip(r.data_source.data["x"], r.data_source.data["y"], strict=True))
    return points


TOP_LEFT = (0.5, SHAPE[0] - 0.5)


@pytest.mark.parametrize("row,col", [(0, 0), (SHAPE[0] - 1, 2)])
def test_the_sparsity_map_draws_pixel_row_zero_at_the_top(row, col):
    index = row * SHAPE[1] + col
    centre, model = _bright_cell(viz.weight_image(_planted(row, col), SHAPE, [index],
                                                  truth=[index]))
    expected = (col + 0.5, SHAPE[0] - row - 0.5)
    assert centre == pytest.approx(expected)
    assert all(p == pytest.approx(expected) for p in _marks(model))


def test_the_frequency_grid_is_the_sparsity_map_the_same_way_up():
    centre, _ = _bright_cell(viz.frequency_image(_planted(), SHAPE))
    assert centre == pytest.approx(TOP_LEFT)
    weights, _ = _bright_cell(viz.weight_image(_planted(), SHAPE, [0]))
    assert centre == pytest.approx(weights)


def test_the_lesson_marks_sit_on_the_largest_weights():
    p = _planted()
    p[SHAPE[1] + 3] = 0.5  # row 1, column 3: the second largest
    centre, model = _bright_cell(viz.simplex_weights(p, 2, "weights", image_shape=SHAPE))
    assert centre == pytest.approx(TOP_LEFT)
    marks = np.array(sorted(_marks(model)))
    np.testing.assert_allclose(marks, [TOP_LEFT, (3.5, SHAPE[0] - 1.5)])


def _marker_points(model, marker: str):
    return [(x, y) for r in model.select({"type": GlyphRenderer})
            if isinstance(r.glyph, Scatter) and r.glyph.marker == marker
            for x, y in zip(r.data_source.data["x"], r.data_source.data["y"], strict=True)]


@pytest.mark.parametrize("draw", ["weights", "frequency"])
def test_the_users_pinned_and_banned_pixels_are_marked_where_they_are_drawn(draw):
    """A pinned top-left pixel carries the pinned mark on the bright top-left cell, a banned
    bottom-right one the banned mark, on the weight map and the stability grid alike."""
    last = SHAPE[0] * SHAPE[1] - 1
    values = _planted(0, 0)
    element = viz.weight_image(values, SHAPE, [0], pinned=[0], banned=[last]) \
        if draw == "weights" else viz.frequency_image(values, SHAPE, pinned=[0], banned=[last])
    centre, model = _bright_cell(element)
    assert _marker_points(model, "diamond") == [centre] == [TOP_LEFT]
    assert _marker_points(model, "square_x") == [(SHAPE[1] - 0.5, 0.5)]
    title = model.title.text
    assert "◆ always in" in title and "excluded" in title and "\n" not in title  # one line
    plain = hv.render(viz.weight_image(values, SHAPE, [0]) if draw == "weights"
                      else viz.frequency_image(values, SHAPE), backend="bokeh")
    assert not _marker_points(plain, "diamond") and "included" not in plain.title.text


def test_the_entry_map_marks_the_pinned_columns_it_draws():
    model = hv.render(viz.selection_map(np.ones((2, 3)), np.array([4, 9, 1]), pinned=[9, 7]),
                      backend="bokeh")
    assert _marker_points(model, "diamond") == [(1.5, 0.5)]  # 7 is not drawn


def test_the_axes_of_an_image_name_pixel_rows_top_down_as_the_names_do():
    """The frequency grid's y axis read 0 at the bottom: r0c6, drawn in the top row, read
    as row 7. Its ticks now name each row at its centre, r0 at the top."""
    model = hv.render(viz.frequency_image(np.arange(64.0) / 64, (8, 8)), backend="bokeh")
    yticks = model.yaxis[0].major_label_overrides
    assert yticks[7.5] == "0" and yticks[0.5] == "7"
    xticks = model.xaxis[0].major_label_overrides
    assert xticks[0.5] == "0" and xticks[6.5] == "6"
    wide = hv.render(viz.frequency_image(np.zeros(32 * 32), (32, 32)), backend="bokeh")
    assert len(wide.yaxis[0].major_label_overrides) <= 9
