"""Stability and agreement pictures: selection frequency per feature (named bars, or the image
grid) and the Jaccard matrix between methods. No Panel, no numerics."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from ._elements import PALETTE, TRUTH_COLOR


def frequency_bars(table: pd.DataFrame, top: int = 20, truth=None,
                   title: str = "selection frequency") -> hv.Bars:
    """The ``top`` most often selected features by name (``table``: feature, index,
    frequency, most frequent first); true features, when known, in the truth colour."""
    rows = table.head(top)
    true = set(np.asarray(truth).tolist()) if truth is not None else set()
    # colours given per bar, not mapped from a category: a mapped colour adds a legend,
    # which BokehJS could not find a view for on every later update
    frame = pd.DataFrame({"feature": rows["feature"].astype(str),
                          "frequency": rows["frequency"].astype(float),
                          "colour": [TRUTH_COLOR if i in true else PALETTE[0]
                                     for i in rows["index"]]})
    if true:
        title += " (green: a true feature)"
    return hv.Bars(frame, ["feature"], ["frequency", "colour"]).opts(
        color="colour", ylim=(0, 1.05), xrotation=60, tools=["hover"], title=title,
        ylabel="share of resamples", xlabel="", show_legend=False)


def frequency_image(frequency: np.ndarray, shape: tuple[int, int],
                    title: str = "selection frequency on the image grid") -> hv.Image:
    """Each pixel's share of resamples that selected it."""
    h, w = shape
    grid = np.asarray(frequency, dtype=float).reshape(h, w)
    return hv.Image(grid[::-1], bounds=(0, 0, w, h), kdims=["column", "row"],
                    vdims=["frequency"]).opts(cmap="Blues", clim=(0, 1), colorbar=True,
                                              tools=["hover"], title=title)


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
