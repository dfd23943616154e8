"""The example notebook runs top to bottom in a real kernel."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.ipynb")), ids=lambda p: p.name)
def test_example_notebook_executes(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for cell in nb.cells if cell.cell_type == "code"
              for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    texts = "".join(o.get("text", "") for cell in nb.cells for o in cell.get("outputs", []))
    assert "features, test accuracy" in texts
    # the watched fit drew every record it made
    watched = texts.split("watched fit:")[1].split()
    assert int(watched[0]) == int(watched[2]) > 0
    # ExplorerApp around a fitted estimator draws its history (it used to show empty curves)
    drawn = int(texts.split("convergence points drawn:")[1].split()[0])
    assert drawn > 10
    assert "done" in texts
    # inline resources: BokehJS is embedded, not fetched from a CDN (views render offline)
    html = "".join(o.get("data", {}).get("application/javascript", "") +
                   o.get("data", {}).get("text/html", "")
                   for cell in nb.cells for o in cell.get("outputs", []))
    assert "cdn.bokeh.org" not in html and len(html) > 1_000_000
    rich = [o for cell in nb.cells for o in cell.get("outputs", [])
            if o.get("output_type") in ("display_data", "execute_result")]
    assert any("application/vnd.holoviews_load.v0+json" in o.get("data", {}) or
               "text/html" in o.get("data", {}) for o in rich)


@pytest.mark.slow
def test_make_notebook_starts_jupyterlab_also_as_root():
    """`make notebook` opens JupyterLab on the example (containers and JupyterHub images run
    as root, where jupyter refuses to start without --allow-root)."""
    import os
    import signal
    import socket
    import subprocess
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(["make", "notebook"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "JUPYTER_PORT": str(port), "BROWSER": "true"})
    seen = []
    try:
        deadline = time.time() + 180
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "is running at" in line or "Running as root is not recommended" in line:
                break
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        proc.stdout.close()
    text = "".join(seen)
    assert "Running as root is not recommended" not in text, text[-2000:]
    assert "is running at" in text, text[-2000:]
