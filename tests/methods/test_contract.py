"""The estimator contract, exercised on a baseline: records, callback, stop, params, registry."""

from __future__ import annotations

import time

import numpy as np
import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator

from explorer.data import DataError
from explorer.methods import L1SVM, REGISTRY, IterationRecord, RFESelector
from explorer.methods.base import Recorder


def test_records_are_complete_and_frozen(digits38):
    est = RFESelector(k=4, step=0.3).fit(digits38.X, digits38.y)
    records = est.history_
    assert [r.iteration for r in records] == list(range(len(records)))
    for r in records:
        assert isinstance(r, IterationRecord)
        assert r.n_selected == r.selected.size
        assert not r.selected.flags.writeable
        with pytest.raises(AttributeError):
            r.objective = 0.0  # frozen
    elapsed = [r.elapsed for r in records]
    assert elapsed == sorted(elapsed)


def test_callback_sees_every_record(digits38):
    seen = []
    est = L1SVM(k=10).fit(digits38.X, digits38.y, callback=seen.append)  # C bisected
    assert seen == est.history_ and len(seen) >= 2


def test_callback_stop_leaves_a_usable_model(digits38):
    def stop_after_two(record):
        return record.iteration < 1

    est = RFESelector(k=2, step=1).fit(digits38.X, digits38.y, callback=stop_after_two)
    assert est.stopped_early_ and est.n_iter_ == 2
    # the model is consistent with the last recorded selection and predicts well
    np.testing.assert_array_equal(est.selected_features_, est.history_[-1].selected)
    assert est.score(digits38.X_test, digits38.y_test) > 0.9
    assert est.transform(digits38.X_test).shape[1] == est.history_[-1].n_selected


def test_callback_time_is_not_counted(digits38):
    def slow(record):
        time.sleep(0.15)

    est = L1SVM(k=5).fit(digits38.X, digits38.y, callback=slow)
    assert len(est.history_) >= 2
    assert est.fit_time_ < 0.15 * len(est.history_) / 2
    assert est.history_[-1].elapsed < 0.15


def test_parameters_are_validated_against_specs(digits38):
    with pytest.raises(ValueError, match="C=-1.0 is below its minimum"):
        L1SVM(C=-1.0).fit(digits38.X, digits38.y)
    with pytest.raises(ValueError, match="k must be an integer"):
        RFESelector(k=2.5).fit(digits38.X, digits38.y)


def test_bad_inputs_raise_data_errors(digits38):
    X = digits38.X.copy()
    X[3, 7] = np.nan
    with pytest.raises(DataError, match="row 4, column 8"):
        L1SVM().fit(X, digits38.y)
    with pytest.raises(DataError, match="single class"):
        L1SVM().fit(digits38.X, np.ones(len(digits38.y)))
    with pytest.raises(DataError, match="rows"):
        L1SVM().fit(digits38.X, digits38.y[:-1])
    est = L1SVM().fit(digits38.X, digits38.y)
    with pytest.raises(DataError, match="expecting 64 features"):
        est.predict(digits38.X[:, :10])
    with pytest.raises(TypeError, match="unexpected keyword"):
        L1SVM().fit(digits38.X, digits38.y, sample_weight=np.ones(len(digits38.y)))


def test_any_two_labels_work(digits38):
    y_text = np.where(digits38.y == 3, "three", "eight")
    est = L1SVM(C=0.05).fit(digits38.X, y_text)
    assert list(est.classes_) == ["eight", "three"]
    assert set(est.predict(digits38.X_test)) <= {"three", "eight"}


def test_child_recorders_share_numbering_and_stop():
    root = Recorder(lambda r: r.iteration < 2)
    a, b = root.child(**{"class": 0}), root.child(**{"class": 1})
    assert a.emit(objective=1, n_selected=0, selected=[])
    assert b.emit(objective=1, n_selected=0, selected=[])
    assert not a.emit(objective=1, n_selected=0, selected=[])
    assert root.stopped and b.should_stop
    assert [r.info["class"] for r in root.history] == [0, 1, 0]


def test_a_batch_of_records_is_written_as_one_emit_each():
    def batch(recorder):
        infos = [{"step": k} for k in range(5)]
        return recorder.emit_many(objective=[5.0, 4, 3, 2, 1],
                                  selected=[np.arange(k + 1) for k in range(5)], info=infos,
                                  inner_steps=1)

    def one_by_one(recorder):
        for k in range(5):
            if not recorder.emit(objective=5.0 - k, n_selected=k + 1, selected=np.arange(k + 1),
                                 inner_steps=1, info={"step": k}):
                return k
        return None

    for stop_at in (None, 0, 2, 4):  # the record whose callback answers False
        histories, answers, seen = [], [], []
        for write in (batch, one_by_one):
            root = Recorder(lambda r, seen=seen, stop_at=stop_at:
                            seen.append(r) or r.iteration != stop_at)
            answers.append(write(root.child(**{"class": 1})))
            histories.append([(r.iteration, r.objective, r.n_selected, list(r.selected),
                               r.inner_steps, dict(r.info)) for r in root.history])
        assert answers == [stop_at, stop_at]
        assert len(histories[0]) == (5 if stop_at is None else stop_at + 1)
        assert len(seen) == 2 * len(histories[0])  # one callback per record
        assert histories[0] == histories[1]
        assert histories[0][0][5] == {"class": 1, "step": 0}


def test_deferred_records_are_built_on_first_read_as_they_would_have_been():
    built = []

    def batch(first):
        def build():
            built.append(first)
            return ([10.0 + first, 11.0 + first], [np.arange(1), np.arange(2)],
                    [{"step": first}, {"step": first + 1}])
        return build

    def write(recorder, deferred):
        member = recorder.child(**{"class": 1})
        member.emit(objective=1.0, n_selected=0, selected=[])
        if deferred:
            assert member.emit_deferred(2, batch(1), inner_steps=1) is None
        else:
            objective, selected, info = batch(1)()
            member.emit_many(objective=objective, selected=selected, info=info, inner_steps=1)
        member.emit(objective=2.0, n_selected=0, selected=[])
        return member

    def rows(records):
        return [(r.iteration, r.objective, r.n_selected, list(r.selected), r.inner_steps,
                 dict(r.info)) for r in records]

    root = Recorder()
    member = write(root, deferred=True)
    assert built == [] and root._count == 4  # numbered, not built
    eager = Recorder()
    write(eager, deferred=False)
    built.clear()
    assert rows(root.history) == rows(eager.history)
    assert [r.iteration for r in root.history] == [0, 1, 2, 3]
    assert root.history[1].info == {"class": 1, "step": 1}
    assert member.history == root.history and member.history[1] is root.history[1]
    assert built == [1]  # once, for the root's and the member's histories

    # a callback to call, or a stop requested, gets them at once
    seen = []
    streaming = Recorder(seen.append)
    streaming.emit_deferred(2, batch(5))
    assert built == [1, 5] and [r.objective for r in seen] == [15.0, 16.0]
    stopped = Recorder()
    stopped.stop()
    assert stopped.emit_deferred(2, batch(7)) == 0 and len(stopped.history) == 1


def test_a_record_owns_its_selection():
    # a caller's writable array (or a view of one), reused across records, is copied once per
    # record; a read-only owner is shared as it is
    recorder = Recorder()
    work = np.array([1, 2, 3])
    shared = np.array([4, 5], dtype=np.int64)
    shared.setflags(write=False)
    recorder.emit_many(objective=[1.0, 2.0, 3.0, 4.0, 5.0],
                       selected=[work, work, work[:2], shared, [6, 7]], info=[{}] * 5)
    work[:] = 0
    first, second, view, owner, listed = recorder.history
    assert list(first.selected) == list(second.selected) == [1, 2, 3]
    assert list(view.selected) == [1, 2] and owner.selected is shared
    assert list(listed.selected) == [6, 7] and listed.selected.dtype == np.int64
    assert not any(r.selected.flags.writeable for r in recorder.history)


def test_every_registered_method_declares_its_knobs():
    import inspect

    for name, cls in REGISTRY.items():
        specs = {s.name: s for s in cls.param_specs}
        assert cls.sparsity_param in specs, name
        init = inspect.signature(cls.__init__).parameters
        for spec_name, spec in specs.items():
            assert spec_name in init, (name, spec_name)
            assert init[spec_name].default == spec.default, (name, spec_name)


def _sklearn_checks():
    """scikit-learn's estimator checks for every registered method, without the array-API ones (that
    optional namespace support is not part of the contract)."""
    small = {"rfe": {"k": 2}, "fisher": {"k": 2}, "lasso": {"k": 2}, "fgm": {"B": 2},
             "abess": {"k": 2}, "abess-reg": {"k": 2},
             "fsa": {"k": 2, "n_iter": 200}, "fs-multi": {"B": 2}, "fs-manifold": {"m": 2},
             "grfl": {"max_features": 3}}
    estimators = [cls(**small.get(name, {})) for name, cls in sorted(REGISTRY.items())]
    for estimator in estimators:
        for est, check in estimator_checks_generator(estimator, legacy=True, mark="skip"):
            name = getattr(check, "func", check).__name__
            if "array_api" not in name:
                yield pytest.param(est, check, id=f"{type(estimator).__name__}-{name}")


@pytest.mark.parametrize(("estimator", "check"), list(_sklearn_checks()))
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


WARM = [("fgm", {"B": 3}), ("fs-multi", {"B": 3}), ("fsa", {"k": 5, "n_iter": 200}),
        ("grfl", {"max_features": 4, "n_candidates": 20})]


@pytest.mark.parametrize(("name", "params"), WARM, ids=[w[0] for w in WARM])
def test_warm_start_is_one_type_and_records_say_when_it_applies(name, params):
    from explorer.optim import WarmStart

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 12))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = REGISTRY[name](warm_start=True, **params).fit(X, y)
    assert isinstance(est._warm, WarmStart)
    assert not any(r.info.get("warm_start") for r in est.history_)  # the first fit is cold
    est.fit(X, y)
    assert all(r.info.get("warm_start") for r in est.history_)
    # the previous state does not fit new data with other columns: a cold fit, and it says so
    est.fit(X[:, :10], y)
    assert not any(r.info.get("warm_start") for r in est.history_)
    assert est.n_features_in_ == 10 and est.support_.size == 10


@pytest.mark.parametrize(("name", "params"), WARM, ids=[w[0] for w in WARM])
def test_a_model_is_handed_over_through_continue_from(name, params):
    """Another estimator of the same settings continues from a fitted one (the app's hand
    over between two objects): its fit says warm_start and ends no worse than a cold fit."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 12))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    cls = REGISTRY[name]
    first = cls(warm_start=True, **params).fit(X, y)
    second = cls(warm_start=True, **params).continue_from(first).fit(X, y)
    assert all(r.info.get("warm_start") for r in second.history_)
    cold = cls(**params).fit(X, y)
    assert not any(r.info.get("warm_start") for r in cold.history_)
    # a continuation, not a copy: never worse than a cold fit of the same settings
    assert second.history_[-1].objective <= 1.02 * cold.history_[-1].objective
    with pytest.raises(TypeError, match="cannot continue from"):
        cls(**params).continue_from(REGISTRY["fisher"]().fit(X, y))


@pytest.mark.parametrize("name", ["fgm", "grfl", "fs-multi"])
def test_pickling_mid_fit_leaves_the_running_fit_untouched(name):
    """A copy of the estimator taken between iterations (a teaching page's snapshot, a
    model sent to another process) predicts, and the fit goes on with its solver state:
    pickling once removed the live master from the estimator itself."""
    import pickle

    from explorer.data import load
    from explorer.methods import get_method

    data = load("xor" if name == "grfl" else "digits-3v8").split(test_size=0.3, seed=0)
    est = get_method(name)(max_features=6) if name == "grfl" else get_method(name)()
    copies = []

    def snapshot(record):
        copies.append(pickle.loads(pickle.dumps(est)))
        return record.iteration < 3

    est.fit(data.X, data.y, callback=snapshot)
    assert len(copies) >= 3 and all(c.predict(data.X_test).shape == data.y_test.shape
                                    for c in copies)
    reference = get_method(name)(max_features=6) if name == "grfl" else get_method(name)()
    reference.fit(data.X, data.y, callback=lambda r: r.iteration < 3)
    np.testing.assert_array_equal(est.coef_, reference.coef_)


RECORD_FITS = {"fgm": [{}, {"k": 5, "refine": "auto"}, {"B": 2, "k": 3,
                                                        "groups": np.repeat(np.arange(16), 4)}],
               "fs-multi": [{"B": 3}, {"B": 3, "k": 5}], "fsa": [{"k": 5, "n_iter": 200}],
               "fs-manifold": [{"m": 5}], "grfl": [{"max_features": 4, "n_candidates": 20}],
               "l1-svm": [{"k": 3}], "l1-logreg": [{"k": 3}], "lasso": [{"k": 3}]}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_record_key_is_declared_on_its_method(name, digits38):
    """The views and the lessons read a record's ``info`` by name: every key a method writes
    is declared on its class (``record_keys``) or by the shared machinery
    (``COMMON_RECORD_KEYS``), on binary, regression and multi-class fits."""
    import warnings

    from explorer.data import make

    cls = REGISTRY[name]
    declared = cls.record_keys | cls.COMMON_RECORD_KEYS
    regression = cls()._task == "regression"
    data = [make("fsa-regression")] if regression else [digits38]
    if not regression and cls.multiclass != "binary":
        data.append(make("wine"))
    written = set()
    for params in RECORD_FITS.get(name, [{}]):
        for ds in data:
            if "groups" in params and ds.n_features != 64:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = cls(**params).fit(ds.X, ds.y)
            written |= {key for r in est.history_ for key in r.info}
    assert written, "no record says anything"
    assert written <= declared, f"{name} writes undeclared keys {sorted(written - declared)}"
