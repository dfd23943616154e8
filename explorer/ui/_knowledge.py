"""What the user knows about the features, held by the session (no Panel import): features
always in, features never in, penalty factors read from a CSV file and the sign constraint.
Given alike to the method fitted, the methods it is compared with, the stability and error
control runs, and written into the URL and the exported session, so one setting still gives
one result (:mod:`explorer.methods.knowledge` is what the estimators do with it)."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field

from ..data import DataError
from ..methods import get_method
from ..methods.knowledge import OPTIONS

# the URL's names
PIN, BAN, FACTORS, POSITIVE = "pin", "ban", "factors", "positive"


@dataclass
class UserKnowledge:
    """Pinned and banned feature indices, penalty factors ``{index: factor}``, ``positive``."""

    pinned: list[int] = field(default_factory=list)
    banned: list[int] = field(default_factory=list)
    factors: dict[int, float] = field(default_factory=dict)
    positive: bool = False

    def __bool__(self) -> bool:
        return bool(self.pinned or self.banned or self.factors or self.positive)

    def params(self) -> dict:
        """The estimator parameters of what is set (an empty dict when nothing is)."""
        out = {}
        if self.pinned:
            out["always_include"] = sorted(self.pinned)
        if self.banned:
            out["exclude"] = sorted(self.banned)
        if self.factors:
            out["penalty_factor"] = dict(sorted(self.factors.items()))
        if self.positive:
            out["positive"] = True
        return out

    # ------------------------------------------------------------------ edits
    def pin(self, feature: int) -> None:
        """Always include ``feature`` (no longer excluded)."""
        feature = int(feature)
        if feature in self.banned:
            self.banned.remove(feature)
        if feature not in self.pinned:
            self.pinned.append(feature)

    def ban(self, feature: int) -> None:
        """Exclude ``feature`` (no longer always included)."""
        feature = int(feature)
        if feature in self.pinned:
            self.pinned.remove(feature)
        if feature not in self.banned:
            self.banned.append(feature)

    def release(self, feature: int) -> None:
        """Neither pinned nor banned."""
        feature = int(feature)
        for held in (self.pinned, self.banned):
            if feature in held:
                held.remove(feature)

    def clear(self) -> None:
        self.pinned, self.banned, self.factors, self.positive = [], [], {}, False

    # ------------------------------------------------------------------ text
    def describe(self, names: list[str]) -> str:
        """One line for the page: what every fit is given."""
        parts = []
        if self.pinned:
            parts.append("always in: " + _listed(self.pinned, names))
        if self.banned:
            parts.append("never in: " + _listed(self.banned, names))
        if self.factors:
            parts.append(f"penalty factors on {len(self.factors)} features")
        if self.positive:
            parts.append("weights ≥ 0")
        return "; ".join(parts)

    def to_query(self) -> dict[str, str]:
        out = {}
        if self.pinned:
            out[PIN] = ",".join(str(j) for j in sorted(self.pinned))
        if self.banned:
            out[BAN] = ",".join(str(j) for j in sorted(self.banned))
        if self.factors:
            out[FACTORS] = ",".join(f"{j}:{f:g}" for j, f in sorted(self.factors.items()))
        if self.positive:
            out[POSITIVE] = "1"
        return out

    @classmethod
    def from_texts(cls, texts: dict[str, str], n_features: int | None,
                   problems: list[str]) -> UserKnowledge:
        """Read the URL's ``pin``, ``ban``, ``factors`` and ``positive`` (bad entries go to
        ``problems``, named, and are left out)."""
        out = cls()
        for key, target in ((PIN, out.pinned), (BAN, out.banned)):
            for item in _items(texts.get(key)):
                index = _feature(item, n_features, key, problems)
                if index is not None and index not in target:
                    target.append(index)
        for item in _items(texts.get(FACTORS)):
            feature, _, value = item.partition(":")
            index = _feature(feature, n_features, FACTORS, problems)
            try:
                factor = float(value)
            except ValueError:
                factor = math.nan
            if not factor >= 0:
                problems.append(f"{FACTORS}: {item!r} is not feature:factor with a factor ≥ 0")
            elif index is not None:
                out.factors[index] = factor
        both = set(out.pinned) & set(out.banned)
        if both:
            problems.append(f"feature {min(both)} is both pinned and banned: left out of both")
            out.pinned = [j for j in out.pinned if j not in both]
            out.banned = [j for j in out.banned if j not in both]
        if texts.get(POSITIVE) is not None:
            out.positive = str(texts[POSITIVE]).lower() in ("1", "true", "yes")
        return out

    def to_session(self) -> dict:
        return {"always_include": sorted(self.pinned), "exclude": sorted(self.banned),
                "penalty_factor": {str(j): f for j, f in sorted(self.factors.items())},
                "positive": self.positive}


def read_factors(content: bytes, names: list[str]) -> dict[int, float]:
    """Penalty factors from a CSV file of ``name, factor`` rows (a header row allowed; a name
    may also be a feature number). Raises a DataError naming the first bad row."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError("the penalty-factor file is not UTF-8 text (a CSV of name, factor)") \
            from None
    position = {name: j for j, name in enumerate(names)}
    factors: dict[int, float] = {}
    for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 2:
            raise DataError(f"penalty factors, line {line}: a row is name, factor; got {row}")
        name, value = row[0].strip(), row[1].strip()
        try:
            factor = float(value)
        except ValueError:
            if line == 1:
                continue  # a header
            raise DataError(f"penalty factors, line {line}: {value!r} is not a number") \
                from None
        if name in position:
            index = position[name]
        elif name.isdigit() and int(name) < len(names):
            index = int(name)
        else:
            raise DataError(f"penalty factors, line {line}: no feature named {name!r}")
        if not factor >= 0:
            raise DataError(f"penalty factors, line {line}: {name}'s factor is {value}; "
                            "factors are ≥ 0 (0: always in, inf: never)")
        factors[index] = factor
    if not factors:
        raise DataError("the penalty-factor file has no name, factor row")
    return factors


def honoured(method: str, knowledge: UserKnowledge) -> str | None:
    """Why ``method`` cannot take ``knowledge`` (the options it lacks), or None."""
    if not knowledge:
        return None
    cls = get_method(method)
    wanted = {"always_include": bool(knowledge.pinned) or 0.0 in knowledge.factors.values(),
              "exclude": bool(knowledge.banned) or math.inf in knowledge.factors.values(),
              "penalty_factor": any(0 < f < math.inf and f != 1
                                    for f in knowledge.factors.values()),
              "positive": knowledge.positive}
    missing = [o for o in OPTIONS if wanted[o] and o not in cls.knowledge]
    if not missing:
        return None
    return (f"{cls.display_name or method} cannot honour {', '.join(missing)} "
            f"(it has {', '.join(sorted(cls.knowledge)) or 'none of these'})")


def _listed(indices, names, most: int = 6) -> str:
    shown = [str(names[j]) if j < len(names) else str(j) for j in sorted(indices)[:most]]
    more = len(indices) - most
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _items(text) -> list[str]:
    if text is None:
        return []
    return [t.strip() for t in str(text).split(",") if t.strip()]


def _feature(item: str, n_features: int | None, key: str, problems: list[str]) -> int | None:
    try:
        index = int(item)
    except ValueError:
        problems.append(f"{key}: {item!r} is not a feature number")
        return None
    if index < 0 or (n_features is not None and index >= n_features):
        problems.append(f"{key}: feature {index} does not exist in this dataset")
        return None
    return index
