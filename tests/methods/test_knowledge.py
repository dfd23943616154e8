"""What the user knows, in every method: always_include, exclude, penalty_factor, positive."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.svm import LinearSVC

from explorer.kernels import take_columns
from explorer.methods import REGISTRY, get_method

rng = np.random.default_rng(3)
N, P = 120, 14
X = rng.normal(size=(N, P))
X[:, 5] *= 30.0  # units differ
Y_BIN = np.where(X[:, 0] - X[:, 1] + 0.5 * X[:, 2] / 1 + 0.3 * rng.normal(size=N) > 0, 1, 0)
Y_MULTI = np.digitize(X[:, 0] + X[:, 3], [-0.7, 0.7])
Y_REG = 2 * X[:, 0] - X[:, 1] + X[:, 7] + 0.2 * rng.normal(size=N)

PINNED = [9, 11]  # features with no signal: only knowledge puts them in
BANNED = [0, 1]   # the strongest features: only knowledge keeps them out
SMALL = {"fgm": {"C": 0.1, "B": 3}, "fs-multi": {"B": 1, "C": 10.0}, "fs-manifold": {"m": 4},
         "grfl": {"max_features": 5}, "l1-svm": {"C": 0.1}, "l1-logreg": {"C": 0.3}}


def target(name):
    est = get_method(name)()
    if est._task == "regression":
        return Y_REG
    return Y_BIN


def make(name, **params):
    cls = get_method(name)
    params = {**SMALL.get(name, {}), **params}
    if cls.sparsity_param == "m" and "k" in params:  # FS-Manifold counts its model by m
        params["m"] = params.pop("k")
    if "k" in cls().get_params() and "k" not in params and name not in ("fgm", "fs-multi", "grfl"):
        params["k"] = 4
    return cls(**params)


def fit(est, X_, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X_, y)


def multiclass(name) -> bool:
    cls = get_method(name)
    return cls.multiclass != "binary" and cls()._task == "classification"


def honours(option):
    return sorted(n for n, c in REGISTRY.items() if option in c.knowledge)


def refuses(option):
    return sorted(n for n, c in REGISTRY.items() if option not in c.knowledge)


@pytest.mark.parametrize("name, kind", [(n, kind) for n in honours("exclude")
                                        for kind in ("dense", "csr", "multiclass")
                                        if kind != "multiclass" or multiclass(n)])
def test_excluded_features_are_never_selected_and_the_model_is_the_fit_without_them(name,
                                                                                   kind):
    y = Y_MULTI if kind == "multiclass" else target(name)
    Xk = sp.csr_matrix(X) if kind == "csr" else X
    seen = []
    est = make(name, exclude=BANNED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xk, y, callback=lambda r: seen.append(r.selected))
    assert not est.support_[BANNED].any()
    assert np.all(np.atleast_2d(est.coef_)[:, BANNED] == 0)
    assert est.coef_.shape[-1] == P and est.n_features_in_ == P
    # the records speak of X's own columns
    assert all(not np.isin(BANNED, s).any() and (s.size == 0 or s.max() < P) for s in seen)
    assert [r.selected.tolist() for r in est.history_] == [s.tolist() for s in seen]
    # the same model as the method fitted on the other columns (an independent path)
    keep = np.setdiff1d(np.arange(P), BANNED)
    # (in the same memory layout: FS-multi's model moves by 2 % between a C- and an
    # F-ordered copy of the same matrix at its default inner tolerance)
    sub = take_columns(Xk, keep)
    alone = fit(make(name), sub, y)
    np.testing.assert_array_equal(np.flatnonzero(est.support_), keep[alone.support_])
    np.testing.assert_allclose(est._raw_scores(Xk), alone._raw_scores(sub), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("name, kind", [(n, kind) for n in honours("always_include")
                                        for kind in ("dense", "csr", "multiclass")
                                        if kind != "multiclass" or multiclass(n)])
def test_always_included_features_are_in_every_selection_and_k_counts_them(name, kind):
    y = Y_MULTI if kind == "multiclass" else target(name)
    Xk = sp.csr_matrix(X) if kind == "csr" else X
    est = fit(make(name, k=4, always_include=PINNED), Xk, y)
    assert est.support_[PINNED].all()
    assert est.n_selected_ == 4  # the 2 pinned and 2 the method chose
    plain = fit(make(name, k=4), Xk, y)
    assert not plain.support_[PINNED].all()  # the test asks for something


def _options(name):
    """Every combination of the other options the method honours, beside a pin."""
    extra = [{}]
    cls = get_method(name)
    if "positive" in cls.knowledge:
        extra.append({"positive": True})
    if "exclude" in cls.knowledge:
        extra.append({"exclude": [2]})
    if "penalty_factor" in cls.knowledge:
        extra.append({"penalty_factor": {3: 2.0}})
    if len(extra) > 2:
        merged = {}
        for options in extra[1:]:
            merged.update(options)
        extra.append(merged)
    return extra


@pytest.mark.parametrize("name, options", [(n, o) for n in honours("always_include")
                                           for o in _options(n)])
def test_a_pinned_feature_is_in_the_model_at_whatever_weight(name, options):
    # a constant column can only have weight 0: pinned, it is still in the model, counted
    # by k, in support_, in selected_features_ and in transform's columns
    Xc = X.copy()
    Xc[:, 12] = 0.0
    est = fit(make(name, k=4, always_include=[12], **options), Xc, target(name))
    assert est.support_[12] and 12 in est.selected_features_
    assert np.all(np.atleast_2d(est.coef_)[:, 12] == 0)
    assert est.transform(Xc).shape[1] == est.n_selected_
    if "k" in est.get_params():
        assert est.n_selected_ == 4


@pytest.mark.parametrize("name", honours("always_include"))
def test_factor_zero_is_always_include_and_infinity_is_exclude(name):
    y = target(name)
    factor = np.ones(P)
    factor[PINNED] = 0.0
    factor[BANNED] = np.inf
    by_factor = fit(make(name, k=4, penalty_factor=factor), X, y) \
        if "penalty_factor" in get_method(name).knowledge else None
    by_name = fit(make(name, k=4, always_include=PINNED, exclude=BANNED), X, y)
    assert by_name.support_[PINNED].all() and not by_name.support_[BANNED].any()
    if by_factor is not None:
        np.testing.assert_array_equal(by_factor.support_, by_name.support_)
        np.testing.assert_allclose(by_factor.coef_, by_name.coef_)


@pytest.mark.parametrize("name", honours("penalty_factor"))
def test_a_large_factor_keeps_a_strong_feature_out_and_a_small_one_lets_a_weak_in(name):
    y = target(name)
    plain = fit(make(name), X, y)
    strong = int(np.argmax(np.abs(plain.feature_weights())))
    factor = np.ones(P)
    factor[strong] = 1e4
    assert not fit(make(name, penalty_factor=factor), X, y).support_[strong]
    weak = 11
    factor = np.ones(P)
    factor[weak] = 1e-4
    assert not plain.support_[weak]
    assert fit(make(name, penalty_factor=factor), X, y).support_[weak]


def test_lasso_penalty_factors_meet_the_weighted_kkt_conditions():
    """An independent check of the weighted problem (1/2N)‖y − Xw − b‖² + α Σ f_j |w_j|:
    on the support Xⱼᵀr/N = α f_j sign(w_j), off it |Xⱼᵀr/N| ≤ α f_j."""
    factor = np.linspace(0.3, 3.0, P)
    alpha = 0.05
    est = fit(get_method("lasso")(alpha=alpha, penalty_factor=factor), X, Y_REG)
    r = Y_REG - X @ est.coef_ - est.intercept_
    grad = X.T @ r / N
    on = est.coef_ != 0
    assert on.sum() >= 2 and (~on).sum() >= 2
    np.testing.assert_allclose(grad[on], alpha * factor[on] * np.sign(est.coef_[on]),
                               rtol=2e-3, atol=1e-4)
    assert np.all(np.abs(grad[~on]) <= alpha * factor[~on] * (1 + 1e-3))


def test_l1_svm_penalty_factors_equal_liblinear_on_rescaled_columns():
    factor = np.linspace(0.5, 2.0, P)
    est = fit(get_method("l1-svm")(C=0.1, penalty_factor=factor), X, Y_BIN)
    ref = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=0.1, max_iter=2000,
                    tol=1e-4, random_state=0, intercept_scaling=est.intercept_scaling_).fit(
        X / factor, np.where(Y_BIN == 1, 1, -1))
    np.testing.assert_allclose(est.coef_, ref.coef_.ravel() / factor, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", honours("positive"))
def test_positive_gives_no_negative_weight(name):
    y = target(name)
    plain = fit(make(name), X, y)
    assert (np.ravel(plain.coef_) < 0).any()  # without it, some weight is negative
    est = fit(make(name, positive=True), X, y)
    assert np.all(np.ravel(est.coef_) >= 0) and est.support_.any()


def test_fsa_positive_steps_are_the_projected_problem():
    """FSA with positive=True and k = p (no kill) minimises the same objective over β ≥ 0:
    scipy's bounded L-BFGS on the standardised logistic loss with the ridge reaches no lower
    value."""
    from scipy.optimize import minimize

    y = np.where(Y_BIN == 1, 1.0, -1.0)
    est = fit(get_method("fsa")(k=P, positive=True, n_iter=3000), X, Y_BIN)
    mean, sd = X.mean(0), X.std(0)
    Z = (X - mean) / sd

    def objective(v):
        beta, b = v[:-1], v[-1]
        z = y * (Z @ beta + b)
        return np.logaddexp(0, -z).mean() + 1e-3 * beta @ beta

    ref = minimize(objective, np.zeros(P + 1), method="L-BFGS-B",
                   bounds=[(0, None)] * P + [(None, None)], options={"ftol": 1e-14})
    beta = est.coef_ * sd
    mine = objective(np.r_[beta, est.intercept_ + mean @ est.coef_])
    assert mine <= ref.fun + 1e-5


@pytest.mark.parametrize("name", refuses("always_include"))
def test_a_method_refuses_what_it_cannot_honour_and_names_who_can(name):
    with pytest.raises(ValueError, match=r"cannot honour always_include.*Methods with "
                                         r"always_include: .*fsa"):
        fit(make(name, always_include=[3]), X, target(name))


def test_features_by_name_and_by_mask():
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(P)])
    mask = np.zeros(P, bool)
    mask[BANNED] = True
    est = fit(get_method("fisher")(k=4, always_include=["g9", "g11"], exclude=mask), frame,
              Y_BIN)
    assert est.support_[PINNED].all() and not est.support_[BANNED].any()
    assert {"g9", "g11"} <= set(est.get_feature_names_out())


@pytest.mark.parametrize("params, message", [
    ({"always_include": ["g1"]}, "X has no column names"),
    ({"always_include": [P]}, "out of range"),
    ({"exclude": np.ones(3, bool)}, "one entry per feature"),
    ({"penalty_factor": -np.ones(P)}, "non-negative"),
    ({"penalty_factor": np.full(P, np.nan)}, "non-negative"),
    ({"penalty_factor": np.ones(3)}, "one factor per feature"),
    ({"always_include": [2], "exclude": [2]}, "both always included and excluded"),
    ({"k": 1, "always_include": [2, 3]}, "smaller than the 2 always-included"),
    ({"exclude": np.ones(P, bool)}, "every feature is excluded"),
])
def test_bad_knowledge_raises_a_clear_error(params, message):
    with pytest.raises(ValueError, match=message):
        fit(get_method("fisher")(**{"k": 4, **params}), X, Y_BIN)


def test_knowledge_survives_clone_and_leaves_nothing_behind():
    est = get_method("fsa")(k=4, always_include=PINNED, exclude=BANNED)
    twin = clone(est)
    assert twin.get_params()["always_include"] == PINNED
    fit(est, X, Y_BIN)
    assert hasattr(est, "submodel_")
    est.set_params(always_include=None, exclude=None)
    fit(est, X, Y_BIN)  # the next fit without knowledge is the plain fit
    assert not hasattr(est, "submodel_") and "_knowledge" not in est.__dict__
    np.testing.assert_array_equal(est.support_, fit(get_method("fsa")(k=4), X, Y_BIN).support_)


def test_grfl_excludes_inputs_from_its_learned_features_but_not_pixels_of_an_image():
    """GrFL's Fourier directions mix inputs: an excluded input has weight 0 in every learned
    direction (its importance is 0) and the model is the one fitted without it; Gabor
    features need the whole image, so exclude is refused with them."""
    est = fit(make("grfl", exclude=BANNED), X, Y_BIN)
    assert est.input_importance_.shape == (P,) and np.all(est.input_importance_[BANNED] == 0)
    inner = est.submodel_
    assert est.transform(X).shape[1] == inner.family_.group_size * len(
        inner.generated_params_) > 0  # a cosine and a sine per learned direction
    directions = np.array([p.v for p in inner.generated_params_])
    assert directions.shape[1] == P - len(BANNED)  # learned over the other inputs
    pixels = np.random.default_rng(0).normal(size=(60, 16))
    with pytest.raises(ValueError, match="Gabor features need the whole grid"):
        get_method("grfl")(family="gabor", exclude=[0], max_features=3).fit(
            pixels, np.arange(60) % 2, image_shape=(4, 4))
