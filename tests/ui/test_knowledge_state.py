"""What the user knows, in the session without a browser: the inputs, the penalty-factor file,
the sweep that gives every method the same knowledge, the URL, the exported session and
``explorer run``."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from explorer.data import DataError
from explorer.ui import ExplorerState
from explorer.ui._knowledge import UserKnowledge, read_factors


@pytest.fixture
def state():
    s = ExplorerState(dataset="breast-cancer", live=False)
    s.method = "fsa"
    s.set_param("k", 5)
    yield s
    s.close()


def test_pins_and_bans_by_name_reach_the_fit(state):
    names = state.data.names()
    assert state.set_features("pinned", f"{names[3]}, 4")
    assert state.set_features("banned", names[20])
    state.fit()
    state.wait(60)
    chosen = set(state.estimator.selected_features_.tolist())
    assert {3, 4} <= chosen and 20 not in chosen and len(chosen) == 5
    # a name the dataset does not have changes nothing and says so
    assert not state.set_features("pinned", "no such feature")
    assert "no feature named 'no such feature'" in state.feedback.message
    assert state.known.pinned == [3, 4]
    # pinning a banned feature takes it from the bans
    assert state.set_features("pinned", "3, 4, 20") and state.known.banned == []


def test_the_url_and_the_exported_session_carry_the_knowledge(state, tmp_path):
    state.known.pin(3)
    state.known.ban(20)
    state.known.factors = {7: 2.5}
    query = state.query_string()
    assert "pin=3" in query and "ban=20" in query and "factors=7%3A2.5" in query
    fresh = ExplorerState(dataset="digits-3v8", live=False)
    try:
        problems = fresh.from_query({"dataset": "breast-cancer", "method": "fsa", "k": "5",
                                     "pin": "3,99", "ban": "20", "factors": "7:2.5,8:x"},
                                    fit=False)
        assert fresh.known.pinned == [3] and fresh.known.banned == [20]
        assert fresh.known.factors == {7: 2.5}
        assert any("99" in p for p in problems) and any("8:x" in p for p in problems)
    finally:
        fresh.close()
    session = tmp_path / "session.json"
    session.write_text(json.dumps(state.export_session()))
    state.fit()
    state.wait(60)
    out = subprocess.run([sys.executable, "-m", "explorer.cli", "run", str(session)],
                         capture_output=True, text=True, check=True).stdout
    assert '"always_include": [3]' in out and '"exclude": [20]' in out
    names = state.data.names()
    line = next(t for t in out.splitlines() if t.startswith("selected"))
    assert names[3] in line and names[20] not in line.split(":", 1)[1].split(", ")


def test_penalty_factor_file(state, tmp_path):
    names = state.data.names()
    content = f"feature,factor\n{names[0]},0\n{names[1]},inf\n{names[2]},2\n".encode()
    assert read_factors(content, names) == {0: 0.0, 1: math.inf, 2: 2.0}
    for bad, message in ((b"x,1\n", "no feature named 'x'"),
                         (f"{names[0]},-1\n".encode(), "factors are ≥ 0"),
                         (f"name,factor\n{names[0]},one\n".encode(), "is not a number"),
                         (b"\xff\xfe", "not UTF-8"), (b"", "no name, factor row")):
        with pytest.raises(DataError, match=message):
            read_factors(bad, names)
    assert state.set_factors(content)
    state.fit()
    state.wait(60)
    chosen = state.estimator.selected_features_
    assert 0 in chosen and 1 not in chosen
    assert not state.set_factors(b"x,1\n") and state.known.factors[2] == 2.0


def test_a_sweep_gives_every_method_the_knowledge_and_leaves_out_who_cannot(state):
    state.baselines = ["abess", "grfl"]
    state.known.pin(3)
    state.sweep(n_points=3)
    state.wait(300)
    assert "grfl left out: cannot honour what you know" in state.sweeps.status
    frame = state.sweeps.frame
    assert set(frame["method"]) == {"fsa", "abess", "random"}
    assert frame["value"].min() >= 1


def test_knowledge_does_not_carry_to_another_dataset(state):
    state.known.pin(3)
    state.dataset = "digits-3v8"
    assert not state.known and state.known == UserKnowledge()
