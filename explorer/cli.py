"""The ``explorer`` command.

    explorer run session.json [--out selected.csv] [--data FILE]
        Reproduce a fit exported from the app: load the dataset, fit the method with the saved
        parameters on the same split, print the selected features and the test measures.
    explorer datasets | explorer methods
        List the catalogue or the registered methods.
    explorer serve [--port 5006] [--data PATH ...] [--max-upload-mb 50] [--show]
        Serve the dashboard and the teaching pages on this machine only (127.0.0.1), as
        ``make serve`` does. ``--data`` adds local files to the dataset list (for files too big
        to upload); ``--show`` opens a browser.
    explorer serve --share [--password-file FILE] [--origin HOST[:PORT] ...]
        Serve to a class: listen on every interface, behind a password (Panel's basic auth;
        the password comes from FILE or the EXPLORER_PASSWORD environment variable and is
        never put on a command line), accepting pages only from the named origins (default:
        this machine's host names and addresses).
"""

from __future__ import annotations

import argparse
import json
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
        shape = session.get("image_shape")
        if args.data:
            dataset = load(args.data, label=session.get("label"), image_shape=shape)
        elif name in catalogue():
            dataset = load(name, image_shape=shape, **session.get("dataset_params", {}))
        else:
            candidate = Path(name)
            if not candidate.is_absolute():
                candidate = session_path.parent / candidate
            dataset = load(candidate, label=session.get("label"), image_shape=shape)
    except (DataError, ValueError) as exc:
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
    from .methods.knowledge import from_saved

    knowledge = from_saved(session.get("knowledge"))
    try:
        check_compatible(method, dataset, params)
        split = dataset.split(test_size=0.3, seed=0)
        estimator = cls(**params, **knowledge)
        estimator.fit(split.X, split.y, **fit_kwargs(estimator, split))
    except (DataError, ValueError) as exc:
        print(f"explorer: {exc}", file=sys.stderr)
        return 2
    table = selected_table(estimator, split)
    scores = evaluate(estimator, split.X_test, split.y_test, metrics_for(estimator._task),
                      query=split.query_test)
    print(f"dataset  {split.name}: {split.summary()}")
    print(f"method   {method} {json.dumps(params, default=str)}")
    if knowledge:
        print(f"knowledge {json.dumps(knowledge, default=str)}")
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
    sub.add_parser("warm", help="compile the numerical kernels into numba's cache (make "
                                "install runs it: the first fit then starts at once)")
    sub.add_parser("methods", help="list the registered methods")
    p_serve = sub.add_parser("serve", help="serve the dashboard and teaching pages")
    p_serve.add_argument("--port", type=int, default=5006)
    p_serve.add_argument("--share", action="store_true",
                         help="listen on every interface, behind a password (a classroom)")
    p_serve.add_argument("--password-file", help="file holding the class password "
                         "(default: the EXPLORER_PASSWORD environment variable)")
    p_serve.add_argument("--user", default="class", help="login name with --share")
    p_serve.add_argument("--origin", action="append", help="allowed page origin HOST[:PORT] "
                         "with --share (repeatable; default: this machine's names)")
    p_serve.add_argument("--data", action="append", metavar="PATH",
                         help="a local data file to offer in the dataset list (repeatable)")
    p_serve.add_argument("--max-upload-mb", type=float, default=50.0,
                         help="largest file the page accepts for upload (default 50)")
    p_serve.add_argument("--fit-processes", type=int, default=None, metavar="N",
                         help="worker processes that compute the fits (default: one per "
                              "core; 0 computes them in the server's own threads)")
    p_serve.add_argument("--num-procs", type=int, default=1, metavar="N",
                         help="server processes (Panel's --num-procs); with N > 1 each "
                              "computes its sessions' fits in its own threads "
                              "(--fit-processes 0)")
    p_serve.add_argument("--show", action="store_true", help="open a browser")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "warm":
        from .methods.warm import compile_all

        def say(name, done, total):
            print(f"\rcompiling the numerical kernels: {done}/{total} ({name})".ljust(78),
                  end="", flush=True)

        seconds = compile_all(say)
        print(f"\rcompiled the numerical kernels in {seconds:.1f} s".ljust(78))
        return 0
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
    return serve(args)


def _cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def serve_arguments(args) -> list[str]:
    """The ``panel serve`` command line of ``explorer serve`` (without the password)."""
    apps = sorted(str(p) for p in (Path(__file__).resolve().parents[1] / "apps").glob("*.py"))
    port = str(args.port)
    # a closed tab's session (and its fit) ends within ~6 s; a page's session, made when its
    # HTML is served, waits 5 s for the page's websocket (under a class's load it came after
    # Bokeh's 1 s: the session was discarded and the page built a second time)
    argv = ["serve", *apps, "--port", port, "--index", "explorer",
            "--check-unused-sessions", "1000", "--unused-session-lifetime", "5000"]
    if args.share:
        argv += ["--address", "0.0.0.0"]
        for origin in args.origin or default_origins(args.port):
            argv += ["--allow-websocket-origin", origin]
    else:
        argv += ["--address", "127.0.0.1", "--allow-websocket-origin", f"localhost:{port}",
                 "--allow-websocket-origin", f"127.0.0.1:{port}"]
    if args.show:
        argv.append("--show")
    return argv


def default_origins(port: int) -> list[str]:
    """This machine's names and addresses with the port: where students' pages come from."""
    import socket

    import psutil

    names = {"localhost", "127.0.0.1", socket.gethostname(), socket.getfqdn()}
    try:
        names.update(info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None)
                     if info[0] == socket.AF_INET)
    except OSError:
        pass
    # every interface's IPv4 address: students type the teacher's address
    names.update(a.address for addrs in psutil.net_if_addrs().values() for a in addrs
                 if a.family == socket.AF_INET)
    return sorted(f"{name}:{port}" for name in names if name)


def read_password(args) -> str:
    """The class password, from ``--password-file`` or ``EXPLORER_PASSWORD``."""
    import os

    if args.password_file:
        try:
            password = Path(args.password_file).read_text().strip()
        except OSError as exc:
            raise SystemExit(f"explorer: cannot read the password file: {exc}") from None
    else:
        password = os.environ.get("EXPLORER_PASSWORD", "").strip()
    if not password:
        raise SystemExit("explorer: --share needs a password: put it in a file given by "
                         "--password-file FILE, or in the EXPLORER_PASSWORD environment "
                         "variable (anyone who can reach this machine could use it otherwise)")
    if len(password) < 8:
        raise SystemExit("explorer: the class password must have at least 8 characters")
    return password


def serve(args) -> int:
    """Run ``panel serve`` in this process with the explorer's settings."""
    import math
    import os
    import secrets
    import tempfile

    if not math.isfinite(args.max_upload_mb) or args.max_upload_mb <= 0:
        raise SystemExit(f"explorer: --max-upload-mb must be a positive number of megabytes, "
                         f"got {args.max_upload_mb}")
    if not 0 < args.port < 65536:
        raise SystemExit(f"explorer: --port must be between 1 and 65535, got {args.port}")
    argv = serve_arguments(args)
    if args.num_procs < 1:
        raise SystemExit(f"explorer: --num-procs must be 1 or more, got {args.num_procs}")
    if args.num_procs > 1 and args.fit_processes:
        raise SystemExit("explorer: --num-procs > 1 forks the server after it starts, so its "
                         "processes cannot share a pool of fit processes: use "
                         "--fit-processes 0 with it")
    forked = args.num_procs > 1
    processes = 0 if forked else _cores() if args.fit_processes is None else \
        args.fit_processes
    if processes < 0:
        raise SystemExit(f"explorer: --fit-processes must be 0 or more, got {processes}")
    if forked:
        argv += ["--num-procs", str(args.num_procs)]
    env = {"EXPLORER_MAX_UPLOAD_MB": str(args.max_upload_mb),
           "EXPLORER_FIT_PROCESSES": str(processes)}
    if args.data:
        missing = [p for p in args.data if not Path(p).exists()]
        if missing:
            raise SystemExit(f"explorer: no such data file: {', '.join(missing)}")
        env["EXPLORER_DATA"] = os.pathsep.join(str(Path(p).resolve()) for p in args.data)
    if args.share:
        password = read_password(args)
        # Panel reads {user: password} from a file; the password never appears in `ps`
        handle, auth = tempfile.mkstemp(prefix="explorer-auth-", suffix=".json")
        with os.fdopen(handle, "w") as f:
            json.dump({args.user: password}, f)
        os.chmod(auth, 0o600)
        env["PANEL_COOKIE_SECRET"] = secrets.token_urlsafe(32)
        argv += ["--basic-auth", auth]
        print(f"explorer: sharing on every interface of this machine, port {args.port}; "
              f"log in as {args.user!r} with the class password. Origins: "
              + ", ".join(argv[i + 1] for i, a in enumerate(argv)
                          if a == "--allow-websocket-origin"), file=sys.stderr)
    os.environ.update(env)
    from panel.command import main as panel_main

    from .ui import enforce_websocket_origins, start_fit_pool, warm_up_kernels

    enforce_websocket_origins()  # --allow-websocket-origin holds for same-origin pages too
    if not forked:  # no threads or child processes before Panel forks the server
        start_fit_pool()  # the worker processes start (and compile) while the server starts
        warm_up_kernels()  # numba compiles while the server starts, not in the first fit

    sys.argv = ["panel", *argv]
    try:
        panel_main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
