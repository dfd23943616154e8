"""Stability selection's error bound as users of R's ``stabs`` know it (Hofner, Boccuto &
Göker, BMC Bioinformatics 2015): three numbers — the per-family error rate ``pfer`` (the
expected number of false selections one will tolerate), the ``cutoff`` a stable feature's
selection frequency reaches, and ``q`` the number of features each fit may select — of which
two are given and the third follows, so that the bound is the number the user chose.

Two bounds on E(V), the expected number of noise features among the stable ones, with p the
number of candidate features:

* ``assumption="none"`` — Meinshausen & Bühlmann (JRSS-B 2010, Theorem 1):
  E(V) ≤ q² / ((2·cutoff − 1)·p), for cutoff in (½, 1]; it assumes the noise features'
  selections exchangeable and the method no worse than random guessing.
* ``assumption="unimodal"`` (the default, as in stabs) — Shah & Samworth (JRSS-B 2013, eq. 8)
  for complementary pairs, B of them: E(V) ≤ q² / (p·c), with c = 2(2·cutoff − 1 − 1/(2B)) for
  cutoff ≤ ¾ and c = (1 + 1/B) / (4(1 − cutoff + 1/(2B))) above; it assumes in addition that
  the noise features' selection probabilities have a unimodal distribution, and holds for
  cutoff at least ½ + max(q/p, 1/(2B)).
"""

from __future__ import annotations

import math

import numpy as np

ASSUMPTIONS = ("unimodal", "none")
PFER = 1.0  # the expected number of false selections tolerated, when not given
CUTOFF = 0.75  # the selection frequency a stable feature reaches, when not given
WORDS = {
    "none": ("Meinshausen & Bühlmann's bound; it assumes the noise features' selections "
             "exchangeable and the method no worse than random guessing"),
    "unimodal": ("Shah & Samworth's bound for complementary pairs; it assumes the noise "
                 "features' selections exchangeable, the method no worse than random "
                 "guessing, and their selection probabilities unimodal"),
}


def mb_bound(q: float, p: int, cutoff: float) -> float:
    """Meinshausen & Bühlmann's E(V) ≤ q²/((2·cutoff − 1)·p) (Theorem 1); NaN for a cutoff
    outside (½, 1]."""
    if not 0.5 < cutoff <= 1.0:
        return float("nan")
    return float(q * q / ((2.0 * cutoff - 1.0) * p))


def shah_samworth_bound(q: float, p: int, cutoff: float, pairs: int) -> float:
    """Shah & Samworth's bound for complementary pairs under unimodality (2013, eq. 8, as
    stabs computes it): E(V) ≤ q²/(p·c), c = 2(2·cutoff − 1 − 1/(2B)) for cutoff ≤ ¾ and
    (1 + 1/B)/(4(1 − cutoff + 1/(2B))) above, B the number of pairs; NaN where the cutoff is
    outside the range the bound holds in (below ½ + max(q/p, 1/(2B)), or above 1)."""
    theta = q / p
    if cutoff > 1.0 or cutoff < 0.5 + max(theta, 1.0 / (2.0 * pairs)):
        return float("nan")
    if cutoff <= 0.75:
        c = 2.0 * (2.0 * cutoff - 1.0 - 1.0 / (2.0 * pairs))
    else:
        c = (1.0 + 1.0 / pairs) / (4.0 * (1.0 - cutoff + 1.0 / (2.0 * pairs)))
    return float(q * q / (p * c)) if c > 0 else float("nan")


def bound(q: float, p: int, cutoff: float, pairs: int, assumption: str = "unimodal") -> float:
    """The bound on E(V) under ``assumption`` ("unimodal" or "none"); NaN where it does not
    hold."""
    _check_assumption(assumption)
    if p < 1:
        return float("nan")
    if assumption == "none":
        return mb_bound(q, p, cutoff)
    return shah_samworth_bound(q, p, cutoff, pairs)


def solve(p: int, pairs: int, *, pfer: float | None = None, cutoff: float | None = None,
          q: int | None = None, assumption: str = "unimodal") -> tuple[float, float, int]:
    """(pfer, cutoff, q) with the one not given derived from the two given (stabs' rule);
    with fewer than two given, ``pfer`` defaults to 1 and then ``cutoff`` to 0.75.

    Parameters
    ----------
    p : int
        Candidate features (those a fit may choose: not excluded, not always included).
    pairs : int
        Complementary pairs (the unimodal bound depends on them).
    pfer : float, optional
        The expected number of false selections tolerated (> 0).
    cutoff : float, optional
        The selection frequency a stable feature reaches, in (½, 1].
    q : int, optional
        The features each fit may select, 1 … p.
    assumption : {"unimodal", "none"}
        The bound: Shah & Samworth's under unimodality, or Meinshausen & Bühlmann's.

    Returns
    -------
    tuple
        ``(pfer, cutoff, q)``: ``q`` the largest whole number of features whose bound stays
        within ``pfer``, ``cutoff`` the smallest that keeps it there, or ``pfer`` the bound
        itself.
    """
    _check_assumption(assumption)
    p, pairs = int(p), int(pairs)
    if p < 1:
        raise ValueError("stability selection needs at least one candidate feature (every "
                         "feature is always included or excluded)")
    if pairs < 1:
        raise ValueError(f"pairs must be at least 1, got {pairs}")
    given = [name for name, value in (("pfer", pfer), ("cutoff", cutoff), ("q", q))
             if value is not None]
    if len(given) == 3:
        raise ValueError("give two of pfer, cutoff and q: the third follows from them "
                         f"(got pfer={pfer}, cutoff={cutoff}, q={q})")
    if pfer is None and len(given) < 2:
        pfer = PFER
    if cutoff is None and q is None:
        cutoff = CUTOFF
    if pfer is not None and not (math.isfinite(float(pfer)) and float(pfer) > 0):
        raise ValueError(f"pfer must be a positive number, got {pfer}")
    if cutoff is not None and not 0.5 < float(cutoff) <= 1.0:
        raise ValueError(f"cutoff must be in (0.5, 1], got {cutoff}")
    if q is not None and (int(q) != q or not 1 <= int(q) <= p):
        raise ValueError(f"q must be a whole number of features from 1 to {p}, got {q}")
    if q is None:
        return float(pfer), float(cutoff), _largest_q(p, pairs, float(pfer), float(cutoff),
                                                      assumption)
    if cutoff is None:
        return float(pfer), _smallest_cutoff(p, pairs, float(pfer), int(q), assumption), int(q)
    value = bound(int(q), p, float(cutoff), pairs, assumption)
    if not np.isfinite(value):
        raise ValueError(f"the {assumption} bound does not hold at cutoff {cutoff:g} with "
                         f"q = {q} of p = {p} (it needs cutoff ≥ "
                         f"{0.5 + max(int(q) / p, 1 / (2 * pairs)):.3g}); raise the cutoff or "
                         "lower q, or use assumption='none'")
    return value, float(cutoff), int(q)


def _largest_q(p: int, pairs: int, pfer: float, cutoff: float, assumption: str) -> int:
    ok = [q for q in range(1, p + 1)
          if np.isfinite(b := bound(q, p, cutoff, pairs, assumption)) and b <= pfer]
    if not ok:
        raise ValueError(f"at pfer {pfer:g} and cutoff {cutoff:g} no fit may select even one "
                         f"of the {p} features ({assumption} bound with {pairs} pairs): "
                         "raise pfer or the cutoff")
    return max(ok)


def _smallest_cutoff(p: int, pairs: int, pfer: float, q: int, assumption: str) -> float:
    def within(c: float) -> bool:
        b = bound(q, p, c, pairs, assumption)
        return bool(np.isfinite(b) and b <= pfer)

    if not within(1.0):
        raise ValueError(f"with q = {q} features per fit of p = {p}, no cutoff up to 1 keeps "
                         f"the expected false selections within pfer {pfer:g}: lower q or "
                         "raise pfer")
    low, high = 0.5, 1.0  # the bound falls as the cutoff rises: bisect to the boundary
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if within(mid) else (mid, high)
    return float(high)


def _check_assumption(assumption: str) -> None:
    if assumption not in ASSUMPTIONS:
        raise ValueError(f"assumption must be one of {ASSUMPTIONS}, got {assumption!r}")
