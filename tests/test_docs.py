"""The project's files speak to users: a short README that keeps the two commands, and no
file that names numbered rounds of work (history lives in the commit messages)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LINES = 250
ROUNDS = re.compile(r"\bround[s]?\s*#?\d+\b", re.IGNORECASE)


def test_the_readme_is_short_and_keeps_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_LINES
    assert "make serve" in text and "make test" in text


def test_no_tracked_file_names_numbered_rounds_of_work():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    named = []
    for name in files:
        path = ROOT / name
        if path.suffix in {".npz", ".png", ".parquet", ".gz", ".ipynb"} or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        named += [f"{name}:{i + 1}" for i, line in enumerate(text.splitlines())
                  if ROUNDS.search(line)]
    assert not named, named


def test_the_pattern_sees_a_numbered_round():
    word = "round"  # joined here, so this file does not name one itself
    assert ROUNDS.search(f"as measured in {word.title()} 12") and ROUNDS.search(f"{word}s 3–4")
    assert not ROUNDS.search("exchange rounds of the refinement")


def _python_block(text: str, heading: str) -> str:
    section = text.split(heading, 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readmes_links_lead_to_files():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)\)", text)
    assert targets
    assert [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()] == []


@pytest.mark.slow
def test_the_readmes_python_quick_start_runs_as_written(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = _python_block(text, "## Python quick start")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["fgm"].selected_features_.size == 10
    assert capsys.readouterr().out.count("\n") >= 2  # the callback printed the records


def test_the_knowledge_page_says_what_each_method_honours():
    """docs/knowledge.md's table: every registered method in one row, and its yes/no per
    option as the method declares it."""
    from explorer.methods import REGISTRY
    from explorer.methods.knowledge import OPTIONS

    text = (ROOT / "docs" / "knowledge.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line
            and re.search(r"\| (yes|no)", line)]
    seen = set()
    for row in rows:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip("|"))]
        keys = re.findall(r"`([a-z0-9-]+)`", cells[0])
        said = dict(zip(("exclude", "always_include", "penalty_factor", "positive"),
                        (c.startswith("yes") for c in cells[1:5])))
        for key in keys:
            assert key in REGISTRY, key
            honoured = REGISTRY[key].knowledge
            assert said == {o: o in honoured for o in OPTIONS}, (key, said, honoured)
            seen.add(key)
    assert seen == set(REGISTRY)
