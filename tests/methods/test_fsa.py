"""FSA: the schedule, gradients by finite differences, exactly k, recovery, sparse = dense."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from explorer import FSA
from explorer.data import DataError, load, make
from explorer.engines.fsa.annealing import Annealing, AnnealingRun
from explorer.engines.fsa.schedules import fsa_schedule, schedule_cost
from explorer.experiments import check_compatible
from explorer.features import PiecewiseLinearBasis
from explorer.kernels import _reference as ref
from explorer.metrics import auc, pairwise_accuracy, recovery, rmse
from explorer.optim.datafits import Datafit, PairwiseDatafit
from explorer.optim.losses import HuberHinge, Logistic, Lorenz, Squared
from explorer.texts import explain
from tests.conftest import as_layout


# ----------------------------------------------------------------------------- schedule (3)
@pytest.mark.parametrize("mu", [0, 1, 10, 100, 300, 1000])
def test_schedule_properties(mu):
    M, k, N = 1000, 10, 500
    sched = fsa_schedule(M, k, N, mu)
    assert sched.shape == (N,)
    assert np.all(np.diff(sched) <= 0)
    assert np.all(sched[N // 2 - 1:] == k)  # M_e = k from e = N_iter/2 on
    e = 1
    assert sched[0] == int(np.ceil(k + (M - k) * (N - 2 * e) / (2 * e * mu + N) - 1e-9))


def test_schedule_cost_matches_table_1():
    table = {0: 125, 1: 97, 10: 41, 100: 10, 300: 5, 1000: 2}
    for mu, paper in table.items():
        a, b = schedule_cost(1000, 10, 500, mu)
        # the gradient of iteration e touches the variables kept after e−1 (all M at e = 1)
        touched = a + (1 - fsa_schedule(1000, 10, 500, mu)[0] / 1000)
        assert abs(touched - paper) <= 1.5, (mu, touched, paper)
        assert b <= 500


# ----------------------------------------------------------------------------- gradients
def _fd(fun, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (fun(x + e) - fun(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("datafit", [
    Datafit(Logistic(), np.array([1, -1, 1, 1, -1.0])),
    Datafit(HuberHinge(0.3), np.array([1, -1, 1, 1, -1.0])),
    Datafit(Lorenz(), np.array([1, -1, 1, 1, -1.0])),
    Datafit(Squared(), np.array([0.3, -1.2, 2.0, 0.0, 1.1]), scale=2.0),
    PairwiseDatafit(np.array([2, 0, 1, 1, 0.0]), np.array([0, 0, 0, 1, 1])),
])
def test_datafit_gradients_by_finite_differences(datafit):
    f = np.array([0.31, -0.52, 1.73, 0.12, -2.05])
    np.testing.assert_allclose(datafit.gradient(f), _fd(datafit.value, f), atol=1e-7)


@pytest.mark.filterwarnings("ignore:FSA's schedule ended before the loss settled")
def test_a_rejected_first_step_is_rescaled_not_recomputed(monkeypatch):
    """From β = 0 every trial step is a multiple of the gradient on the same columns, so the
    retry after the majoriser rejects the paper's η (the logistic loss is at its most curved
    there) rescales the rejected trial's outputs: the compiled steps read X once less than
    the numpy path, for the same records and model."""
    import explorer.engines.fsa.annealing as annealing_module

    ds = make("fsa-correlated", n_samples=200, n_features=120, k_star=5, seed=1)
    compiled = FSA(k=5, n_iter=3).fit(ds.X, ds.y)
    monkeypatch.setattr(annealing_module, "COMPILED_CELLS", 0)
    numpy_path = FSA(k=5, n_iter=3).fit(ds.X, ds.y)
    assert compiled.n_rejected_ == numpy_path.n_rejected_ == 1  # the first step's trial
    assert compiled.n_passes_ == pytest.approx(numpy_path.n_passes_ - 1.0)
    for a, b in zip(compiled.history_, numpy_path.history_, strict=True):
        np.testing.assert_array_equal(a.selected, b.selected)
        assert a.info["eta"] == b.info["eta"]
        assert a.objective == pytest.approx(b.objective, rel=1e-12)
    np.testing.assert_allclose(compiled.coef_, numpy_path.coef_, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_fsa_gradient_in_beta_by_finite_differences(layout, loss):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6)) * [1, 2, 3, 0.5, 1, 4] + [0, 1, -2, 0, 3, 0]
    X[rng.random(X.shape) < 0.3] = 0
    y = np.sign(rng.normal(size=30)) if loss == "logistic" else rng.normal(size=30)
    est = FSA(k=3, loss=loss)
    config = Annealing(k=3, n_iter=est.n_iter, mu=est.mu, ridge=est.ridge)
    run = AnnealingRun(config, as_layout(X, layout), est._datafit(y, None), eta=0.1)
    run.design.start(run.alive)
    run.beta = rng.normal(size=6)
    run.b = 0.3

    def loss_of(beta):
        run.beta = beta
        return run.datafit.value(run._outputs())

    beta0 = run.beta.copy()
    analytic = run._gradient(run.datafit.gradient(run._outputs()))
    np.testing.assert_allclose(analytic, _fd(loss_of, beta0), atol=1e-6)


def test_piecewise_linear_kernels_match_the_explicit_design():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    basis = PiecewiseLinearBasis(6).fit(X)
    bins, frac = basis.encode(X)
    U = ref.pl_design(bins, frac, basis.n_basis)
    beta = rng.normal(size=(5, basis.n_basis))
    np.testing.assert_allclose(basis.forward(bins, frac, beta), U @ beta.ravel(), atol=1e-6)
    r = rng.normal(size=40)
    np.testing.assert_allclose(basis.gradient(bins, frac, r).ravel(), U.T @ r, atol=1e-6)
    # responses interpolate the coefficients at the knots and clip outside the range
    knots = basis.knots(2)
    np.testing.assert_allclose(basis.response(2, beta[2], knots), beta[2], atol=1e-12)
    assert basis.response(2, beta[2], np.array([knots[0] - 5]))[0] == pytest.approx(beta[2, 0])


# ----------------------------------------------------------------------------- behaviour
@pytest.fixture(scope="module")
def correlated():
    return make("fsa-correlated", n_samples=600, n_features=300, k_star=8, seed=1)


@pytest.mark.parametrize("loss", ["logistic", "huber_svm", "lorenz"])
def test_recovers_the_relevant_variables(correlated, loss):
    est = FSA(k=8, loss=loss).fit(correlated.X, correlated.y)
    assert est.n_selected_ == 8  # exactly k
    assert recovery(est.selected_features_, correlated.truth)["all_found"]
    assert auc(correlated.y_test, est.decision_function(correlated.X_test)) > 0.98


def test_records_follow_the_schedule(correlated):
    est = FSA(k=8, n_iter=100, mu=10).fit(correlated.X, correlated.y)
    sched = fsa_schedule(300, 8, 100, 10)
    assert [r.n_selected for r in est.history_] == sched.tolist()
    assert est.n_iter_ == 100
    for prev, rec in zip(est.history_, est.history_[1:]):
        killed = set(rec.info["killed"].tolist())
        assert killed == set(prev.selected.tolist()) - set(rec.selected.tolist())
        assert rec.info["values"].shape == rec.selected.shape
    # the working matrix physically shrinks
    widths = [r.info["work_columns"] for r in est.history_]
    assert widths[-1] < 0.2 * widths[0]
    assert "keeps M_e" in explain("fsa", est.history_[5])


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_equals_dense(correlated, layout, dtype):
    X = np.where(np.abs(correlated.X) > 0.8, correlated.X, 0.0)
    dense = FSA(k=8).fit(X, correlated.y)
    other = FSA(k=8).fit(as_layout(X, layout, dtype), correlated.y)
    np.testing.assert_array_equal(dense.get_support(), other.get_support())
    tol = 1e-3 if dtype == np.float32 else 1e-8
    np.testing.assert_allclose(other.coef_, dense.coef_, rtol=tol, atol=tol)
    assert other.intercept_ == pytest.approx(dense.intercept_, rel=tol, abs=tol)


def test_regression_is_a_regressor():
    ds = make("fsa-regression", n_samples=800, n_features=300, k_star=10, seed=0)
    est = FSA(k=10, loss="squared").fit(ds.X, ds.y)
    assert recovery(est.selected_features_, ds.truth)["all_found"]
    pred = est.predict(ds.X_test)
    assert pred.dtype == np.float64 and rmse(ds.y_test, pred) < 1.1
    assert est.score(ds.X_test, ds.y_test) > 0.9  # R²
    assert est.__sklearn_tags__().estimator_type == "regressor"
    assert est.eta_ < 1.0  # the paper's η = 1 was capped for the squared loss


def test_ranking_with_queries():
    ds = make("fsa-ranking", n_queries=60, n_features=100, seed=0)
    est = FSA(k=5, loss="ranking").fit(ds.X, ds.y, query=ds.query)
    assert recovery(est.selected_features_, ds.truth)["all_found"]
    # pairwise accuracy inside each test query, as the app and `explorer run` report it
    per_query = est.score(ds.X_test, ds.y_test, query=ds.query_test)
    assert per_query == pairwise_accuracy(ds.y_test, est.predict(ds.X_test), ds.query_test)
    assert per_query > 0.85
    # without query ids every pair of rows counts, across queries too
    assert est.score(ds.X_test, ds.y_test) != per_query
    with pytest.raises(ValueError, match="one score and one query id per row"):
        est.score(ds.X_test, ds.y_test, query=ds.query_test[:-1])
    with pytest.raises(ValueError, match="sample weights"):
        est.score(ds.X_test, ds.y_test, sample_weight=np.ones(ds.y_test.size))
    with pytest.raises(ValueError, match="query applies to a ranking"):
        FSA(k=5).fit(ds.X, (ds.y > 0).astype(int)).score(ds.X, ds.y > 0, query=ds.query)
    with pytest.raises(ValueError, match="only used by loss='ranking'"):
        FSA(k=5).fit(ds.X, (ds.y > 0).astype(int), query=ds.query)


def test_piecewise_linear_finds_what_linear_cannot():
    ds = make("fsa-nonlinear", n_samples=1000, n_features=100, k_star=4, seed=2)
    linear = FSA(k=4).fit(ds.X, ds.y)
    pl = FSA(k=4, basis="piecewise_linear").fit(ds.X, ds.y)
    assert recovery(pl.selected_features_, ds.truth)["all_found"]
    assert recovery(linear.selected_features_, ds.truth)["found"] <= 1
    assert auc(ds.y_test, pl.decision_function(ds.X_test)) > 0.95
    # the learned response of a relevant variable is U-shaped (|x|)
    j = ds.truth[0]
    curve = pl.response(j, np.array([-2.0, 0.0, 2.0]))
    assert curve[0] > curve[1] < curve[2]
    assert pl.coef_.shape == (100,) and pl.get_support().sum() == 4


def test_warm_start_begins_from_the_previous_beta(correlated):
    est = FSA(k=8, warm_start=True).fit(correlated.X, correlated.y)
    est.set_params(k=6).fit(correlated.X, correlated.y)
    cold = FSA(k=6).fit(correlated.X, correlated.y)
    assert est.history_[0].objective < cold.history_[0].objective
    assert est.n_selected_ == 6


def test_user_eta_that_diverges_is_halved():
    ds = make("fsa-regression", n_samples=300, n_features=100, k_star=5, seed=0)
    est = FSA(k=5, loss="squared", eta=50.0).fit(ds.X, ds.y)
    assert est.eta_ < 50.0 and np.all(np.isfinite(est.coef_))


def test_stop_leaves_a_usable_model(correlated):
    est = FSA(k=8).fit(correlated.X, correlated.y, callback=lambda r: r.iteration < 30)
    assert est.stopped_early_ and est.n_iter_ == 31
    assert est.n_selected_ == est.history_[-1].n_selected > 8
    assert est.score(correlated.X_test, correlated.y_test) > 0.8


def test_three_classes_one_vs_rest_with_k_shared(tmp_path):
    ds = make("wine").split(test_size=0.3, seed=0)
    est = FSA(k=3).fit(ds.X, ds.y)
    assert est.n_selected_ == 3 and est.coef_.shape == (3, 13)
    assert est.score(ds.X_test, ds.y_test) > 0.8
    path = tmp_path / "three_classes.csv"
    rows = ["a,b,label"] + [f"{i},{i % 5},{i % 3}" for i in range(30)]
    path.write_text("\n".join(rows))
    check_compatible("fsa", load(path))  # no refusal


def test_k_larger_than_features():
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ValueError, match="k=5 is larger"):
        FSA(k=5).fit(X, np.sign(X[:, 0]))


def test_sparse_input_is_never_densified(correlated):
    X = sp.csr_matrix(np.where(np.abs(correlated.X) > 1.5, correlated.X, 0.0))
    est = FSA(k=8).fit(X, correlated.y)
    assert sp.issparse(est.transform(X))


# ----------------------------------------------------------------------------- compiled steps
@pytest.mark.filterwarnings("ignore:FSA's schedule ended before the loss settled")
@pytest.mark.parametrize("loss", ["logistic", "huber_svm", "lorenz", "squared"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_steps_follow_the_numpy_steps(loss, order, dtype, monkeypatch):
    """The numba kernel is the same iteration as the numpy path: records (loss, kept set,
    killed set, β) and the final model agree, for every compiled loss and memory layout."""
    import explorer.engines.fsa.annealing as annealing_module

    if loss == "squared":
        ds = make("fsa-regression", n_samples=200, n_features=120, k_star=5, seed=1)
    else:
        ds = make("fsa-correlated", n_samples=200, n_features=120, k_star=5, seed=1)
    X = np.asarray(ds.X, dtype=dtype, order=order)
    params = dict(k=5, loss=loss, n_iter=60)
    compiled = FSA(**params).fit(X, ds.y)
    monkeypatch.setattr(annealing_module, "COMPILED_CELLS", 0)
    numpy_path = FSA(**params).fit(X, ds.y)
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    assert len(compiled.history_) == len(numpy_path.history_) == 60
    for a, b in zip(compiled.history_, numpy_path.history_):
        np.testing.assert_array_equal(a.selected, b.selected)
        np.testing.assert_array_equal(np.sort(a.info["killed"]), np.sort(b.info["killed"]))
        assert a.objective == pytest.approx(b.objective, rel=rtol)
        np.testing.assert_allclose(a.info["values"], b.info["values"], rtol=rtol,
                                   atol=rtol * np.abs(b.info["values"]).max())
    np.testing.assert_allclose(compiled.coef_, numpy_path.coef_, rtol=rtol,
                               atol=rtol * np.abs(numpy_path.coef_).max())
    assert compiled.intercept_ == pytest.approx(numpy_path.intercept_, rel=rtol, abs=rtol)


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_sparse_compiled_steps_follow_the_numpy_steps(layout, monkeypatch):
    """A sparse working set runs the compiled steps on its CSC copy (a CSR X from its first
    compaction): the same records and model as the numpy path, its products counted in
    stored values of the alive columns only (never more than the numpy path's), and no
    dense copy of the data."""
    import explorer.engines.fsa.annealing as annealing_module
    from explorer.engines.fsa._compiled import CSC
    from explorer.engines.fsa.designs import LinearDesign

    data = make("text-like", n_samples=300, n_features=800, positive_rate=0.2, seed=5)
    X = as_layout(data.X.toarray(), layout, np.float64)
    layouts = []
    original = LinearDesign.compiled_form

    def spy(self, alive):
        form = original(self, alive)
        layouts.append(form[0].layout)
        assert form[0].X.size == 1  # the placeholder: no dense copy
        return form

    monkeypatch.setattr(LinearDesign, "compiled_form", spy)
    params = dict(k=6, n_iter=80)
    compiled = FSA(**params).fit(X, data.y)
    assert layouts and set(layouts) == {CSC}
    monkeypatch.setattr(annealing_module.AnnealingRun, "_compiled", lambda self: False)
    numpy_path = FSA(**params).fit(X, data.y)
    assert len(compiled.history_) == len(numpy_path.history_) == 80
    for a, b in zip(compiled.history_, numpy_path.history_):
        np.testing.assert_array_equal(a.selected, b.selected)
        assert a.objective == pytest.approx(b.objective, rel=1e-10)
        np.testing.assert_allclose(a.info["values"], b.info["values"], rtol=1e-9,
                                   atol=1e-9 * np.abs(b.info["values"]).max())
    np.testing.assert_allclose(compiled.coef_, numpy_path.coef_, rtol=1e-9, atol=1e-12)
    assert compiled.intercept_ == pytest.approx(numpy_path.intercept_, rel=1e-9, abs=1e-12)
    assert compiled.eta_ == numpy_path.eta_
    assert 0.5 * numpy_path.n_passes_ < compiled.n_passes_ <= numpy_path.n_passes_


def test_a_stop_inside_a_compiled_chunk_leaves_the_model_of_the_last_record():
    ds = make("fsa-correlated", n_samples=200, n_features=120, k_star=5, seed=1)
    full = FSA(k=5, n_iter=60)
    stopped = FSA(k=5, n_iter=60).fit(ds.X, ds.y, callback=lambda r: r.iteration < 7)
    assert stopped.n_iter_ == 8 and stopped.stopped_early_
    last = stopped.history_[-1]
    assert set(np.flatnonzero(stopped.support_)) == set(last.selected.tolist())
    np.testing.assert_allclose(stopped.coef_[last.selected], last.info["weights"])
    # the same first 8 steps as an unstopped fit
    full.fit(ds.X, ds.y)
    np.testing.assert_array_equal(full.history_[7].selected, last.selected)


def _record_rows(records):
    return [(r.iteration, r.objective, r.n_selected, r.selected.tolist(), r.inner_steps,
             {key: value.tolist() if isinstance(value, np.ndarray) else value
              for key, value in r.info.items()}) for r in records]


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_records_built_on_first_read_are_the_streamed_ones(loss):
    """Without a callback a compiled chunk's records are built when ``history_`` is first
    read (or the model pickled): the same records, numbers and clock readings' order as a
    fit that streams them (the one-vs-rest members' sharing: test_contract)."""
    import pickle

    ds = make("fsa-regression" if loss == "squared" else "fsa-correlated", n_samples=200,
              n_features=120, k_star=5, seed=1)
    params = dict(k=5, n_iter=60, loss=loss)
    seen = []
    streamed = FSA(**params).fit(ds.X, ds.y, callback=seen.append)
    quiet = FSA(**params).fit(ds.X, ds.y)
    assert quiet.n_iter_ == streamed.n_iter_ == 60
    copy = pickle.loads(pickle.dumps(quiet))  # before anything read the records
    for est in (quiet, copy):
        assert _record_rows(est.history_) == _record_rows(streamed.history_)
        assert [r.elapsed for r in est.history_] == sorted(r.elapsed for r in est.history_)
        assert len(est.history_) == est.n_iter_
    assert seen == streamed.history_
    np.testing.assert_array_equal(quiet.coef_, streamed.coef_)
    with pytest.raises(AttributeError, match="history_"):
        assert FSA().history_ is None  # never reached: an unfitted model has none


def test_stop_flag_seen_before_any_step_marks_the_fit_stopped():
    """The app's Stop sets ``stop_flag``, which the compiled steps poll; when they see it before
    the first step of a chunk no record is emitted to carry the callback's answer, and the fit
    said 'done' with stopped_early_ False."""

    class Callback:
        stop_flag = np.ones(1, dtype=np.int8)

        def __call__(self, record):
            return True

    ds = make("fsa-correlated")
    est = FSA(k=10, n_iter=2000).fit(ds.X, ds.y, callback=Callback())
    assert est.stopped_early_
    assert est.n_iter_ < 2000


def test_a_dense_fit_checks_finiteness_in_its_moments_pass(monkeypatch):
    """A standardised dense fit reads X once less: its column moments are the finiteness
    check (validation's own sum is skipped), and bad entries still raise located errors."""
    import explorer.data._validation as validation

    calls = []
    total = validation._total
    monkeypatch.setattr(validation, "_total", lambda values: calls.append(1) or total(values))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 12))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, 0)

    est = FSA(k=3, n_iter=60).fit(X, y)
    assert calls == []  # no separate pass: the moments checked it
    est.predict(X)
    assert calls == [1]  # prediction still validates its X
    FSA(k=3, n_iter=60, standardize=False).fit(X, y)
    assert calls == [1, 1]  # no moments to read it: validation does

    for row, col, bad in ((4, 7, np.nan), (0, 0, np.inf), (79, 11, -np.inf)):
        Xb = X.copy()
        Xb[row, col] = bad
        with pytest.raises(DataError, match=f"row {row + 1}, column {col + 1}"):
            FSA(k=3, n_iter=60).fit(Xb, y)
    Xb = X.copy()
    Xb[[2, 9], 5] = [np.inf, -np.inf]  # the column's sum is NaN, not inf
    with pytest.raises(DataError, match="row 3, column 6"):
        FSA(k=3, n_iter=60).fit(Xb, y)
    for huge in (1e307, 1e160):  # finite, but the sums (or the squares) overflow float64
        Xb = X.copy()
        Xb[:, 4] = huge * (1.0 + rng.random(80))
        with pytest.raises(DataError, match="column 5 cannot be standardised"):
            FSA(k=3, n_iter=60).fit(Xb, y)
    # the same model as when validation checks X itself (sparse input has no moments pass)
    dense = FSA(k=3, n_iter=60).fit(X, y)
    sparse = FSA(k=3, n_iter=60).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.selected_features_, sparse.selected_features_)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- the step rule
def _settled_losses(est):
    """The objectives of the records once the schedule has reached k (nothing is killed)."""
    losses = np.array([r.objective for r in est.history_])
    sizes = np.array([r.n_selected for r in est.history_])
    return np.append(losses[sizes == int(est.k)][1:], est.objective_)


@pytest.fixture(scope="module")
def text():
    """Text-like counts binarised (as a user's tf-idf > 0): standardised sparse columns whose
    scales differ by orders of magnitude, on which the paper's η = 20 oscillated."""
    data = make("text-like", n_samples=600, n_features=2000, positive_rate=0.1, seed=3)
    X = data.X.copy().tocsr()
    X.data[:] = 1.0
    return X, data.y


@pytest.mark.parametrize("k", [5, 10, 20])
def test_sparse_text_no_oscillation_no_single_class(text, k):
    X, y = text
    est = FSA(k=k).fit(X, y)
    assert est.converged_ and est.n_selected_ == k
    tail = _settled_losses(est)
    assert np.all(np.diff(tail) <= 1e-10 * tail[0])  # monotone once k is reached
    losses = [r.objective for r in est.history_]
    assert max(losses) <= losses[0] * (1 + 1e-12)  # no step above the start (η = 20 jumped)
    assert np.unique(est.predict(X)).size == 2
    assert auc(y, est.decision_function(X)) > 0.75


@pytest.mark.parametrize("k", [5, 20])
def test_sparse_text_csr_equals_csc_equals_dense(text, k):
    """One matrix, three storages (the dense one runs the compiled steps): one model."""
    X, y = text
    fits = [FSA(k=k).fit(data, y) for data in (X, X.tocsc(), X.toarray())]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.get_support(), fits[0].get_support())
        np.testing.assert_allclose(other.coef_, fits[0].coef_, rtol=1e-8, atol=1e-8)
        assert other.intercept_ == pytest.approx(fits[0].intercept_, rel=1e-8, abs=1e-8)
        assert other.eta_ == fits[0].eta_


def test_the_papers_eta_on_its_own_design_does_not_oscillate():
    """fsa-correlated 400 × 200, k = 10, 100 iterations (the lesson's design): the paper's
    η = 20 made the loss jump 0.693 → 5.78 at step 2 and swing 0.36–3.3 to the end."""
    data = load("fsa-correlated", n_samples=400, n_features=200, k_star=10)
    est = FSA(k=10, n_iter=100).fit(data.X, data.y)
    losses = [r.objective for r in est.history_]
    assert max(losses) <= losses[0] * (1 + 1e-12)
    tail = _settled_losses(est)
    assert np.all(np.diff(tail) <= 1e-10 * tail[0]) and est.converged_
    assert min(r.info["eta"] for r in est.history_) < 20.0  # the rule did cut the step


def test_the_lessons_default_converges_and_finds_its_features():
    import inspect

    from explorer.ui.teaching import FSATeachingPage

    defaults = {name: p.default for name, p in
                inspect.signature(FSATeachingPage.__init__).parameters.items()
                if name in ("k", "mu", "n_iter")}
    found = []
    for seed in range(10):  # which of two correlated neighbours is kept varies with the seed
        data = load("fsa-correlated", n_samples=400, n_features=200, k_star=defaults["k"],
                    seed=seed)
        est = FSA(**defaults).fit(data.X, data.y)
        assert est.converged_
        found.append(recovery(est.selected_features_, data.truth)["found"])
    assert np.mean(found) >= 9.0 and max(found) == defaults["k"]


def test_a_schedule_too_short_to_converge_warns():
    data = load("fsa-correlated", n_samples=400, n_features=200, k_star=10)
    with pytest.warns(Warning, match="raise n_iter"):
        est = FSA(k=10, n_iter=6, eta=0.01).fit(data.X, data.y)
    assert not est.converged_ and np.isfinite(est.objective_)


def test_pd_speechs_rounding_residue_columns_are_never_selected():
    """35 of pd-speech's columns are wavelet means of 1e-21 to 1e-17 (zeros in double
    precision); standardised, FGM, FS-multi and FSA picked them with weights of 1e20. None is
    selected now, and no weight is astronomical."""
    from explorer import FGM, FSMulti
    from explorer.features import negligible

    data = load("pd-speech")
    X = np.asarray(data.X)
    residue = set(np.flatnonzero(negligible(X.std(axis=0))).tolist())
    assert len(residue) == 35
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est in (FSA(k=10), FSA(k=20), FGM(k=10), FSMulti(k=10, B=5)):
            est.fit(data.X, data.y)
            assert not residue & set(est.selected_features_.tolist()), type(est).__name__
            assert np.abs(est.coef_).max() < 1e10
