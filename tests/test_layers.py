"""The package's layers (DESIGN.md): every import, lazy ones inside functions included, points
down; the numerics never import Panel, HoloViews or Bokeh; the UI reaches solvers only through
the methods' estimator contract."""

from __future__ import annotations

import ast
from pathlib import Path

import explorer

PACKAGE = Path(explorer.__file__).parent

# bottom to top; a unit imports only units of a lower rank (same-rank units stay independent)
RANK = {"_errors": 0, "_params": 0, "texts": 0,
        "kernels": 1, "metrics": 1, "viz": 1,
        "data": 2, "features": 2,
        "optim": 3,
        "engines": 4,
        "methods": 5,
        "experiments": 6,
        "ui": 7,
        "cli": 8,
        "__init__": 9}
PLOTTING = {"panel", "holoviews", "bokeh"}
MAY_PLOT = {"viz", "ui", "cli"}
UI_REACHES = {"_params", "texts", "metrics", "viz", "data", "methods", "experiments"}


def _unit(module: str) -> str:
    """``explorer.engines.fgm.l12`` → ``optim``; the package itself → ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path):
    """(module of ``path``, every module it imports) with relative imports resolved."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
    module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found += [target] if node.module else [f"{target}.{a.name}" for a in node.names]
    return module, found


def _imported_names():
    """(module, package imported from, name) for every ``from … import name``: a private
    module or function taken by name (``from ..kernels import _numba``) is no edge above."""
    for path in sorted(PACKAGE.rglob("*.py")):
        module, _ = _imports(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + [node.module])
                for alias in node.names:
                    yield module, target, alias.name
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    yield module, node.module, alias.name


def _edges():
    for path in sorted(PACKAGE.rglob("*.py")):
        module, targets = _imports(path)
        for target in targets:
            yield module, target


def test_every_unit_has_a_layer():
    units = {_unit(module) for module, _ in _edges()}
    assert units <= set(RANK), f"place these in RANK: {sorted(units - set(RANK))}"


def test_imports_point_down():
    upward = [(module, target) for module, target in _edges()
              if target.startswith("explorer") and _unit(target) != _unit(module)
              and RANK[_unit(target)] >= RANK[_unit(module)]]
    assert not upward, f"imports that do not point down: {upward}"


def test_numerics_never_import_the_plotting_stack():
    plotting = [(module, target) for module, target in _edges()
                if target.split(".")[0] in PLOTTING and _unit(module) not in MAY_PLOT]
    assert not plotting, plotting


def test_the_ui_reaches_solvers_only_through_the_methods():
    direct = [(module, target) for module, target in _edges()
              if _unit(module) == "ui" and target.startswith("explorer.")
              and _unit(target) not in UI_REACHES | {"ui"}]
    assert not direct, direct


def test_other_units_are_used_through_their_public_names():
    """A unit reaches another only through names it exports (its package or a public
    module), never through the other's private modules: what a unit exports is its contract."""
    private = [(module, target) for module, target in _edges()
               if target.startswith("explorer.") and _unit(target) != _unit(module)
               and any(part.startswith("_") for part in target.split(".")[2:])]
    assert not private, f"imports of another unit's private modules: {private}"
    names = [(module, target, name) for module, target, name in _imported_names()
             if target.startswith("explorer.") and _unit(target) != _unit(module)
             and name.startswith("_")]
    assert not names, f"private names taken from another unit: {names}"


ENGINES = sorted(p.name for p in (PACKAGE / "engines").iterdir()
                 if (p / "__init__.py").exists())


def _engine(module: str) -> str | None:
    """``explorer.engines.fgm.refine`` → ``fgm``; anything else → None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "engines" else None


def test_every_method_has_its_engine():
    assert ENGINES == ["fgm", "fs_manifold", "fs_multi", "fsa", "grfl"]


def test_the_core_imports_no_engine():
    """``explorer.optim`` is the method-agnostic core: the loss table, datafits, penalties,
    APG, stopping, the block cache, the master protocol, the outer loop, the level method."""
    into = [(module, target) for module, target in _edges()
            if _unit(module) == "optim" and _unit(target) == "engines"]
    assert not into, into


def test_the_kernels_hold_the_shared_scorer_and_no_engines_loop():
    """``explorer.kernels`` is the shared floor (Xᵀs over dense, CSR, CSC, chunked and group
    reductions, column gathers, the loss kernels): it imports no engine, and a method's own
    compiled loop (FGM's APG, FSA's steps, FS-multi's F1 table) sits beside its engine."""
    into = [(module, target) for module, target in _edges()
            if _unit(module) == "kernels" and _unit(target) in ("engines", "methods")]
    assert not into, into
    import explorer.kernels._numba as shared

    own = [name for name in vars(shared) if name.startswith(("fsa_", "apg_", "f1_"))]
    assert not own, f"an engine's loop among the shared kernels: {own}"
    for engine in ("fgm", "fsa", "fs_multi"):
        assert (PACKAGE / "engines" / engine / "_compiled.py").exists()


def test_engines_use_the_core_through_its_public_names_and_not_each_other():
    """An engine imports ``explorer.optim`` itself (its ``__all__`` is the core's contract), never
    one of its modules, and no other engine: each method's engine stands alone on the core."""
    reached = [(module, target) for module, target in _edges()
               if _engine(module) and target.startswith("explorer.optim.")]
    assert not reached, f"engines reaching into the core's modules: {reached}"
    across = [(module, target) for module, target in _edges()
              if _engine(module) and _engine(target) and _engine(target) != _engine(module)]
    assert not across, f"engines importing each other: {across}"


def test_methods_reach_engines_and_core_through_their_packages():
    deep = [(module, target) for module, target in _edges()
            if _unit(module) == "methods"
            and (target.startswith("explorer.optim.")
                 or (_engine(target) and target.count(".") > 2))]
    assert not deep, f"methods reaching into a module of the core or an engine: {deep}"


def test_the_shared_outer_loop_knows_no_master():
    """The cutting-plane loop drives any master through the protocol (FGM's master once lived in
    its module and the bundle took its constant from it)."""
    _, targets = _imports(PACKAGE / "optim" / "cutting_plane.py")
    assert not [t for t in targets if t.startswith("explorer.engines")]


def test_the_reader_sees_a_deep_import_into_the_core():
    """The engine checks above are only as good as the reader: an engine file written with a
    core module's path must show up as that path."""
    module, targets = _imports(PACKAGE / "engines" / "fgm" / "l12.py")
    assert module == "explorer.engines.fgm.l12"
    assert "explorer.optim" in targets and "explorer.kernels" in targets


def test_the_import_reader_sees_lazy_and_relative_imports():
    """The checks above are only as good as the reader: a function-level relative import in
    the kernels (the kind that ran upwards before) must be seen and resolved."""
    module, targets = _imports(PACKAGE / "kernels" / "chunked.py")
    assert module == "explorer.kernels.chunked"
    assert "explorer._errors" in targets and "explorer.kernels._numba" in targets
    _, lazy = _imports(PACKAGE / "ui" / "_worker.py")  # imports the warm-up inside a function
    assert "explorer.methods.warm" in lazy


MAX_PARAMETERS = 8


def _parameter_counts(unit: str):
    """(place, function, its parameters) of every function and method in ``unit`` (self and
    cls not counted; ``*args`` and ``**kwargs`` count one each)."""
    for path in sorted((PACKAGE / unit).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
                if names and names[0] in ("self", "cls"):
                    names = names[1:]
                count = len(names) + (args.vararg is not None) + (args.kwarg is not None)
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}", node.name, count


def test_no_solver_takes_more_than_eight_parameters():
    """A solver is given its problem as objects (the restricted data term, the cut model, the
    compiled loops' named tuples, the stopping rule), not as a row of loose arguments."""
    wide = [f"{place} {name}: {count}" for unit in ("engines", "optim")
            for place, name, count in _parameter_counts(unit) if count > MAX_PARAMETERS]
    assert not wide, wide


def test_the_parameter_count_sees_a_wide_function(tmp_path, monkeypatch):
    module = tmp_path / "engines"
    module.mkdir()
    (module / "wide.py").write_text("def f(self, a, b, c, d, e, f, g, h, *, i=1):\n    pass\n"
                                    "def g(a, b, c, d, e, f, g, *rest):\n    pass\n")
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path)
    counts = {name: count for _, name, count in _parameter_counts("engines")}
    assert counts == {"f": 9, "g": 8}


def test_no_module_outside_the_loss_table_compares_a_losss_name():
    """What a loss is (its ½, liblinear's name for it, its compiled case) is a field of the
    loss table, not a comparison of its name elsewhere."""
    from explorer.optim.losses import LOSSES

    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "optim" / "losses.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            values = [e for side in sides
                      for e in (side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set)
                                else [side])]
            if any(isinstance(v, ast.Constant) and v.value in LOSSES for v in values):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, found
