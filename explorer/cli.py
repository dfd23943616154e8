"""The ``explorer`` command.

    explorer run session.json [--out selected.csv] [--data FILE]
        Reproduce a fit exported from the app: load the dataset, fit the method with the saved
        parameters on the same split, print the selected features and the test measures.
    explorer datasets | explorer methods
        List the catalogue or the registered methods.
    explorer serve [--port 5006]
        Serve the dashboard and the teaching pages (same as ``make serve``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np


def _load_session(path: Path) -> dict:
    try:
        session = json.loads(path.read_text())
    except FileNotFoundError:
        raise SystemExit(f"explorer: {path}: no such session file") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"explorer: {path}: not a JSON session file ({exc})") from None
    if not isinstance(session, dict) or "method" not in session or "dataset" not in session:
        raise SystemExit(f"explorer: {path}: not an explorer session (needs 'dataset' and "
                         "'method'; export one from the app)")
    return session


def run(args) -> int:
    from .data import DataError, catalogue, load
    from .experiments import check_compatible, fit_kwargs
    from .methods import REGISTRY
    from .metrics import evaluate, metrics_for, recovery
    from .viz import selected_table

    session_path = Path(args.session)
    session = _load_session(session_path)
    name = session["dataset"]
    try:
        if args.data:
            dataset = load(args.data, label=session.get("label"))
        elif name in catalogue():
            dataset = load(name, **session.get("dataset_params", {}))
        else:
            candidate = Path(name)
            if not candidate.is_absolute():
                candidate = session_path.parent / candidate
            dataset = load(candidate, label=session.get("label"))
    except DataError as exc:
        print(f"explorer: {exc}", file=sys.stderr)
        return 2
    method = session["method"]
    if method not in REGISTRY:
        print(f"explorer: unknown method {method!r}; known: {', '.join(sorted(REGISTRY))}",
              file=sys.stderr)
        return 2
    cls = REGISTRY[method]
    known = {s.name for s in cls.param_specs}
    params = {k: v for k, v in session.get("params", {}).items() if k in known}
    params.pop("warm_start", None)
    try:
        check_compatible(method, dataset)
        split = dataset.split(test_size=0.3, seed=0)
        estimator = cls(**params)
        estimator.fit(split.X, split.y, **fit_kwargs(estimator, split))
    except (DataError, ValueError) as exc:
        print(f"explorer: {exc}", file=sys.stderr)
        return 2
    table = selected_table(estimator, split)
    task = estimator._task if estimator._task != "ranking" else "regression"
    scores = evaluate(estimator, split.X_test, split.y_test, metrics_for(task))
    print(f"dataset  {split.name}: {split.summary()}")
    print(f"method   {method} {json.dumps(params, default=str)}")
    print(f"fit      {estimator.n_iter_} iterations, {estimator.fit_time_:.3f} s")
    print(f"selected {len(table)} features: "
          + ", ".join(table["name"].astype(str).head(30))
          + (" …" if len(table) > 30 else ""))
    for key, value in scores.items():
        if not np.isnan(value):
            print(f"test {key:<9} {value:.4f}")
    if split.truth is not None:
        rec = recovery(estimator.selected_features_, split.truth)
        print(f"true features found {rec['found']}/{len(split.truth)}")
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"written  {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="explorer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="reproduce a fit from an exported session JSON")
    p_run.add_argument("session", help="session.json exported from the app")
    p_run.add_argument("--out", help="write the selected features to this CSV file")
    p_run.add_argument("--data", help="data file to use instead of the session's dataset")
    sub.add_parser("datasets", help="list the catalogue")
    sub.add_parser("methods", help="list the registered methods")
    p_serve = sub.add_parser("serve", help="serve the dashboard and teaching pages")
    p_serve.add_argument("--port", type=int, default=5006)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "datasets":
        from .data import catalogue_entries

        for entry in catalogue_entries():
            print(f"{entry.name:<22} {entry.kind:<9} {entry.description}")
        return 0
    if args.command == "methods":
        from .methods import REGISTRY

        for name, cls in sorted(REGISTRY.items()):
            print(f"{name:<12} {cls.display_name or cls.__name__:<18} knob: {cls.sparsity_param}")
        return 0
    apps = sorted(str(p) for p in (Path(__file__).resolve().parents[1] / "apps").glob("*.py"))
    return subprocess.call([sys.executable, "-m", "panel", "serve", *apps, "--port",
                            str(args.port), "--index", "explorer", "--check-unused-sessions",
                            "1000", "--unused-session-lifetime", "1000"])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
