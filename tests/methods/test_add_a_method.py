"""docs/architecture.md's "How to add a method", followed as written with a toy method: an
engine (a function of the numerics alone) and a wiring class (knobs, records, the model) are
all it takes for the estimator contract, the experiments and the app to use it."""

from __future__ import annotations

import numpy as np
import pytest

from explorer._params import ParamSpec
from explorer.methods import REGISTRY, BaseSelector, get_method, register


# ---- the engine: numerics only, one function
def correlation_screen(X, y, k: int, ridge: float):
    """The k columns of largest |Xᵀy| (one pass of the shared scorer), then ridge regression
    on them; yields (step, kept, weights, intercept, objective) as the kept set shrinks."""
    from explorer.kernels import xts

    scores = np.abs(xts(X, y - y.mean()))
    order = np.argsort(-scores, kind="stable")
    for step, size in enumerate(sorted({X.shape[1], 2 * k, k}, reverse=True)):
        kept = np.sort(order[:size])
        A = np.asarray(X[:, kept], dtype=float)
        mean = A.mean(axis=0)
        w = np.linalg.solve((A - mean).T @ (A - mean) + ridge * np.eye(size),
                            (A - mean).T @ (y - y.mean()))
        b = float(y.mean() - mean @ w)
        residual = y - (A @ w + b)
        yield step, kept, w, b, 0.5 * float(residual @ residual) + 0.5 * ridge * float(w @ w)


# ---- the wiring: knobs, records, the model
class CorrelationScreen(BaseSelector):
    """Screen k features by |Xᵀy|, then ridge regression on them (a toy).

    Parameters
    ----------
    k : int
        Features kept.
    ridge : float
        The ridge penalty.
    always_include, exclude, penalty_factor, positive
        What the user knows (exclude only).
    """

    display_name = "correlation screen"
    sparsity_param = "k"
    multiclass = "binary"
    record_keys = frozenset({"screened"})
    param_specs = (ParamSpec("k", "k", 5, "int", 1, 10**6, bound="n_features"),
                   ParamSpec("ridge", "ridge", 1.0, "float", 0.0, 1e6))

    def __init__(self, k: int = 5, ridge: float = 1.0, *, always_include=None, exclude=None,
                 penalty_factor=None, positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.k = k
        self.ridge = ridge

    @property
    def _task(self) -> str:
        return "regression"

    def _check_params(self) -> None:
        if int(self.k) < 1:
            raise ValueError("k must be at least 1")

    def _fit(self, X, y, recorder, **_):
        for _step, kept, w, b, objective in correlation_screen(X, y, int(self.k),
                                                              float(self.ridge)):
            self.coef_ = np.zeros(X.shape[1])
            self.coef_[kept] = w
            self.intercept_ = b
            self.support_ = self.coef_ != 0
            if not recorder.emit(objective=objective, n_selected=kept.size, selected=kept,
                                 inner_steps=1, info={"screened": kept.size}):
                break
        self.stop_reason_ = "screened to k"


@pytest.fixture
def toy():
    cls = register("toy-screen")(CorrelationScreen)
    try:
        yield cls
    finally:
        REGISTRY.pop("toy-screen", None)


def test_a_method_is_an_engine_and_a_wiring_class(toy):
    from explorer.data import load
    from explorer.experiments import sweep
    from explorer.ui import ExplorerState

    assert get_method("toy-screen") is toy
    data = load("fsa-regression").split(test_size=0.3, seed=0)
    est = toy(k=4).fit(data.X, data.y)
    assert est.n_selected_ == 4 and len(est.history_) == 3
    assert {key for r in est.history_ for key in r.info} <= toy.record_keys
    assert est.score(data.X_test, data.y_test) > 0.05  # better than the mean (30 true of 1,000)
    assert est.transform(data.X_test).shape[1] == 4
    # the experiments sweep its knob
    frame = sweep("toy-screen", "fsa-regression", ks=[2, 4])
    assert list(frame["value"]) == [2, 4] and frame["n_selected"].tolist() == [2, 4]
    # the app lists it, builds its knobs and fits it
    state = ExplorerState(dataset="fsa-regression", live=False)
    try:
        state.method = "toy-screen"
        assert state.fit()
        state.wait(60)
        assert state.estimator.n_selected_ == 5 and "Selected: 5 features" in \
            state.feedback.status
    finally:
        state.close()
    # what the user knows reaches it through the shared exclude
    excluded = toy(k=4, exclude=est.selected_features_[:1]).fit(data.X, data.y)
    assert not excluded.support_[est.selected_features_[0]]
