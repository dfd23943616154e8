"""FGM refine's compiled restricted fits and surgeon: the same steps as the numpy twins, and
the optimum an independent generic solver finds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from explorer.engines.fgm import refine
from explorer.engines.fgm._newton import NarrowFit, Start, newton_l2_compiled, surgeon_loop
from explorer.optim.losses import make_loss


def _problem(seed, n=120, k=6):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, k)) * rng.uniform(0.5, 3.0, k)
    y = np.where(A[:, 0] - A[:, 1] + rng.normal(size=n) > 0, 1.0, -1.0)
    return A, y


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("start", [False, True])
def test_compiled_newton_is_the_numpy_newton_and_the_optimum(loss, fit_intercept, start):
    A, y = _problem(3)
    the_loss, C = make_loss(loss), 2.0
    w0 = np.full(A.shape[1], 0.1) if start else None
    trace = np.empty(101)
    fit = NarrowFit(A, y, the_loss.code, float(the_loss.numba_param), C, fit_intercept)
    w, b, steps = newton_l2_compiled(
        fit, Start(np.zeros(A.shape[1]) if w0 is None else w0, 0.2, start), 1e-12, 100, trace)
    problem = refine.Restricted(y, the_loss, C, fit_intercept, None)
    twin = refine._newton_l2(problem, A, tol=1e-12, max_iter=100, w0=w0, b0=0.2)
    np.testing.assert_allclose(w, twin[0], rtol=1e-9, atol=1e-10)
    assert b == pytest.approx(twin[1], rel=1e-9, abs=1e-10)
    assert steps == twin[2]
    np.testing.assert_allclose(trace[:steps + 1], twin[3], rtol=1e-12)

    def objective(v):
        wv, bv = v[:-1], (v[-1] if fit_intercept else 0.0)
        return 0.5 * wv @ wv + C * the_loss.value(y * (A @ wv + bv)).sum()

    ref = minimize(objective, np.zeros(A.shape[1] + 1), method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 10000})
    assert objective(np.append(w, b)) <= ref.fun + 1e-8 * abs(ref.fun)


def test_restricted_fit_runs_compiled_and_certifies_on_read():
    A, y = _problem(5, n=200, k=8)
    from explorer.optim import Stopping

    problem = refine.Restricted(y, make_loss("logistic"), 1.0, True,
                                Stopping(tol=1e-6, max_iter=100))
    coef, intercept, result = refine.restricted_fit(problem, A, np.arange(8))
    assert "_measure" not in result.__dict__  # not computed until read
    assert 0 <= result.measure <= 1e-6 and result.converged
    assert result.objective == pytest.approx(
        0.5 * coef @ coef + np.logaddexp(0, -y * (A @ coef + intercept)).sum(), rel=1e-10)


@pytest.mark.parametrize("pinned", [[], [2, 5]])
def test_compiled_surgeon_loop_is_the_written_out_elimination(pinned):
    rng = np.random.default_rng(1)
    m = 9
    M = rng.normal(size=(m + 1, m + 1))
    H = M @ M.T + np.eye(m + 1)
    Hinv = np.linalg.inv(H)
    w = rng.normal(size=m + 1)
    w[m] = 0.3
    keep = 3
    # the elimination written out in numpy
    Wv, Hv, alive, expect = w.copy(), Hinv.copy(), np.ones(m, bool), np.full(m, float(m))
    alive[pinned] = False  # never eliminated, among the kept
    for step in range(m - keep):
        ids = np.flatnonzero(alive)
        q = ids[np.argmin(Wv[ids] ** 2 / (2 * np.diag(Hv)[ids]))]
        column = Hv[:, q].copy()
        Wv -= Wv[q] / column[q] * column
        Hv -= np.outer(column, column) / column[q]
        alive[q], expect[q], Wv[q] = False, step, 0.0
    score = np.full(m, float(m))
    start = np.ones(m, bool)
    start[pinned] = False
    surgeon_loop(Hinv.copy(), w.copy(), m, keep, score, start)
    np.testing.assert_array_equal(score, expect)
    assert np.all(score[pinned] == m) and np.sum(score == m) == keep


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_narrow_surgeon_order_builds_the_hessian_the_numpy_path_builds(loss, fit_intercept,
                                                                       monkeypatch):
    A, y = _problem(7, n=150, k=10)
    problem = refine.Restricted(y, make_loss(loss), 3.0, fit_intercept, None)
    coef, intercept, *_ = refine.newton_l2(problem, A, tol=1e-12)
    model = refine.Fitted(np.arange(10), coef, A @ coef + intercept)
    compiled = refine.surgeon_order(problem, A, model, keep=3, pinned=np.isin(range(10), [4]))
    monkeypatch.setattr(refine, "COMPILED_COLUMNS", 0)  # the numpy Hessian and inverse
    numpy_path = refine.surgeon_order(problem, A, model, keep=3,
                                      pinned=np.isin(range(10), [4]))
    np.testing.assert_array_equal(compiled, numpy_path)
    assert compiled[4] == 10 and np.sum(compiled == 10) == 3
