"""Where a benchmark writes its table: a run of part of a script (``--only``, ``--designs``,
``--sets``, ``--methods``) is saved under its own name and never overwrites the full table."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _common  # noqa: E402


@pytest.mark.parametrize("argv, name", [
    ([], "stability.md"),
    (["--resamples", "30"], "stability.md"),
    (["--methods", "FGM refine"], "stability-FGM_refine.md"),
    (["--sets", "grants,fine-foods", "--methods=abess"], "stability-grants+fine-foods-abess.md"),
    (["--only", "fgm"], "stability-fgm.md"),
])
def test_a_partial_run_is_saved_under_its_own_name(tmp_path, monkeypatch, argv, name):
    (tmp_path / "benchmarks").mkdir()
    monkeypatch.setattr(_common, "RESULTS", tmp_path / "benchmarks" / "results")
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "benchmarks" / "bench_stability.py"), *argv])
    table = _common.Table("t", ["a"])
    table.add(1.0)
    path = _common.save("stability", [table])
    assert path.name == name and path.parent == tmp_path / "benchmarks" / "results"
    text = path.read_text()
    assert text.startswith("<!-- produced by `python ") and "| 1 |" in text
    header = text.splitlines()[0]
    assert f"python benchmarks/bench_stability.py{''.join(' ' + a for a in argv)}`" in header


SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_benchmark_script_imports_and_lists_its_options(script):
    """A script that reaches into the package (the refinement's path, private helpers) breaks
    when they move; ``--help`` runs its imports without running a benchmark (a ``--quick``
    run of all of them takes 9 minutes: too long for every test run)."""
    import subprocess

    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=script.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--quick" in done.stdout and "--only" in done.stdout
