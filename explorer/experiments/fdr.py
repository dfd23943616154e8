"""False discovery rate thresholds, computed here as their papers define them.

A library's threshold is only as good as its corner cases: hidimstat 0.4's e-BH, when no cut
qualifies, falls back to the largest e-value and so "selects" every feature tied there — on
madelon-like data 40–80 % of those were probes. These three functions are the definitions,
with nothing selected where the definition selects nothing:

* :func:`knockoff_plus_threshold` — knockoff+ (Barber & Candès 2015, eq. 1.9; Candès, Fan,
  Janson & Lv 2018, eq. 3.10): the smallest t > 0 among the |W_j| with
  (1 + #{j : W_j ≤ −t}) / max(1, #{j : W_j ≥ t}) ≤ q; +∞ when none qualifies.
* :func:`knockoff_evalues` — the e-values of one knockoff draw (Ren & Barber 2023, eq. 7):
  e_j = p · 1{W_j ≥ T} / (1 + #{k : W_k ≤ −T}), T the knockoff+ threshold at level α_kn.
* :func:`ebh` — the e-BH procedure (Wang & Ramdas 2022, eq. 5): the k* largest e-values with
  k* = max{k : k · e₍ₖ₎ ≥ p/α}, and none when no k qualifies.
"""

from __future__ import annotations

import numpy as np


def knockoff_plus_threshold(W, fdr: float) -> float:
    """The knockoff+ threshold of statistics ``W`` at level ``fdr``: the smallest t among the
    non-zero |W_j| with (1 + #{W_j ≤ −t}) / max(1, #{W_j ≥ t}) ≤ ``fdr`` (Barber & Candès
    2015, eq. 1.9); ``inf`` when no t qualifies, so that ``W >= threshold`` selects nothing.

    Parameters
    ----------
    W : array-like of float
        One statistic per feature: positive when the feature beats its knockoff.
    fdr : float
        The level q in (0, 1).

    Returns
    -------
    float
        The threshold T (> 0), or ``inf``.
    """
    if not 0.0 < float(fdr) < 1.0:
        raise ValueError(f"fdr must be in (0, 1), got {fdr}")
    W = np.asarray(W, dtype=float).ravel()
    if not np.all(np.isfinite(W)):
        raise ValueError("knockoff statistics must be finite")
    candidates = np.unique(np.abs(W[W != 0]))  # ascending
    if candidates.size == 0:
        return float("inf")
    # counts for every candidate t at once: #{W ≥ t} and #{W ≤ −t}
    positive = np.sort(W[W > 0])
    negative = np.sort(-W[W < 0])
    above = positive.size - np.searchsorted(positive, candidates, side="left")
    below = negative.size - np.searchsorted(negative, candidates, side="left")
    ratio = (1.0 + below) / np.maximum(above, 1)
    ok = np.flatnonzero(ratio <= float(fdr))
    return float(candidates[ok[0]]) if ok.size else float("inf")


def knockoff_evalues(W, fdr: float) -> np.ndarray:
    """The e-values of one knockoff draw (Ren & Barber 2023, eq. 7): with T the knockoff+
    threshold of ``W`` at level ``fdr`` (their α_kn), e_j = p · 1{W_j ≥ T} / (1 + #{k : W_k ≤
    −T}); all zero when T is infinite (the draw selects nothing). Their mean over draws is
    again a set of e-values (the derandomised knockoffs' aggregate)."""
    W = np.asarray(W, dtype=float).ravel()
    T = knockoff_plus_threshold(W, fdr)
    e = np.zeros(W.size)
    if np.isfinite(T):
        e[W >= T] = W.size / (1.0 + np.count_nonzero(W <= -T))
    return e


def ebh(e, fdr: float) -> np.ndarray:
    """The e-BH selection (Wang & Ramdas 2022, eq. 5) of e-values ``e`` at level ``fdr``:
    the indices of the k* largest e-values, k* = max{k : k · e₍ₖ₎ ≥ p / fdr} (e₍ₖ₎ the k-th
    largest), sorted; empty when no k qualifies. Controls the false discovery rate at
    ``fdr`` under any dependence between the e-values.

    Parameters
    ----------
    e : array-like of float
        Non-negative e-values, one per feature.
    fdr : float
        The level α in (0, 1).

    Returns
    -------
    numpy.ndarray of int
        The selected features.
    """
    if not 0.0 < float(fdr) < 1.0:
        raise ValueError(f"fdr must be in (0, 1), got {fdr}")
    e = np.asarray(e, dtype=float).ravel()
    if np.any(e < 0) or not np.all(np.isfinite(e)):
        raise ValueError("e-values must be finite and non-negative")
    p = e.size
    order = np.argsort(-e, kind="stable")
    ranks = np.arange(1, p + 1)
    # a relative tolerance: e-values built as p/(1 + m) reach p/α exactly at the boundary
    ok = np.flatnonzero(ranks * e[order] >= (p / float(fdr)) * (1.0 - 1e-12))
    if ok.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.sort(order[: ok[-1] + 1]).astype(np.int64)
