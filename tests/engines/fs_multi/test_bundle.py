"""FS-multi's bundle master on its own (no outer loop, no estimator), against a reference that
shares none of its parts: the epigraph QP over every labeling of a tiny problem, solved by
SciPy's SLSQP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from explorer.engines.fs_multi import BundleMaster, StructuredRisk, allowed, delta
from explorer.features import LinearSpace
from explorer.optim import Stopping

R_BOUND = 5.0


def _problem(seed, n=8, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.8 * rng.standard_normal(n) > 0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)  # both classes
    return X, y


def _reference(X, y, measure, C, blocks):
    """min ½(Σ_t‖w_t‖)² + C·ξ s.t. ξ ≥ Δ(y, ȳ) − (1/n)(y − ȳ)ᵀ(Xw + b) for every allowed
    labeling ȳ (ȳ = y gives ξ ≥ 0), |b| ≤ R — by brute-force enumeration and SLSQP."""
    n, d = X.shape
    labelings = [np.array(lab) for lab in itertools.product((-1.0, 1.0), repeat=n)
                 if allowed(y, np.array(lab), measure)]
    rows = np.array([(y - lab) / n for lab in labelings])                 # L × n
    deltas = np.array([delta(y, lab, measure) for lab in labelings])

    def objective(z):
        w = z[:d]
        return 0.5 * sum(np.linalg.norm(w[a:b]) for a, b in blocks) ** 2 + C * z[-1]

    cons = [{"type": "ineq",
             "fun": lambda z: z[-1] - deltas + rows @ (X @ z[:d] + z[d])}]
    best = None
    for start in (np.zeros(d + 2), np.r_[np.ones(d), 0.0, 1.0]):
        start[-1] = max(deltas.max(), 0.0) + 1.0
        res = minimize(objective, start, constraints=cons, method="SLSQP",
                       bounds=[(None, None)] * d + [(-R_BOUND, R_BOUND), (0.0, None)],
                       options={"ftol": 1e-14, "maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    return best.fun


@pytest.mark.parametrize("measure", ["f1", "hamming"])
@pytest.mark.parametrize("C", [0.5, 5.0])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("grouped", [False, True])
def test_the_master_reaches_the_brute_force_optimum_within_its_certificate(measure, C, seed,
                                                                          grouped):
    X, y = _problem(seed)
    groups = [0, 0, 1] if grouped else None
    space = LinearSpace(X, groups=groups)
    master = BundleMaster(StructuredRisk(y, measure, C, intercept_bound=R_BOUND),
                          n_samples=X.shape[0], sparse_cache=False, stopping=Stopping(1e-6, 500))
    master.initial()
    ids = np.arange(2 if grouped else 3)
    columns = space.columns(ids)
    master.add_block(columns)
    solution = master.solve()
    polished = master.polish() or solution
    # one block of every column: the penalty is ½‖w‖² (a sum over one block norm, squared)
    ref = _reference(columns.matrix, y, measure, C, [(0, columns.width)])
    assert polished.objective >= ref - 1e-7 * max(1.0, ref)   # no better than the optimum
    gap = float(polished.info["inner_gaps"][-1])
    assert polished.objective - ref <= gap + 1e-7 * max(1.0, ref)  # certificate holds
    assert polished.objective <= ref * (1 + 1e-4) + 1e-9             # and is tight
    assert polished.info["inner_measure"] <= 1e-6


def test_two_blocks_use_the_squared_sum_of_block_norms():
    """With two blocks the master's penalty is ½(‖w_1‖ + ‖w_2‖)², the ℓ1² of the paper (eq. 9),
    not ½‖w‖²: the reference over the same two blocks agrees, the one-block one does not."""
    X, y = _problem(3)
    space = LinearSpace(X)
    C = 5.0
    master = BundleMaster(StructuredRisk(y, "f1", C, intercept_bound=R_BOUND),
                          n_samples=X.shape[0], sparse_cache=False, stopping=Stopping(1e-7, 500))
    master.initial()
    first, second = space.columns(np.array([0, 1])), space.columns(np.array([2]))
    master.add_block(first)
    master.add_block(second)
    master.solve()
    polished = master.polish()
    M = np.column_stack([first.matrix, second.matrix])
    two = _reference(M, y, "f1", C, [(0, 2), (2, 3)])
    one = _reference(M, y, "f1", C, [(0, 3)])
    assert abs(polished.objective - two) <= 1e-4 * max(1.0, two)
    assert one < two - 1e-3  # the two penalties really differ here


def test_the_first_cut_makes_the_empty_models_objective_and_its_dual_bound():
    X, y = _problem(0)
    C = 2.0
    master = BundleMaster(StructuredRisk(y, "hamming", C), n_samples=X.shape[0],
                          sparse_cache=False)
    first = master.initial()
    # at w = 0, b = 0: R_emp = max_ȳ Δ(y, ȳ), the loss of flipping every label
    assert first.objective == pytest.approx(C * delta(y, -y, "hamming"))
    lower = master.lower_bound(first, np.zeros(1))
    assert lower <= first.objective
