"""Short name → method class, so the app, the sweeps and the command line list methods
without knowing them."""

from __future__ import annotations

# name → a subclass of explorer.methods.base.BaseSelector (not imported: the base imports this)
REGISTRY: dict[str, type] = {}


def register(name: str):
    """Class decorator: make a method available under ``name`` (app, sweeps, CLI)."""

    def wrap(cls):
        if name in REGISTRY and REGISTRY[name] is not cls:
            raise ValueError(f"method name {name!r} is already registered")
        cls.registry_name = name
        REGISTRY[name] = cls
        return cls

    return wrap


def get_method(name: str) -> type:
    """The class registered under ``name`` (``KeyError`` listing the names if unknown)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no method named {name!r}; known: {', '.join(sorted(REGISTRY))}") \
            from None


def multiclass_methods() -> str:
    """The registered classifiers that take more than two classes, named for a message."""
    names = [cls.display_name or key for key, cls in sorted(REGISTRY.items())
             if cls.multiclass != "binary" and cls()._task == "classification"]
    return ", ".join(names)
