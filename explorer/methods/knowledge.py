"""What a user already knows about the features, in one vocabulary for every method.

Four estimator parameters, shared by every method and baseline (:class:`BaseSelector`):

``always_include``
    Features that are in every model the method returns (a clinical covariate that must stay).
``exclude``
    Features no model may use (a batch variable). Every method honours it the same way: it is
    fitted on the other columns, as if the excluded ones did not exist, and its weights on the
    excluded ones are 0.
``penalty_factor``
    A non-negative weight per feature that scales how hard it is for the feature to enter
    (glmnet's ``penalty.factor``): 1 is the default, 0 means free (the same as
    ``always_include``), ``inf`` means never (the same as ``exclude``). An array of one
    factor per feature, or a mapping ``{feature: factor}`` (the others 1). What it scales
    depends on the method and is said on its page: the ℓ1 baselines' penalty (by rescaling
    the columns), FSA's ranking of which variables to kill.
``positive``
    Non-negative weights, where the method solves that problem exactly.

Features are named by index, by name (matched against the column names of a DataFrame X,
``feature_names_in_``) or by a boolean mask over the columns. ``k`` counts every feature of the
model, the always-included ones among them, for every method: ``k = 10`` with 2 pinned features
is the 2 and 8 the method chose.

A method lists the options it honours in ``knowledge``; it refuses the others with a message
that names what it can do instead, never ignoring one silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .registry import REGISTRY

OPTIONS = ("always_include", "exclude", "penalty_factor", "positive")


@dataclass(frozen=True)
class Knowledge:
    """The resolved options over ``n_features`` columns.

    ``pinned`` and ``banned`` are sorted indices (a factor 0 is pinned, ``inf`` banned);
    ``factor`` the finite positive factor of every column (1 for the pinned, banned and
    unnamed ones), or None when none was given; ``positive`` the sign constraint.
    """

    n_features: int
    pinned: np.ndarray
    banned: np.ndarray
    factor: np.ndarray | None
    positive: bool

    @property
    def allowed(self) -> np.ndarray:
        """The columns a model may use."""
        return np.setdiff1d(np.arange(self.n_features), self.banned)

    @property
    def priority(self) -> np.ndarray:
        """Per column, what multiplies a method's entry score: 1/factor, ``inf`` for the
        pinned, 0 for the banned."""
        out = np.ones(self.n_features) if self.factor is None else 1.0 / self.factor
        out[self.pinned] = np.inf
        out[self.banned] = 0.0
        return out

    def on(self, columns: np.ndarray) -> Knowledge:
        """The same knowledge for a model fitted on ``columns`` only (none of them banned)."""
        position = np.full(self.n_features, -1)
        position[columns] = np.arange(columns.size)
        pinned = position[self.pinned]
        return Knowledge(columns.size, np.sort(pinned[pinned >= 0]), np.zeros(0, np.int64),
                         None if self.factor is None else self.factor[columns], self.positive)

    def used(self) -> set[str]:
        """The options that ask the method for something."""
        out = set()
        if self.pinned.size:
            out.add("always_include")
        if self.banned.size:
            out.add("exclude")
        if self.factor is not None and np.any(self.factor != 1.0):
            out.add("penalty_factor")
        if self.positive:
            out.add("positive")
        return out


def given(estimator) -> bool:
    """Whether any of the four options is set on ``estimator``."""
    return any(_set(getattr(estimator, name, None)) for name in OPTIONS)


def _set(value) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, (Mapping, list, tuple, np.ndarray)) and len(value) == 0:
        return False
    return True


def resolve(estimator, n_features: int, names=None) -> Knowledge | None:
    """The options set on ``estimator`` as :class:`Knowledge` over ``n_features`` columns
    named ``names`` (or None); None when none is set. Raises ValueError on a feature that
    does not exist, a negative or NaN factor, a feature both pinned and excluded, or a ``k``
    smaller than the pinned features."""
    if not given(estimator):
        return None
    owner = type(estimator).__name__
    pinned = _features(getattr(estimator, "always_include", None), n_features, names,
                       f"{owner}: always_include")
    banned = _features(getattr(estimator, "exclude", None), n_features, names,
                       f"{owner}: exclude")
    factor = _factors(getattr(estimator, "penalty_factor", None), n_features, names, owner)
    if factor is not None:
        pinned = np.union1d(pinned, np.flatnonzero(factor == 0))
        banned = np.union1d(banned, np.flatnonzero(np.isinf(factor)))
        factor = np.where((factor == 0) | np.isinf(factor), 1.0, factor)
    both = np.intersect1d(pinned, banned)
    if both.size:
        raise ValueError(f"{owner}: feature {_name(both[0], names)} is both always included "
                         "and excluded (by always_include/exclude or a factor of 0/inf)")
    if banned.size == n_features:
        raise ValueError(f"{owner}: every feature is excluded; nothing is left to select")
    positive = getattr(estimator, "positive", False)
    if positive not in (True, False, None, np.True_, np.False_):
        raise ValueError(f"{owner}: positive must be True or False, got {positive!r}")
    know = Knowledge(int(n_features), pinned.astype(np.int64), banned.astype(np.int64),
                     factor, bool(positive))
    knob = "m" if getattr(type(estimator), "sparsity_param", "k") == "m" else "k"
    k = getattr(estimator, knob, None)
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k < pinned.size:
        raise ValueError(f"{owner}: {knob}={k} is smaller than the {pinned.size} "
                         f"always-included features; {knob} counts every feature of the "
                         "model, the always-included ones among them")
    return know


def _name(index, names) -> str:
    return repr(names[index]) if names is not None else str(int(index))


def _features(value, n_features: int, names, what: str) -> np.ndarray:
    """Sorted column indices of ``value``: indices, names or a boolean mask."""
    if not _set(value):
        return np.zeros(0, np.int64)
    if isinstance(value, (str, int, np.integer)):
        value = [value]
    items = np.asarray(list(value) if not isinstance(value, np.ndarray) else value)
    if items.dtype == bool:
        if items.shape != (n_features,):
            raise ValueError(f"{what}: a boolean mask needs one entry per feature "
                             f"({n_features}), got shape {items.shape}")
        return np.flatnonzero(items)
    out = [_index(item, n_features, names, what) for item in items.tolist()]
    return np.unique(np.asarray(out, dtype=np.int64))


def _index(item, n_features: int, names, what: str) -> int:
    if isinstance(item, str):
        if names is None:
            raise ValueError(f"{what}: feature {item!r} is a name, and X has no column names "
                             "(fit on a DataFrame, or give indices)")
        hits = np.flatnonzero(np.asarray(names, dtype=object) == item)
        if hits.size == 0:
            raise ValueError(f"{what}: no feature named {item!r}")
        return int(hits[0])
    if isinstance(item, float) and not float(item).is_integer():
        raise ValueError(f"{what}: {item!r} is not a feature index")
    index = int(item)
    if not 0 <= index < n_features:
        raise ValueError(f"{what}: feature index {index} is out of range (X has "
                         f"{n_features} features, indices 0 … {n_features - 1})")
    return index


def _factors(value, n_features: int, names, owner: str) -> np.ndarray | None:
    if value is None:
        return None
    what = f"{owner}: penalty_factor"
    if isinstance(value, Mapping):
        factor = np.ones(n_features)
        for item, f in value.items():
            factor[_index(item, n_features, names, what)] = float(f)
    else:
        factor = np.asarray(value, dtype=np.float64).ravel()
        if factor.size != n_features:
            raise ValueError(f"{what}: one factor per feature ({n_features}), got "
                             f"{factor.size} (or give a mapping {{feature: factor}})")
        factor = factor.copy()
    bad = np.flatnonzero(np.isnan(factor) | (factor < 0))
    if bad.size:
        raise ValueError(f"{what}: factors are non-negative numbers (0: always in, inf: never);"
                         f" feature {_name(bad[0], names)} has {factor[bad[0]]!r}")
    return factor


def refuse(estimator, know: Knowledge) -> None:
    """Raise a ValueError when ``know`` asks for an option the method does not honour,
    naming the options it has and the methods that honour the refused one."""
    honoured = type(estimator).knowledge
    missing = sorted(know.used() - set(honoured))
    if not missing:
        return
    option = missing[0]
    others = sorted(name for name, cls in REGISTRY.items() if option in cls.knowledge)
    has = ", ".join(sorted(honoured)) or "none of these options"
    raise ValueError(f"{estimator._describe()} cannot honour {option}: it has {has}. "
                     f"Methods with {option}: {', '.join(others) or 'none'}")


def top(scores: np.ndarray, k: int, know: Knowledge | None) -> np.ndarray:
    """Sorted indices of the ``k`` columns a ranking keeps: the always-included first, then
    the largest ``scores`` divided by the penalty factor (ties: the earlier column)."""
    scores = np.asarray(scores, dtype=np.float64)
    index = np.arange(scores.size)
    if know is None:
        return np.sort(np.lexsort((index, -scores))[:k])
    priority = know.priority
    pinned = np.isinf(priority)
    value = np.where(pinned, 0.0, scores * np.where(pinned, 1.0, priority))
    return np.sort(np.lexsort((index, -value, ~pinned))[:k])


def scale_columns(X, know: Knowledge | None):
    """``X`` with column j divided by its penalty factor (the ℓ1 models' penalty factors: an
    ℓ1 fit on these columns has the penalty Σ f_j |w_j| in the original weights
    w_j = w'_j / f_j), and the factors (None when there are none)."""
    if know is None or know.factor is None:
        return X, None
    import scipy.sparse as sp

    inverse = 1.0 / know.factor
    if sp.issparse(X):
        return (X @ sp.diags(inverse)).asformat(X.format), know.factor
    return np.asarray(X) * inverse, know.factor


def by_index(params: Mapping, n_features: int, names=None) -> dict:
    """``params`` with the features of ``always_include``, ``exclude`` and a mapping
    ``penalty_factor`` named by index (names matched against ``names``, the dataset's
    feature names), so that an experiment fitting on plain arrays keeps them."""
    out = dict(params)
    for option in ("always_include", "exclude"):
        if _set(out.get(option)):
            out[option] = _features(out[option], n_features, names, option).tolist()
    factor = out.get("penalty_factor")
    if isinstance(factor, Mapping):
        out["penalty_factor"] = {_index(item, n_features, names, "penalty_factor"): float(f)
                                 for item, f in factor.items()}
    return out


def resolve_params(params: Mapping, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """The features ``params`` always include and those they exclude (sorted indices; a
    factor of 0 pins, ``inf`` bans)."""
    probe = type("_Probe", (), {})()
    for option in OPTIONS:
        setattr(probe, option, params.get(option))
    know = resolve(probe, n_features)
    if know is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return know.pinned, know.banned


def counts(params: Mapping, n_features: int) -> tuple[int, int]:
    """How many features ``params`` always include (a ``k`` must leave room for them) and
    how many a model may use (a ``k`` can reach)."""
    pinned, banned = resolve_params(params, n_features)
    return int(pinned.size), int(n_features - banned.size)


def pinned_count(params: Mapping, n_features: int) -> int:
    """How many features ``params`` always include."""
    return counts(params, n_features)[0]


def shared(knowledge: Mapping | None, classes, n_features: int, names=None) -> dict:
    """The options every compared method is given (a fair comparison), by index; raises a
    ValueError naming a method that cannot honour one, before any fit."""
    if not knowledge:
        return {}
    unknown = sorted(set(knowledge) - set(OPTIONS))
    if unknown:
        raise ValueError(f"knowledge takes {', '.join(OPTIONS)}; got {unknown[0]!r}")
    given_ = by_index({o: v for o, v in knowledge.items() if _set(v)}, n_features, names)
    for cls in classes:
        estimator = cls(**given_)
        refuse(estimator, resolve(estimator, n_features))
    return given_


def from_saved(saved: Mapping | None) -> dict:
    """The estimator parameters of a session file's ``knowledge`` entry (JSON: the factors'
    features as text keys); only the options that ask for something."""
    saved = saved or {}
    out = {}
    for option in ("always_include", "exclude"):
        if saved.get(option):
            out[option] = [int(j) for j in saved[option]]
    if saved.get("penalty_factor"):
        out["penalty_factor"] = {int(j): float(f) for j, f in saved["penalty_factor"].items()}
    if saved.get("positive"):
        out["positive"] = True
    return out
