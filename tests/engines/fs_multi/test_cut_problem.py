"""FS-multi's bundle master on its own: the cut problem against an independent conic program
(primal and, for wide cut models, its dual), the cut matrix's Gram kept through cuts, prunes and
blocks, and a saved hard case from raw pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import explorer.engines.fs_multi.bundle as bundle_module
import explorer.engines.fs_multi.cut_problem as cut_module
from explorer.engines.fs_multi.cut_problem import CutModel, solve_cut_problem
from tests.reference_solvers import cut_problem_reference


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("zeros", [0.0, 0.4])
def test_cut_problem_matches_the_primal_conic_program(seed, fit_intercept, zeros):
    # zeros: the cut coefficients of sparse columns, many exactly 0
    rng = np.random.default_rng(seed)
    W, K = 9, 7
    P = rng.normal(size=(W, K))
    P[rng.random((W, K)) < zeros] = 0.0
    q = rng.uniform(0, 1, K)
    beta = rng.normal(size=K) * 0.3
    bounds = [(0, 2), (2, 6), (6, 9)]
    ours = solve_cut_problem(CutModel(P, q, beta, bounds, 3.0, 2.0 if fit_intercept else 0.0))
    w, b, value = cut_problem_reference(P, q, beta, bounds, 3.0, 2.0, fit_intercept)
    assert ours.value == pytest.approx(value, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(ours.coef, w, atol=1e-4)
    assert ours.intercept == pytest.approx(b, abs=1e-4)


def test_cut_problem_blocks_must_partition_the_columns_in_order():
    P, beta = np.ones((4, 2)), np.zeros(2)
    for bounds in ([(0, 2), (3, 4)], [(2, 4), (0, 2)], [(0, 3)]):
        with pytest.raises(ValueError, match="partition"):
            cut_module._primal_constraints(P, beta, bounds)


def test_cut_matrix_keeps_its_gram_through_cuts_prunes_and_blocks():
    # the bundle's cut storage against the matrix rebuilt from its columns
    rng = np.random.default_rng(5)
    cuts = bundle_module.CutMatrix()
    columns = []  # each cut's coefficients over every row so far
    for _ in range(3):  # cuts before any block: zero rows
        cuts.append(np.zeros(0))
        columns.append(np.zeros(0))
    for step in range(40):
        if step % 9 == 0:  # a new block: rows for every existing cut
            rows = rng.normal(size=(int(rng.integers(1, 5)), cuts.count))
            cuts.add_rows(rows)
            columns = [np.concatenate([c, rows[:, k]]) for k, c in enumerate(columns)]
        p = rng.normal(size=cuts.width)
        cuts.append(p)
        columns.append(p)
        if step % 7 == 6:  # drop idle cuts
            keep = np.sort(rng.choice(cuts.count, cuts.count // 2, replace=False))
            cuts.keep(keep)
            columns = [columns[k] for k in keep]
        P = np.column_stack(columns)
        np.testing.assert_array_equal(cuts.matrix, P)
        np.testing.assert_allclose(cuts.gram, P.T @ P, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rank", [None, 6])
@pytest.mark.parametrize("split", [700, None])
def test_wide_cut_problem_by_its_dual_matches_the_primal_conic_program(rank, split):
    """Blocks wider than PRIMAL_MAX_WIDTH go through the dual, whose cones see each block's
    columns reduced to K rows (a Cholesky factor of the Gram); cuts whose p_k span only
    ``rank`` directions make that Gram singular. One block (split None: an all-features
    model) is a QP without cones. Either way the value is the dual objective at α, a lower
    bound on the model's minimum."""
    from explorer.engines.fs_multi.cut_problem import PRIMAL_MAX_WIDTH

    rng = np.random.default_rng(7)
    W, K = PRIMAL_MAX_WIDTH + 200, 12
    P = rng.normal(size=(W, K)) / np.sqrt(W)
    if rank is not None:
        P = rng.normal(size=(W, rank)) @ rng.normal(size=(rank, K)) / np.sqrt(W * rank)
    q = rng.uniform(0, 1, K)
    beta = rng.normal(size=K) * 0.3
    bounds = [(0, split), (split, W)] if split else [(0, W)]
    ours = solve_cut_problem(CutModel(P, q, beta, bounds, 3.0, 2.0))
    w, b, value = cut_problem_reference(P, q, beta, bounds, 3.0, 2.0, True)
    assert value - 1e-6 * abs(value) <= ours.value <= value + 1e-8  # a lower bound, and tight
    assert ours.value == pytest.approx(
        cut_module.dual_value(CutModel(P, q, beta, bounds, 3.0, 2.0), ours.alpha), rel=1e-12)
    np.testing.assert_allclose(ours.coef, w, atol=1e-4 * max(1.0, np.linalg.norm(w)))


@pytest.mark.parametrize("faer", [True, False])
def test_one_block_dual_is_solved_with_or_without_faer(monkeypatch, faer):
    # Clarabel builds before 0.10 have no faer: the dense QP then uses the default solver
    from explorer.engines.fs_multi.cut_problem import PRIMAL_MAX_WIDTH

    monkeypatch.setattr(cut_module, "_has_faer", lambda: faer)
    assert (cut_module._settings(dense=True).direct_solve_method == "faer") is faer
    rng = np.random.default_rng(11)
    W, K = PRIMAL_MAX_WIDTH + 50, 9
    P = rng.normal(size=(W, K)) / np.sqrt(W)
    q, beta = rng.uniform(0, 1, K), rng.normal(size=K) * 0.3
    ours = solve_cut_problem(CutModel(P, q, beta, [(0, W)], 3.0, 2.0))
    w, b, value = cut_problem_reference(P, q, beta, [(0, W)], 3.0, 2.0, True)
    assert value - 1e-6 * abs(value) <= ours.value <= value + 1e-8


def test_cut_problem_on_unscaled_pixels_with_large_C_is_solved():
    """Saved from FS-multi (F1) on raw digit pixels 9-vs-rest with C = 10·n: 93 cuts whose
    p_k nearly cancel (‖Σα_k p_k‖ = 5.7 against α_k‖p_k‖ ≈ 8,500). Measuring α in units of
    C left Clarabel without progress here."""
    data = np.load(Path(__file__).parent / "data" / "cut_problem_unscaled_digits.npz")
    P, q, beta, C, R = data["P"], data["q"], data["beta"], float(data["C"]), float(data["R"])
    bounds = [tuple(b) for b in data["bounds"]]
    assert C > 8000 and P.shape == (20, 93)
    w, b, value = cut_problem_reference(P, q, beta, bounds, C, R, True)
    for hint in (None, 1e-3, 1e4):  # a wrong guess of Σα is recovered by the fallback ladder
        ours = solve_cut_problem(CutModel(P, q, beta, bounds, C, R), scale_hint=hint)
        assert ours.value == pytest.approx(value, rel=1e-6)
        np.testing.assert_allclose(ours.coef, w, atol=1e-3 * np.linalg.norm(w))


def _lp_upper_bound(P, q, beta, C, R, box):
    """An upper bound on the one-block cut problem's minimum: the point of an LP (scipy's
    HiGHS) that minimises the largest cut over |w_j| ≤ ``box``, |b| ≤ R, at its objective."""
    from scipy.optimize import linprog

    W, K = P.shape
    res = linprog(np.r_[np.zeros(W + 1), 1.0], A_ub=np.c_[P.T, beta, -np.ones(K)], b_ub=-q,
                  bounds=[(-box, box)] * W + [(-R, R), (None, None)], method="highs")
    w, b = res.x[:W], res.x[W]
    return 0.5 * w @ w + C * max(0.0, float(np.max(P.T @ w + b * beta + q)))


def test_a_cut_problem_clarabel_stalls_on_still_gives_a_bound_and_a_point():
    """Saved from FS-multi (k = 10, unscaled) on a half-sample of pd-speech's training rows,
    whose columns reach 4e10: Clarabel ends with InsufficientProgress or MaxIterations at
    every unit of α, which stopped the whole fit. The stalled iterate with the best dual value
    is used: its value is still a lower bound on the minimum and its point is feasible and
    better than w = 0, so the bundle's gap stays certified (if wide)."""
    data = np.load(Path(__file__).parent / "data" / "cut_problem_stalled_pd_speech.npz")
    P, q, beta, C, R = data["Pmat"], data["q"], data["beta"], float(data["C"]), float(data["R"])
    bounds = [tuple(int(v) for v in b) for b in data["bounds"]]
    ours = solve_cut_problem(CutModel(P, q, beta, bounds, C, R), tol=float(data["tol"]),
                             scale_hint=float(data["scale_hint"]))
    w, b = ours.coef, ours.intercept
    at_point = 0.5 * w @ w + C * max(0.0, float(np.max(P.T @ w + b * beta + q)))
    assert np.isfinite(ours.value) and np.all(np.isfinite(w))
    assert ours.value <= _lp_upper_bound(P, q, beta, C, R, box=1e-3) < at_point
    assert at_point < C * max(0.0, float(q.max()))  # the empty model's value


@pytest.mark.slow
def test_fs_multi_unscaled_on_the_half_sample_that_stalled_the_cut_problem_completes():
    from explorer import FSMulti, load
    from explorer.experiments.resampling import subsample

    data = load("pd-speech").split(test_size=0.3, seed=0)
    rows = subsample(data.y, 0.5, 0, 0, data.task)
    est = FSMulti(k=10, feature_scaling=None).fit(data.X[rows], data.y[rows])
    assert est.n_selected_ == 10
