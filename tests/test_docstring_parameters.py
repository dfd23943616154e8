"""Every public estimator's and function's documented Parameters match its signature (the
model: scikit-learn's and skglm's ``test_docstring_parameters.py``): a parameter added to a
signature and not to its docstring, or a docstring naming one that no longer exists, fails
here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import explorer

VARIADIC = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)


def _public_objects():
    seen = {}
    for info in pkgutil.walk_packages(explorer.__path__, "explorer."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(seen.items())


def _documented(obj) -> list[str] | None:
    doc = ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)
    if not doc["Parameters"]:
        return None
    return [n.strip().lstrip("*") for p in doc["Parameters"] for n in p.name.split(",")
            if n.strip()]


OBJECTS = _public_objects()


def test_the_walk_finds_the_estimators_and_the_experiments():
    names = dict(OBJECTS)
    assert "explorer.methods.fgm.FGM" in names and "explorer.experiments.sweeps.sweep" in names
    assert len(OBJECTS) > 300


@pytest.mark.parametrize("name, obj", OBJECTS, ids=[n for n, _ in OBJECTS])
def test_documented_parameters_match_the_signature(name, obj):
    documented = _documented(obj)
    if documented is None:  # no Parameters section: nothing to check
        return
    try:
        signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    except (TypeError, ValueError):  # a builtin's or a compiled kernel's
        return
    params = [p for p in signature.parameters.values()
              if p.name not in ("self", "cls") and p.kind not in VARIADIC]
    missing = [p.name for p in params if p.name not in documented]
    unknown = [d for d in documented if d not in signature.parameters]
    assert not missing and not unknown, f"{name}: undocumented {missing}, not in the " \
                                        f"signature {unknown}"
