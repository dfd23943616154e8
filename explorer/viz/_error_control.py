"""How many of the chosen features are noise, drawn: the stability path with its threshold and
stable set, the coefficient path over k, and the redundancy of the chosen features. No Panel,
no numerics beyond arranging what the core computed."""

from __future__ import annotations

from collections.abc import Sequence

import holoviews as hv
import numpy as np
import pandas as pd

from ._elements import PALETTE, log_span, log_x

MOST_PATHS = 40  # feature curves drawn on a path plot (the most probable / largest)
OTHER_COLOR = "#b0b0b0"


def stability_path_plot(ks: Sequence[int], probabilities: np.ndarray, names: Sequence[str],
                        threshold: float, stable: Sequence[int] = (),
                        title: str = "stability path: selection probability versus k") \
        -> hv.Overlay:
    """One curve per feature (the ``MOST_PATHS`` of highest probability): its share of the
    half-samples that selected it at each k; the stable ones in colour and named in the
    legend, the others grey; the threshold as a dashed line. Log k axis over the grid of
    every frame (a streaming path), probability in [0, 1]."""
    ks = np.asarray(ks, dtype=float)
    P = np.asarray(probabilities, dtype=float)
    x = hv.Dimension("k", label="k (features a fit selects)")
    y = hv.Dimension("probability", label="selection probability", range=(0, 1.02))
    items = [hv.HLine(float(threshold)).opts(color="#000000", line_dash="dashed",
                                             line_width=1, framewise=True)]
    if P.size:
        top = P.max(axis=0)
        drawn = [j for j in np.argsort(-top, kind="stable")[:MOST_PATHS] if top[j] > 0]
        stable = set(int(j) for j in stable)
        colour = 0
        for j in sorted(drawn, key=lambda j: j in stable):  # stable ones on top
            frame = pd.DataFrame({"k": ks, "probability": P[:, j],
                                  "feature": [str(names[j])] * ks.size})
            if j in stable:
                curve = hv.Curve(frame, x, [y, "feature"], label=str(names[j])).opts(
                    color=PALETTE[colour % len(PALETTE)], line_width=2.5, tools=["hover"],
                    framewise=True)
                colour += 1
            else:
                curve = hv.Curve(frame, x, [y, "feature"]).opts(
                    color=OTHER_COLOR, line_width=1, alpha=0.7, tools=["hover"], framewise=True)
            items.append(curve)
    span = log_span(ks) if ks.size else (1, 100)
    return hv.Overlay(items).opts(title=title, logx=True, **log_x(span), ylim=(0, 1.02),
                                  xlabel=x.label, ylabel=y.label,
                                  legend_position="right")


def coefficient_path_plot(frame: pd.DataFrame,
                          title: str = "coefficient path: weight per sd versus k") \
        -> hv.Overlay:
    """Each feature's weight (times its standard deviation, comparable across units) at the
    k it is selected at, one curve per feature (the ``MOST_PATHS`` largest), zero dashed."""
    x = hv.Dimension("k", label="k")
    y = hv.Dimension("weight_per_sd", label="weight × feature sd")
    items = [hv.HLine(0.0).opts(color="#000000", line_dash="dashed", line_width=1)]
    ks = []
    if frame is not None and not frame.empty:
        size = frame.groupby("index")["weight_per_sd"].apply(lambda w: np.abs(w).max())
        for i, j in enumerate(size.sort_values(ascending=False).index[:MOST_PATHS]):
            rows = frame[frame["index"] == j].sort_values("k")
            items.append(hv.Curve(rows, x, [y, "feature"]).opts(
                color=PALETTE[i % len(PALETTE)], line_width=2, tools=["hover"]))
            items.append(hv.Scatter(rows, x, [y, "feature"]).opts(
                color=PALETTE[i % len(PALETTE)], size=5, tools=["hover"]))
        ks = frame["k"].astype(float).tolist()
        ys = frame["weight_per_sd"].astype(float)
        pad = 0.08 * max(float(ys.abs().max()), 1e-12)
        limits = {"ylim": (min(0.0, float(ys.min())) - pad, max(0.0, float(ys.max())) + pad)}
    else:
        limits = {}
    return hv.Overlay(items).opts(title=title, logx=True,
                                  **log_x(log_span(ks) if ks else (1, 100)), xlabel=x.label,
                                  ylabel=y.label, show_legend=False, **limits)


def redundancy_heatmap(corr: pd.DataFrame,
                       title: str = "redundancy of the chosen features (correlation)") \
        -> hv.Overlay:
    """The features × features correlations of the chosen features, named on both axes,
    each value written in its cell when there are few (−1 blue … +1 red)."""
    names = [str(n) for n in corr.index]
    values = corr.to_numpy(dtype=float)
    rows = [(a, b, float(values[i, j])) for i, a in enumerate(names)
            for j, b in enumerate(names)]
    heat = hv.HeatMap(rows, ["feature", "other"], "correlation").opts(
        cmap="RdBu_r", clim=(-1, 1), colorbar=True, tools=["hover"], title=title,
        xrotation=60, xlabel="", ylabel="")
    items = [heat]
    if len(names) <= 15:
        text = [(a, b, f"{v:.2f}") for a, b, v in rows]
        items.append(hv.Labels(text, ["feature", "other"], "text").opts(text_font_size="8pt"))
    return hv.Overlay(items)
