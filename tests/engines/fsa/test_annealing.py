"""FSA's annealing loop (optim/annealing.py) against a plain transcription of Algorithm 1, for
dense and sparse X in float32 and float64, and its divergence guard."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from explorer.engines.fsa.annealing import Annealing, RunHooks, anneal, first_pass
from explorer.engines.fsa.schedules import fsa_schedule
from explorer.methods.base import Recorder
from explorer.optim.datafits import Datafit
from explorer.optim.losses import make_loss
from tests.conftest import as_layout


def algorithm_1(X, y, loss, config: Annealing, eta_max):
    """Barbu et al., Algorithm 1, written out on the standardised dense matrix: β ← 0; a
    gradient step on (1/N)Σℓ, the ridge prior's proximal step, keep the M_e largest |β_j|;
    the step η (at most ``eta_max``) accepted when the new model is under the data term's
    quadratic majoriser, else halved until at most 1/bound — bound the loss's curvature
    bound times the outputs' squared change over the step's — and doubled after steps
    accepted at their first η: one, or twice as many after each doubling rejected at once
    (at most 64), back to one after a doubling that holds."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    mean, std = X.mean(0), X.std(0)
    Z = (X - mean) / np.where(std > 0, std, 1.0)
    the_loss = make_loss(loss)
    datafit = Datafit(the_loss, y)
    schedule = fsa_schedule(X.shape[1], config.k, config.n_iter, config.mu)
    alive, beta, b = np.arange(X.shape[1]), np.zeros(X.shape[1]), 0.0
    eta, streak, wait, grown = eta_max, 0, 1, False
    losses, etas = [], []
    for M_e in schedule:
        f = Z[:, alive] @ beta + b
        value = datafit.value(f)
        losses.append(value + config.ridge * beta @ beta)
        r = datafit.gradient(f)
        g, gb = Z[:, alive].T @ r, r.sum()
        cut = False
        while True:
            new = (beta - eta * g) / (1.0 + 2.0 * eta * config.ridge)
            if alive.size > M_e:
                new[np.argsort(-np.abs(new), kind="stable")[M_e:]] = 0.0
            new_b = b - eta * gb
            d, db = new - beta, new_b - b
            f_new = Z[:, alive] @ new + new_b
            value_new = datafit.value(f_new)
            norm2 = d @ d + db * db
            if value_new <= value + g @ d + gb * db + norm2 / (2 * eta) + 1e-12 * value:
                break
            if grown:  # a doubling rejected at once: wait twice as long for the next
                wait, grown = min(2 * wait, 64), False
            bound = the_loss.curvature / len(y) * np.sum((f_new - f) ** 2) / norm2
            eta /= 2
            while eta > 1 / bound:
                eta /= 2
            cut, streak = True, 0
        etas.append(eta)
        if cut:
            streak, grown = 0, False
        else:
            if grown:
                wait, grown = 1, False
            streak += 1
            if streak >= wait and eta < eta_max:
                eta, streak, grown = min(eta_max, 2 * eta), 0, True
        keep = np.flatnonzero(new) if alive.size > M_e else np.arange(alive.size)
        alive, beta, b = alive[keep], new[keep], new_b
    return alive, beta, b, np.array(losses), np.array(etas)


def _problem(seed=0, n=80, m=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * rng.uniform(0.5, 3.0, m) + rng.uniform(-1, 1, m)
    X[rng.random((n, m)) < 0.3] = 0.0  # zeros, so CSR/CSC are genuinely sparse
    y = np.where(X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.3 * rng.normal(size=n) > 0, 1.0,
                 -1.0)
    return X, y


@pytest.mark.parametrize("layout", ["dense", "dense+first pass", "csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("loss", ["logistic", "huber_svm"])
@pytest.mark.parametrize("eta", [1.0, 20.0])
def test_run_equals_algorithm_1(layout, dtype, loss, eta):
    """Also when the first step's Xᵀr comes from the pass that took X's moments (FSA's
    dense fits): the same run as reading X for it. η = 20 (the paper's for the logistic
    loss) is cut by the step rule on this design; η = 1 mostly is not."""
    X, y = _problem()
    config = Annealing(k=4, n_iter=40, mu=10.0, ridge=1e-3)
    recorder = Recorder()
    datafit = Datafit(make_loss(loss), y)
    data = as_layout(X, layout.split("+")[0], dtype)
    moments, first = first_pass(data, datafit) if "first pass" in layout else (None, None)
    run, eta_used, outcome = anneal(data, datafit, config, eta, RunHooks(recorder.emit_many),
                                    moments=moments, first_product=first)
    records = recorder.history
    alive, beta, b, losses, etas = algorithm_1(X.astype(dtype), y, loss, config, eta)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert outcome == "done" and eta_used == etas[-1]
    np.testing.assert_array_equal([r.info["eta"] for r in records], etas)
    if eta == 20.0:
        assert etas.min() < eta
    np.testing.assert_array_equal(run.alive, alive)
    np.testing.assert_allclose(run.beta, beta, rtol=tol, atol=tol)
    assert run.b == pytest.approx(b, rel=tol, abs=tol)
    # one record per iteration: the loss before its step, the survivors after it
    assert len(records) == config.n_iter
    np.testing.assert_allclose([r.objective for r in records], losses, rtol=tol)
    schedule = fsa_schedule(X.shape[1], config.k, config.n_iter, config.mu)
    assert [r.n_selected for r in records] == list(np.minimum(schedule, X.shape[1]))
    assert [r.iteration for r in records] == list(range(config.n_iter))


@pytest.mark.parametrize("first", [False, True])
def test_a_step_far_too_large_is_cut_within_the_run(first):
    """η = 10⁴ on the squared loss (λ_max(ZᵀZ/N) ≈ 1.5): halved inside the first step until
    it is under the majoriser; no restart, and the loss never rises once nothing is killed."""
    X, y = _problem(1)
    resets = []
    config = Annealing(k=3, n_iter=20, mu=10.0, ridge=0.0)
    datafit = Datafit(make_loss("squared"), y * 5.0, scale=2.0)
    moments, product = first_pass(X, datafit) if first else (None, None)
    recorder = Recorder()
    hooks = RunHooks(recorder.emit_many, reset=lambda: resets.append(1))
    run, eta, outcome = anneal(X, datafit, config, 1e4, hooks, moments=moments,
                               first_product=product)
    assert outcome == "done" and not resets
    assert eta < 2.0 and np.all(np.isfinite(run.beta)) and run.alive.size == 3
    losses = np.array([r.objective for r in recorder.history])
    settled = [r.n_selected == 3 for r in recorder.history]
    tail = losses[settled.index(True) + 1:]
    assert np.all(np.diff(tail) <= 1e-12 * tail[0])


def test_the_first_pass_is_the_moments_and_the_first_gradient():
    X, y = _problem(3)
    datafit = Datafit(make_loss("logistic"), y)
    X[:, 5] = 2.0  # a constant column keeps a unit scale
    (mean, scale), product = first_pass(X, datafit)
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(scale, np.where(X.std(axis=0) > 1e-12, X.std(axis=0), 1.0),
                               rtol=1e-10)
    np.testing.assert_allclose(product, X.T @ datafit.gradient(np.zeros(len(y))), rtol=1e-12,
                               atol=1e-14)


def test_emit_returning_false_stops_with_the_model_of_the_last_record():
    X, y = _problem(2)
    config = Annealing(k=3, n_iter=60, mu=10.0, ridge=1e-3)
    seen = []
    recorder = Recorder(lambda record: seen.append(record) or len(seen) < 7)
    run, _, outcome = anneal(X, Datafit(make_loss("logistic"), y), config, 1.0,
                             RunHooks(recorder.emit_many))
    assert outcome == "stopped" and len(seen) == 7 and recorder.history == seen
    np.testing.assert_array_equal(run.alive, seen[-1].selected)
