"""Is one method really ahead? The chosen method minus each other one at every number of
features, with the intervals the core computed (:meth:`explorer.experiments.Comparison.
differences`), zero marked. No Panel, no numerics beyond arranging what the core computed."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from ._elements import PALETTE, log_span, log_x

DODGE = 0.035  # each other method's bars shifted by this share of a decade, to be told apart


def difference_plot(differences: pd.DataFrame, method: str, label: str,
                    others: tuple[str, ...] = (), points: bool = True) -> hv.Overlay:
    """``method`` − each other method (one colour each, in the accuracy view's colours:
    ``others`` in the order swept, ``method`` being the first) versus #features: the mean
    difference of ``label`` over the shared folds and its 95 % interval as an error bar, zero
    as a dashed line; in points (hundredths) for a share (``points``), else in the measure's
    units. Each other method's bars are shifted a little along the log axis to be told apart
    (its hover gives the true k, ``features``, and the difference the data could have shown,
    ``detectable``). The ranges span every bar and zero."""
    scale = 100.0 if points else 1.0
    name = label
    unit = " (points)" if points else ""
    x = hv.Dimension("k", label="#selected features")
    y = hv.Dimension("difference", label=f"Δ {name}{unit}")  # the legend names each pair
    frame = differences if differences is not None else pd.DataFrame()
    if not frame.empty:
        frame = frame[np.isfinite(frame["mean"].astype(float))]
    order = list(dict.fromkeys([*others, *(frame["other"].unique() if not frame.empty
                                           else [])]))
    order = [o for o in order if o != method]
    items = [hv.HLine(0).opts(color="#000000", line_dash="dashed", line_width=1,
                              framewise=True)]
    xs, ys = [], [0.0]
    for i, other in enumerate(order):
        rows = frame[frame["other"] == other] if not frame.empty else frame
        shift = 10.0 ** (DODGE * (i - (len(order) - 1) / 2.0))
        k = rows["value"].astype(float).to_numpy() * shift if len(rows) else np.array([])
        mean = rows["mean"].astype(float).to_numpy() * scale if len(rows) else np.array([])
        low = rows["low"].astype(float).to_numpy() * scale if len(rows) else np.array([])
        high = rows["high"].astype(float).to_numpy() * scale if len(rows) else np.array([])
        verdicts = rows["verdict"].astype(str).tolist() if len(rows) else []
        shown = rows["detectable"].astype(float).to_numpy() * scale \
            if len(rows) and "detectable" in rows else np.full(len(rows), np.nan)
        features = rows["value"].astype(int).to_numpy() if len(rows) else np.array([], int)
        data = pd.DataFrame({"k": k, "difference": mean, "below": mean - low,
                             "above": high - mean, "features": features,
                             "detectable": np.round(shown, 2), "verdict": verdicts})
        color = PALETTE[(i + 1) % len(PALETTE)]
        items.append(hv.ErrorBars(data, x, [y, "below", "above"]).opts(
            color=color, line_width=2, lower_head=None, upper_head=None, framewise=True))
        items.append(hv.Scatter(data, x, [y, "features", "detectable", "verdict"],
                                label=f"{method} − {other}").opts(
            color=color, size=8, tools=["hover"], framewise=True))
        xs.extend(k.tolist())
        ys.extend(low[np.isfinite(low)].tolist() + high[np.isfinite(high)].tolist())
    ys = np.asarray(ys, dtype=float)
    if ys.size == 1:  # nothing to show yet: round limits (±1e-3 was labelled 1.000e−3)
        pad = 0.5 if scale == 100.0 else 1.0
    else:
        pad = max(0.08 * (ys.max() - ys.min()), 0.5 if scale == 100.0 else 1e-3)
    limits = {**log_x(log_span(xs) if xs else (1, 100)),
              "ylim": (float(ys.min() - pad), float(ys.max() + pad))}
    return hv.Overlay(items).opts(xlabel="#selected features (log scale)", logx=True,
                                  ylabel=y.label, legend_position="bottom_right", **limits)
