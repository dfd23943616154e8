"""Stability and agreement pictures: selection frequency per feature (named bars, or the image
grid) and the Jaccard matrix between methods. No Panel, no numerics."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from ._elements import (
    PALETTE,
    PINNED_COLOR,
    TRUTH_COLOR,
    YOURS_COLOR,
    given_marks,
    given_title,
    pixel_image,
)


def frequency_bars(table: pd.DataFrame, top: int = 20, truth=None,
                   title: str = "selection frequency", pinned=()) -> hv.Bars:
    """The ``top`` most often selected features by name (``table``: feature, index,
    frequency, most frequent first); true features, when known, in the truth colour, those
    the user ``pinned`` in orange (their frequency is 1 by the user's choice)."""
    rows = table.head(top)
    true = set(np.asarray(truth).tolist()) if truth is not None else set()
    pins = set(np.asarray(pinned, dtype=int).tolist())
    # colours given per bar, not mapped from a category: a mapped colour adds a legend,
    # which BokehJS could not find a view for on every later update
    frame = pd.DataFrame({"feature": rows["feature"].astype(str),
                          "frequency": rows["frequency"].astype(float),
                          "colour": [PINNED_COLOR if i in pins else
                                     TRUTH_COLOR if i in true else PALETTE[0]
                                     for i in rows["index"]]})
    said = (["green: a true feature"] if true else []) + \
        (["orange: always included by you"] if pins & set(rows["index"].tolist()) else [])
    if said:
        title += f" ({'; '.join(said)})"
    return hv.Bars(frame, ["feature"], ["frequency", "colour"]).opts(
        color="colour", ylim=(0, 1.05), xrotation=60, tools=["hover"], title=title,
        ylabel="share of resamples", xlabel="", show_legend=False)


def frequency_image(frequency: np.ndarray, shape: tuple[int, int],
                    title: str = "selection frequency on the image grid", pinned=(),
                    banned=()) -> hv.Overlay:
    """Each pixel's share of resamples that selected it; the pixels the user ``pinned`` and
    ``banned`` marked as on the weight map (:func:`~explorer.viz.given_marks`)."""
    image = pixel_image(frequency, shape, "frequency").opts(
        cmap="Blues", clim=(0, 1), colorbar=True, tools=["hover"],
        title=title + given_title(pinned, banned))
    pin, ban = given_marks(pinned, banned, shape)
    return image * pin * ban


def agreement_heatmap(jaccard: pd.DataFrame,
                      title: str = "agreement at the same k (Jaccard)") -> hv.Overlay:
    """The methods × methods Jaccard matrix, each value written in its cell."""
    names = [str(n) for n in jaccard.index]
    rows = [(a, b, float(jaccard.iloc[i, j])) for i, a in enumerate(names)
            for j, b in enumerate(names)]
    heat = hv.HeatMap(rows, ["method", "other"], "jaccard").opts(
        cmap="Blues", clim=(0, 1), colorbar=True, tools=["hover"], title=title,
        xlabel="", ylabel="")
    text = [(a, b, f"{v:.2f}") for a, b, v in rows]
    labels = hv.Labels(text, ["method", "other"], "text").opts(text_font_size="10pt")
    return heat * labels


def phi_plot(progress: pd.DataFrame, chance=None,
             covers: str = "resamples of this training set") -> hv.Overlay:
    """Φ̂ and its 95 % interval as resamples arrive (``progress``: resamples, phi, low,
    high), and the chance reference beside it: ``chance`` = (Φ̂ on permuted labels, the low
    and high end of its expected range) drawn as a grey band across the plot. The y range
    spans the interval, the band and 0."""
    frame = progress.dropna() if progress is not None else pd.DataFrame(
        columns=["resamples", "phi", "low", "high"])
    last = float(frame["resamples"].max()) if len(frame) else 2.0
    right = max(3.0, last)
    items = []
    ys = [0.0, 1.0]
    if chance is not None and all(np.isfinite(chance)):
        centre, low, high = (float(v) for v in chance)
        xs = np.array([2.0, right])
        items.append(hv.Spread((xs, np.full(2, centre), np.full(2, centre - low),
                                np.full(2, high - centre)), "resamples",
                               ["phi", "below", "above"],
                               label="on permuted labels (expected range)").opts(
            color="#7f7f7f", alpha=0.25, line_alpha=0))
        items.append(hv.Curve((xs, np.full(2, centre)), "resamples", "phi",
                              label="on permuted labels").opts(color="#7f7f7f",
                                                               line_dash="dashed"))
        ys += [low, high]
    items.append(hv.Spread((frame["resamples"], frame["phi"], frame["phi"] - frame["low"],
                            frame["high"] - frame["phi"]), "resamples",
                           ["phi", "below", "above"]).opts(
        color=YOURS_COLOR, alpha=0.15, line_alpha=0, framewise=True))
    items.append(hv.Curve(frame, "resamples", "phi", label="Φ̂ (this method)").opts(
        color=YOURS_COLOR, line_width=2, tools=["hover"], framewise=True))
    ys += frame["low"].tolist() + frame["high"].tolist()
    ys = np.asarray(ys, dtype=float)
    ys = ys[np.isfinite(ys)]
    low, high = max(-1.0, ys.min() - 0.05), min(1.05, ys.max() + 0.05)
    return hv.Overlay(items).opts(
        title=f"Φ̂ and its 95 % interval (over the {covers}) as resamples arrive",
        ylabel="Φ̂", xlabel="resamples", ylim=(low, high), xlim=(2, right),
        legend_position="bottom_right", show_grid=True)
