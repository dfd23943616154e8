"""The teaching texts say what the records say."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer import FGM
from explorer.data import make
from explorer.methods.base import IterationRecord
from explorer.texts import explain


def _fgm_record(names, new):  # ``new`` as the fit records it: an index array
    return IterationRecord(iteration=3, inner_steps=12, objective=4.5, n_selected=8,
                           selected=np.arange(8), elapsed=0.0,
                           info={"block_names": names, "B": len(names), "n_blocks": 4,
                                 "new_features": np.array(new, dtype=int), "active_blocks": 4})


@pytest.mark.parametrize(("new", "says"), [
    ([], "all of them were already in the model through earlier blocks, so no feature enters "
         "(the new block re-weights them)"),
    ([5, 6], "2 of them are new to the model"),
    ([5, 6, 7, 8], "all of them are new to the model"),
])
def test_fgm_says_how_many_of_the_block_are_new(new, says):
    text = explain("fgm", _fgm_record(["x1", "x2", "x3", "x4"], new))
    assert f"(x1, x2, x3, x4); {says}." in text


@pytest.mark.parametrize(("added", "says"), [
    ([], "Refinement: the path grew to 18 features; the 18 that backward elimination keeps"),
    ([3], "fewer than asked for; one more feature was added, the one outside it whose entry"),
    ([3, 4], "fewer than asked for; 2 more features were added, the ones outside it whose"),
])
def test_fgm_refinement_says_whether_it_pruned_or_filled(added, says):
    kept = 18 + len(added)
    record = IterationRecord(iteration=5, inner_steps=6, objective=876.7, n_selected=kept,
                             selected=np.arange(kept), elapsed=0.0,
                             info={"refine": "auto", "before": np.arange(18),
                                   "pruned": np.zeros(0, dtype=int),
                                   "added": np.array(added, dtype=int)})
    text = explain("fgm", record)
    assert says in text
    if added:
        assert text.startswith("Refinement: the path converged at 18 features") and \
            f"refit on all {kept}" in text


def test_fgm_texts_follow_a_real_fit():
    ds = make("digits-3v8")
    est = FGM(B=4, C=20).fit(ds.X, ds.y)
    seen = set()
    for record in est.history_:
        new = record.info["new_features"]
        seen.add(len(new))
        text = explain("fgm", record)
        assert f"Outer iteration {record.iteration + 1}:" in text
        assert ("no feature enters" in text) == (len(new) == 0)
    assert len(seen) > 1


def test_fsa_says_what_each_iteration_killed():
    from explorer import FSA
    from explorer.data import make

    ds = make("fsa-correlated", n_samples=200, n_features=100)
    est = FSA(k=5, n_iter=60).fit(ds.X, ds.y)
    texts = {len(r.info["killed"]): explain("fsa", r) for r in est.history_}
    assert "all 5 survive (M_e = 5)" in texts[0]
    assert "1 variable with the smallest |β| was killed for good" in texts[1]
    many = max(texts)
    assert f"{many} variables with the smallest |β| were killed for good" in texts[many]


def test_fgm_text_names_the_solver_each_master_took(monkeypatch):
    """A master that APG does not certify within a Newton solve's cost goes on by proximal
    Newton; the record and its text say so, and only for those masters."""
    import sys

    cpm = sys.modules["explorer.engines.fgm.l12_master"]  # FGM's master, patched where it lives
    newton_masters = []
    real = cpm.L12Master._solve_newton

    def solve_newton(self, stopping):
        newton_masters.append(self.cache.n_blocks)
        return real(self, stopping)

    monkeypatch.setattr(cpm.L12Master, "_solve_newton", solve_newton)
    ds = make("digits-3v8")
    est = FGM(B=20).fit(ds.X, ds.y)
    by_newton = {r.info["n_blocks"] for r in est.history_
                 if r.info["solver"] == "APG, then proximal Newton"}
    assert newton_masters and by_newton == set(newton_masters)
    for record in est.history_:
        text = explain("fgm", record)
        newton = record.info["n_blocks"] in by_newton
        blocks = "block" if record.info["n_blocks"] == 1 else "blocks"
        assert (f"{blocks}; APG, then proximal Newton took {record.inner_steps} steps"
                in text) == newton
        assert (f"{blocks}; APG took {record.inner_steps} steps" in text) == (not newton)


def test_fgm_refinement_says_what_the_exchange_rounds_did():
    """After exchange rounds the text gives their number, the loss they lowered and how many
    features came from outside the path; without them it says none of that."""
    base = {"refine": "auto", "before": np.arange(18), "pruned": np.array([2, 5, 9]),
            "added": np.zeros(0, dtype=int)}
    spliced = dict(base, splice_rounds=2, loss_before=8439.04, loss_after=8294.41,
                   spliced_in=np.array([40, 41]))
    kwargs = dict(iteration=5, inner_steps=4, objective=876.7, n_selected=12,
                  selected=np.arange(12), elapsed=0.0)
    text = explain("fgm", IterationRecord(info=spliced, **kwargs))
    assert "Then 2 exchange rounds" in text and "from 8439 to 8294.4" in text
    assert "3 of the path's features are pruned and 2 from outside it entered" in text
    plain = explain("fgm", IterationRecord(info=dict(base, splice_rounds=0), **kwargs))
    assert "exchange" not in plain
    assert ", 3 pruned, and the ℓ2 model was refit on them (objective 876.7, 4 steps)." in plain


def test_counts_agree_with_their_nouns_and_features_carry_the_datasets_names():
    from explorer.texts import with_names

    ds = make("digits-3v8")
    est = FGM(B=1, max_outer=3).fit(ds.X, ds.y)
    first = explain("fgm", est.history_[0], ds.names())
    assert "has 1 block;" in first and "1 blocks" not in first
    assert re.search(r"1 block carries weight|0 blocks carry weight", first)
    assert "1 of them are" not in first
    # the block's feature is called by the dataset's name, as in the table and the map
    block = est.history_[0].info["block"]
    assert ds.names()[int(block[0])] in first
    assert not re.search(r"\bx\d+\b", first)
    assert with_names("x3·x12 and x99", ["a"] * 13) == "a·a and x99"
    assert with_names("x3", None) == "x3"


def test_the_papers_cut_to_k_is_explained_by_its_own_rule():
    from explorer import FGM
    from explorer.data import load

    data = load("digits-3v8")
    text = explain("fgm", FGM(k=5).fit(data.X, data.y).history_[-1])
    assert text.startswith("Exactly k:") and "|w_j|" in text and "½h_j" not in text
    refined = explain("fgm", FGM(k=5, refine="auto").fit(data.X, data.y).history_[-1])
    assert refined.startswith("Refinement (on the logistic loss):")


@pytest.mark.parametrize("method", ["fgm", "fs-multi"])
def test_a_cut_to_k_groups_is_told_in_groups(method):
    from explorer import FSMulti

    data = make("fgm-groups", n_samples=200, n_groups=25, group_size=4,
                n_informative_groups=3, n_test=50)
    cls = FGM if method == "fgm" else FSMulti
    est = cls(k=2).fit(data.X, data.y, groups=data.groups)
    text = explain(method, est.history_[-1])
    assert text.startswith("Exactly k groups:")
    assert "the 2 groups of largest ‖w_g‖ (8 features) were kept" in text
    singles = cls(k=3).fit(data.X, data.y)
    said = explain(method, singles.history_[-1])
    assert said.startswith("Exactly k:") and "3 features" in said


def test_a_block_of_groups_counts_its_new_features_against_the_groups_features():
    """'took the top B = 3 (…); 30 of them are new' read as 30 of 3: the features that
    enter are counted against the block's groups' features."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 30))
    y = np.sign(X[:, 0] + X[:, 12])
    fgm = FGM(B=3, groups=np.repeat(np.arange(3), 10)).fit(X, y)
    text = explain("fgm", fgm.history_[0])
    assert "top B = 3" in text and "all their 30 features are new" in text
    pinned = FGM(B=2, always_include=[7]).fit(X, y)
    text = explain("fgm", pinned.history_[0])
    assert "took the 1 always-included feature and the top B = 2 of the others" in text


def test_a_fourier_model_that_reads_every_input_says_why():
    """GrFL's Fourier features on the textures read all 256 pixels: the text says that this
    is what a Fourier direction does and what selects pixels, where a fit reading few inputs
    says nothing of it."""
    from explorer import GrFL

    data = make("textures", n_per_class=40, seed=0)
    est = GrFL(max_features=30).fit(data.X, data.y)
    last = est.history_[-1]
    assert last.n_selected >= 0.9 * data.X.shape[1]
    assert "Nearly every input counts" in explain("grfl", last)
    xor = make("xor", seed=0)
    few = GrFL(max_features=5).fit(xor.X, xor.y).history_[-1]
    assert few.n_selected < 0.9 * xor.X.shape[1]
    assert "Nearly every input counts" not in explain("grfl", few)


def test_rfe_says_what_its_rising_curve_is():
    """RFE's drawn value rises step after step (Σ w² of fewer features): the text says what
    each step dropped and that no objective is minimised."""
    from explorer.methods import RFESelector

    data = make("breast-cancer")
    est = RFESelector(k=10).fit(data.X, data.y)
    first, last = est.history_[0], est.history_[-1]
    assert "of smallest w² went, leaving 24" in explain("rfe", first)
    assert "refit on the last 10 features" in explain("rfe", last)
    assert "minimises no objective" in explain("rfe", last)


def test_an_ended_lesson_says_why_once():
    from types import SimpleNamespace

    from explorer.texts import ended

    fgm = SimpleNamespace(stop_reason_="max_outer reached")
    assert "after 3 iterations (max_outer reached)" in ended(fgm, 3)
    assert "(max_outer" not in ended(fgm, 3, "… Stopped — max_outer reached.")
    assert "(its iteration budget is spent)" in ended(SimpleNamespace(converged_=False), 1)
    assert "after 1 iteration (converged)" in ended(SimpleNamespace(converged_=True), 1)
