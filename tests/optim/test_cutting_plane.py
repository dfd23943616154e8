"""The shared outer loop's stopping rules, on scripted spaces and masters."""

import numpy as np

from explorer.features import Columns
from explorer.optim import MasterSolution, cutting_plane
from explorer.optim.cutting_plane import OPTIMAL


class ScriptedSpace:
    """Scores a signal by a fixed table: signal value v gives candidate v the score 2 and the
    others 0.5 (signal 0: every score 0.5)."""

    def __init__(self, m=5):
        self.m = m

    def top(self, s, k):
        scores = np.full(self.m, 0.5)
        if s[0] > 0:
            scores[int(s[0])] = 2.0
        ids = np.argsort(-scores, kind="stable")[:k]
        return ids, scores[ids]

    def columns(self, ids):
        ids = np.asarray(ids)
        none = np.full(ids.size, -1)
        return Columns(np.zeros((1, ids.size)), ids, ids, none, np.ones(ids.size), none)


class ScriptedMaster:
    """Coarse solves point at no violator; the polish of block ``polish_finds`` at one."""

    def __init__(self, polish_finds=None):
        self.n_blocks = 0
        self.polish_finds = polish_finds
        self.polished = 0

    def _sol(self, v):
        return MasterSolution(objective=10.0 - self.n_blocks, signal=np.array([float(v)]))

    def initial(self):
        return self._sol(1)  # candidate 1 violates the empty model

    def add_block(self, cols):
        self.n_blocks += 1

    def solve(self):
        return self._sol(0)

    def polish(self):
        self.polished += 1
        return self._sol(3 if self.n_blocks == self.polish_finds else 0)

    def lower_bound(self, sol, scores):
        return None


def test_stops_when_no_candidate_scores_above_the_threshold():
    steps = []
    res = cutting_plane(ScriptedSpace(), ScriptedMaster(), B=1, max_outer=10, tol=None,
                        threshold=1.0, on_step=lambda s: steps.append(s) or True)
    assert res.stop_reason == OPTIMAL and res.n_outer == 1
    assert [list(s.block) for s in steps] == [[1]]


def test_a_stop_found_on_a_coarse_master_is_rechecked_after_its_polish():
    # the coarse master of iteration 1 shows no violator, its polished solution does (3):
    # the loop must go on and add it, not stop on the coarse master's evidence
    master = ScriptedMaster(polish_finds=1)
    steps = []
    res = cutting_plane(ScriptedSpace(), master, B=1, max_outer=10, tol=None, threshold=1.0,
                        on_step=lambda s: steps.append(s) or True)
    assert [list(s.block) for s in steps] == [[1], [3]]
    assert res.stop_reason == OPTIMAL and master.polished == 2


def test_no_objective_change_stop_when_tol_is_none():
    class Flat(ScriptedMaster):
        def _sol(self, v):
            return MasterSolution(objective=1.0, signal=np.array([float(2 + self.n_blocks)]))

    steps = []
    res = cutting_plane(ScriptedSpace(8), Flat(), B=1, max_outer=4, tol=None, threshold=1.0,
                        on_step=lambda s: steps.append(s) or True)
    assert len(steps) == 4 and res.stop_reason == "max_outer reached"
