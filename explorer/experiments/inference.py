"""Can the data tell two methods apart? Paired differences on shared repeated folds, with an
interval that accounts for the folds' overlapping training sets, and the verdict in words.

Two methods scored on the same K folds of R repetitions give K·R paired differences d. Their
plain paired t-interval is too narrow: the folds' training sets overlap, so the d are
correlated. The corrected resampled t-test (Nadeau & Bengio, Machine Learning 52, 2003; its
repeated-CV form by Bouckaert & Frank, PAKDD 2004) inflates the variance of the mean
difference by the correlation ρ = n_test/n, which for K folds gives

    Var(d̄) = (1/(K·R) + 1/(K − 1)) · s²_d,   d̄ ~ Student's t with K·R − 1 degrees of freedom.

The computation is baycomp's :class:`~baycomp.CorrelatedTTest` (Corani & Benavoli, Machine
Learning 100, 2015: the same law read as a posterior of the mean difference): its posterior
gives the interval and the probability that one method is the better. A second term in 1/(K−1)
that does not shrink with R is the price of reusing one data set: repeats steady the estimate
(the verdict no longer hangs on one shuffle of the folds) but cannot make it surer than the
data allow.

A verdict of "no difference" also says what difference the data could have shown: the
smallest true difference that the same interval would leave zero out of four times in five
(:func:`detectable_difference`: (t₁₋α/₂ + t₀.₈)·se, from the same corrected variance), so that
silence on 130 rows is not read as equality.

The same corrected standard error of one method's mean score (:func:`corrected_se`) draws the
bands of the accuracy-versus-#features curves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..metrics import METRICS

LEVEL = 0.95  # the intervals' coverage wherever a number is compared
POWER = 0.8  # the chance with which a "detectable" difference would show

def corrected_se(sd: float, cv: int, repeats: int = 1) -> float:
    """The standard error of a K-fold, R-times repeated cross-validated mean whose folds'
    scores have standard deviation ``sd``: sd·√(1/(K·R) + 1/(K − 1)) (Nadeau & Bengio's
    correction for the folds' overlapping training sets)."""
    cv, repeats = int(cv), int(repeats)
    if cv < 2 or repeats < 1:
        raise ValueError(f"corrected_se needs cv ≥ 2 folds and repeats ≥ 1, got {cv}, {repeats}")
    return float(sd) * math.sqrt(1.0 / (cv * repeats) + 1.0 / (cv - 1))


def interval_of_mean(scores, cv: int, repeats: int = 1, level: float = LEVEL):
    """(mean, low, high, corrected se) of K·R fold scores (in repeat-major order; NaN scores
    left out): the ``level`` interval of the cross-validated mean, Student's t with K·R − 1
    degrees of freedom around the corrected standard error."""
    x = np.asarray(scores, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (float("nan"),) * 4
    mean = float(x.mean())
    if x.size < 2:
        return mean, float("nan"), float("nan"), float("nan")
    se = corrected_se(float(np.std(x, ddof=1)), cv, repeats)
    half = float(stats.t.ppf(0.5 + level / 2.0, x.size - 1)) * se
    return mean, mean - half, mean + half, se


def detectable_difference(se: float, df: float, level: float = LEVEL,
                          power: float = POWER) -> float:
    """The smallest true difference that an interval of ``level`` around a mean difference
    with standard error ``se`` (Student's t, ``df`` degrees of freedom) leaves zero out of
    with probability ``power``: (t_{1−α/2} + t_{power})·se — the difference the data could
    have shown (Cohen's minimum detectable effect, on the corrected variance)."""
    if not (np.isfinite(se) and df >= 1):
        return float("nan")
    return float((stats.t.ppf(0.5 + level / 2.0, df) + stats.t.ppf(power, df)) * se)


def unit(metric: str) -> tuple[float, str]:
    """(scale, unit word) in which a difference of ``metric`` is spoken of: 100 and "points"
    for a proportion (accuracy, AUC, F1, …), 1 and "" for RMSE and R²."""
    proportion = METRICS[metric].proportion if metric in METRICS else False
    return (100.0, " points") if proportion else (1.0, "")


def _fmt(value: float, metric: str, signed: bool = False) -> str:
    scale, _ = unit(metric)
    if scale == 100.0:
        return f"{value * scale:+.1f}" if signed else f"{value * scale:.1f}"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


@dataclass(frozen=True)
class PairedDifference:
    """``method`` − ``other`` in ``metric`` on shared folds: the mean difference, its
    ``level`` interval (corrected resampled t), the probability that ``method`` is the better
    one (baycomp's posterior; "better" is lower for RMSE; by more than ``rope`` when one is
    given), how many paired scores and repeats it rests on, the verdict in words, and the
    region of practical equivalence it was read with."""

    method: str
    other: str
    metric: str
    mean: float
    low: float
    high: float
    level: float
    n: int
    runs: int
    p_better: float
    verdict: str
    rope: float = 0.0
    detectable: float = float("nan")

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    @property
    def decided(self) -> bool:
        """Whether the interval leaves out 0 (and, with a region of practical equivalence,
        is not inside it): one of the two is ahead."""
        equivalent = self.rope > 0 and -self.rope <= self.low and self.high <= self.rope
        return bool(self.low > 0 or self.high < 0) and not equivalent

    @property
    def winner(self) -> str | None:
        """The method ahead when the interval leaves out 0, else None."""
        if not self.decided:
            return None
        better_if_positive = METRICS[self.metric].greater_is_better if \
            self.metric in METRICS else True
        return self.method if (self.low > 0) == better_if_positive else self.other


def paired_difference(scores, other_scores, *, method: str = "A", other: str = "B",
                      metric: str = "accuracy", runs: int = 1, level: float = LEVEL,
                      rope: float = 0.0, test_to_train: float | None = None,
                      n_rows: int | None = None) -> PairedDifference:
    """Compare two methods' scores on the same folds (equal length, fold for fold, K·R of
    them in repeat-major order; a fold that either method failed is left out).

    Parameters
    ----------
    scores, other_scores : array-like
        Each fold's score of ``method`` and of ``other``.
    method, other : str
        The two methods' names, as the verdict says them.
    metric : str
        The measure compared (its direction: larger or smaller is better).
    runs : int
        How many repetitions of K-fold CV the scores come from (the correction uses the
        number of folds per repetition, len/runs).
    level : float
        Coverage of the interval (0.95).
    rope : float
        Half-width of a region of practical equivalence in the metric's units (0.01 = one
        point of accuracy): an interval inside ±rope reads "equivalent within ±rope".
    test_to_train : float, optional
        For scores from repeated random train/test splits instead of K-fold CV: the ratio
        n_test/n_train of each split, Nadeau & Bengio's correction in its original form
        (``runs`` is then not used).
    n_rows : int, optional
        The training rows the folds were drawn from, for the verdict's words ("at 130
        training rows … only a difference above 7.0 points would show").

    Returns
    -------
    PairedDifference
    """
    from baycomp import CorrelatedTTest
    from baycomp.single import Posterior

    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if rope < 0 or not np.isfinite(rope):
        raise ValueError(f"rope must be a non-negative number, got {rope}")
    x = np.asarray(scores, dtype=float).ravel()
    z = np.asarray(other_scores, dtype=float).ravel()
    if x.shape != z.shape:
        raise ValueError(f"paired scores need the same folds: {x.size} against {z.size}")
    runs = int(runs)
    if runs < 1 or x.size % runs:
        raise ValueError(f"{x.size} scores are not {runs} repetitions of the same folds")
    folds = x.size // runs
    keep = np.isfinite(x) & np.isfinite(z)
    n = int(keep.sum())
    nan = float("nan")
    if n < 2 or (test_to_train is None and folds < 2):
        return PairedDifference(method, other, metric, nan, nan, nan, level, n, runs, nan,
                                f"{method} and {other} cannot be compared: fewer than two "
                                f"folds scored both")
    if test_to_train is None:
        # baycomp reads the folds per run as len/runs: keep that ratio when a failed fold
        # is dropped
        kept_runs = max(1, int(round(n / folds)))
        while n % kept_runs:
            kept_runs -= 1
        mean, var, df = CorrelatedTTest.compute_statistics(x[keep], z[keep], kept_runs)
        mean = -mean  # baycomp's difference is its second argument minus its first
    else:
        if not test_to_train > 0:
            raise ValueError(f"test_to_train must be positive, got {test_to_train}")
        d = x[keep] - z[keep]
        mean, df = float(d.mean()), n - 1
        var = float(np.var(d, ddof=1)) * (1.0 / n + float(test_to_train))
    posterior = Posterior(float(mean), float(var), df, rope)
    p_left, p_right = posterior.probs()[0], posterior.probs()[-1]
    half = float(stats.t.ppf(0.5 + level / 2.0, df)) * math.sqrt(var) if var > 0 else 0.0
    better_if_positive = METRICS[metric].greater_is_better if metric in METRICS else True
    p_better = float(p_right if better_if_positive else p_left)
    low, high = float(mean) - half, float(mean) + half
    detectable = detectable_difference(math.sqrt(max(var, 0.0)), df, level)
    if test_to_train is None:
        design = f"{folds}-fold CV × {runs}"
    else:
        design = f"{n} random splits"
    where = f"at {n_rows:,} training rows ({design})" if n_rows else f"with {design}"
    return PairedDifference(method, other, metric, float(mean), low, high, level, n, runs,
                            p_better, verdict(method, other, metric, float(mean), low, high,
                                              rope, detectable, where), rope, detectable)


def verdict(method: str, other: str, metric: str, mean: float, low: float, high: float,
            rope: float = 0.0, detectable: float = float("nan"), where: str = "") -> str:
    """The comparison in words: "A is ahead of B by 2.1 ± 1.6 points (accuracy)", "no
    difference the data can show …; at 130 training rows (5-fold CV × 5) only a difference
    above 7.0 points would show (4 times in 5)", or, with a ``rope``, "… equivalent within
    ± …"."""
    label = METRICS[metric].label if metric in METRICS else metric
    _, word = unit(metric)
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{method} and {other} cannot be compared on {label}"
    half = (high - low) / 2.0
    better_if_positive = METRICS[metric].greater_is_better if metric in METRICS else True
    if rope > 0 and -rope <= low and high <= rope:  # whatever the sign: too small to matter
        return (f"{method} and {other} are equivalent within ±{_fmt(rope, metric)}{word} "
                f"({label}: {method} − {other} = {_fmt(mean, metric, True)} ± "
                f"{_fmt(half, metric)})")
    if low > 0 or high < 0:
        ahead, behind = (method, other) if (low > 0) == better_if_positive else (other, method)
        return (f"{ahead} is ahead of {behind} by {_fmt(abs(mean), metric)} ± "
                f"{_fmt(half, metric)}{word} ({label})")
    text = (f"no difference the data can show between {method} and {other} ({label}: "
            f"{method} − {other} = {_fmt(mean, metric, True)} ± {_fmt(half, metric)}"
            f"{word})")
    if np.isfinite(detectable):
        text += (f"; {where + ' ' if where else ''}only a difference above "
                 f"{_fmt(detectable, metric)}{word} would show "
                 f"({int(round(POWER * 5))} times in 5)")
    return text
