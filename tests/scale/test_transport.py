"""What travels to and from dask workers: fitted models without their training data, and
arrays that arrive misaligned (as distributed unpickles them) fitted at full speed."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from explorer import FGM, FSA, FSMulti
from explorer.data import as_matrix


@pytest.mark.parametrize("make", [lambda: FGM(B=3), lambda: FGM(B=3, feature_map="poly2"),
                                  lambda: FGM(B=3, feature_map="binned"),
                                  lambda: FSMulti(B=3, C=10.0), lambda: FSA(k=3)],
                         ids=["fgm", "fgm-poly2", "fgm-binned", "fs-multi", "fsa"])
def test_a_pickled_model_holds_no_training_matrix(make):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 500))
    y = np.where(X[:, 0] - X[:, 1] > 0, 1, 0)
    model = make().fit(X, y)
    blob = pickle.dumps(model)
    assert len(blob) < X.nbytes / 4  # 1.6 MB of X; the model is the weights and records
    again = pickle.loads(blob)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_allclose(again.decision_function(X), model.decision_function(X))


def test_misaligned_arrays_are_copied_and_fit_the_same_model():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 80))
    y = np.where(X[:, 3] > 0, 1, 0)
    raw = bytearray(X.nbytes + 4)
    misaligned = np.frombuffer(raw, dtype=np.float64, count=X.size, offset=4).reshape(X.shape)
    misaligned[...] = X
    assert not misaligned.flags.aligned
    checked = as_matrix(misaligned)
    assert checked.flags.aligned and np.array_equal(checked, X)
    a, b = FGM(B=4).fit(X, y), FGM(B=4).fit(misaligned, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
