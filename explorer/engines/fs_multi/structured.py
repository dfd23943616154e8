"""Multivariate losses Δ(y, ȳ) and their most violated labelings (FS-multi eq. 14; Joachims,
"A support vector method for multivariate performance measures", ICML 2005).

For scores f, the most violated labeling is ``argmax_ȳ Δ(y, ȳ) + (1/n) Σ_i ȳ_i f_i`` (the
constant −(1/n)Σ y_i f_i dropped). Labels are ±1. For the contingency-table measures the best
labeling with a TPs and b FPs puts +1 on the a highest-scored positives and the b highest-scored
negatives; after sorting:

* F1 — Δ = 1 − 2a/(P + a + b). For fixed a, both Δ and the score part are concave in b (their
  increments decrease), so the best b is found by binary search: O(n log n) overall, against
  the O(P·N) grid of Joachims' original algorithm.
* PRBEP — labelings with exactly P predicted positives (a + b = P): Δ = 1 − a/P; O(n).
* Rec@k — labelings with exactly k predicted positives: Δ = 1 − a/P; O(n).
* Hamming — Δ = 2·#errors/n decomposes per example: O(n). With it the risk is exactly
  (2/n)·Σ hinge, so the inner problem is a hinge-loss SVM.
"""

from __future__ import annotations

import numpy as np

from ._compiled import f1_most_violated_table

MEASURES = ("f1", "prbep", "rec@k", "hamming")


def delta(y: np.ndarray, yb: np.ndarray, measure: str, k: int | None = None) -> float:
    """Δ(y, ȳ) for ±1 labels (0 when ȳ = y)."""
    y = np.asarray(y)
    yb = np.asarray(yb)
    pos = y > 0
    P = int(pos.sum())
    a = int(np.sum(pos & (yb > 0)))
    b = int(np.sum(~pos & (yb > 0)))
    if measure == "hamming":
        return 2.0 * float(np.sum(y != yb)) / y.size
    if measure == "f1":
        return 1.0 - 2.0 * a / (P + a + b) if P + a + b else 0.0
    if measure == "prbep":
        return 1.0 - a / P
    if measure == "rec@k":
        return 1.0 - a / P
    raise ValueError(f"unknown measure {measure!r}; known: {MEASURES}")


def allowed(y: np.ndarray, yb: np.ndarray, measure: str, k: int | None = None) -> bool:
    """Whether ȳ is in the labeling set the measure maximises over (PRBEP: exactly P
    predicted positives; Rec@k: exactly k)."""
    n_pred = int(np.sum(np.asarray(yb) > 0))
    if measure == "prbep":
        return n_pred == int(np.sum(np.asarray(y) > 0))
    if measure == "rec@k":
        return n_pred == int(k)
    return True


def default_k(y: np.ndarray) -> int:
    """Rec@k's k: twice the number of positives (the FS-multi paper's setting)."""
    return int(min(np.asarray(y).size, 2 * np.sum(np.asarray(y) > 0)))


def most_violated(y: np.ndarray, f: np.ndarray, measure: str, k: int | None = None
                  ) -> tuple[np.ndarray, float]:
    """(ȳ, Δ(y, ȳ)) maximising Δ(y, ȳ) + (1/n) Σ ȳ_i f_i over the measure's labelings."""
    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    n = y.size
    if measure == "hamming":
        # per example: keep y_i (0) or flip (2/n − 2 y_i f_i / n); ties keep y_i
        gain_flip = 2.0 / n * (1.0 - y * f)
        yb = np.where(gain_flip > 0, -y, y)
        return yb, delta(y, yb, "hamming")
    pos = np.flatnonzero(y > 0)
    neg = np.flatnonzero(y <= 0)
    P, N = pos.size, neg.size
    if P == 0:
        raise ValueError(f"{measure} needs at least one positive example")
    f_pos, f_neg = f[pos], f[neg]
    # the scores in decreasing order, sorted as values: the labeling needs only the a highest
    # positives and b highest negatives (:func:`_top`), not an index sort of every score
    desc_p, desc_n = -np.sort(-f_pos), -np.sort(-f_neg)
    # score part: Σ ȳ_i f_i / n with a positives and b negatives set to +1 (prefix sums)
    sp = np.concatenate([[0.0], np.cumsum(desc_p)])
    sn = np.concatenate([[0.0], np.cumsum(desc_n)])
    tot_p, tot_n = sp[-1], sn[-1]
    if not np.isfinite(tot_p + tot_n):
        raise FloatingPointError("the scores of the most-violated-labeling search are not "
                                 "finite (the model diverged)")

    if measure == "f1":
        a, b = f1_most_violated_table(sp, sn, n)
        dlt = 1.0 - 2.0 * a / (P + a + b) if P + a + b else 0.0
    else:
        total = P if measure == "prbep" else int(k)
        if not 0 <= total <= n:
            raise ValueError(f"k={total} must be between 0 and n={n}")
        a_values = np.arange(max(0, total - N), min(P, total) + 1)
        b_values = total - a_values
        values = 1.0 - a_values / P + (2.0 * sp[a_values] - tot_p + 2.0 * sn[b_values]
                                       - tot_n) / n
        i = int(np.argmax(values))
        a, b = int(a_values[i]), int(b_values[i])
        dlt = 1.0 - a / P
    yb = -np.ones(n)
    yb[pos[_top(f_pos, desc_p, a)]] = 1.0
    yb[neg[_top(f_neg, desc_n, b)]] = 1.0
    return yb, dlt


def _top(scores: np.ndarray, descending: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` highest scores, ties taken in index order: the first
    ``count`` of a stable sort by decreasing score (``descending``: the scores so sorted)."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    cut = descending[count - 1]
    above = np.flatnonzero(scores > cut)
    tied = np.flatnonzero(scores == cut)[:count - above.size]
    return np.concatenate([above, tied])


def most_violated_grid(y, f, measure: str, k: int | None = None):
    """Joachims' O(P·N) search over every contingency table (reference for the tests and the
    benchmark's timing comparison)."""
    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    n = y.size
    pos = np.flatnonzero(y > 0)
    neg = np.flatnonzero(y <= 0)
    P, N = pos.size, neg.size
    pos_order = pos[np.argsort(-f[pos], kind="stable")]
    neg_order = neg[np.argsort(-f[neg], kind="stable")]
    sp = np.concatenate([[0.0], np.cumsum(f[pos_order])])
    sn = np.concatenate([[0.0], np.cumsum(f[neg_order])])
    best, best_ab = -np.inf, (0, 0)
    for a in range(P + 1):
        b = np.arange(N + 1)
        if measure == "f1":
            d = np.where(a + b + P > 0, 1.0 - 2.0 * a / (P + a + b), 0.0)
        elif measure == "prbep":
            d = np.where(a + b == P, 1.0 - a / P, -np.inf)
        else:
            d = np.where(a + b == int(k), 1.0 - a / P, -np.inf)
        values = d + (2.0 * sp[a] - sp[-1] + 2.0 * sn[b] - sn[-1]) / n
        j = int(np.argmax(values))
        if values[j] > best:
            best, best_ab = values[j], (a, j)
    a, b = best_ab
    yb = -np.ones(n)
    yb[pos_order[:a]] = 1.0
    yb[neg_order[:b]] = 1.0
    return yb, delta(y, yb, measure, k)
