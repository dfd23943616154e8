"""Feature names through fit(DataFrame) → feature_names_in_ → get_feature_names_out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer import FGM, FSA
from explorer.data import DataError


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((80, 6)), columns=[f"gene_{c}" for c in "abcdef"])
    y = np.where(X["gene_c"] - X["gene_e"] > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("make", [lambda: FGM(k=2), lambda: FSA(k=2)])
def test_a_dataframe_names_the_selected_features(frame, make):
    X, y = frame
    est = make().fit(X, y)
    assert list(est.feature_names_in_) == list(X.columns)
    assert list(est.get_feature_names_out()) == ["gene_c", "gene_e"]
    assert est.predict(X).shape == (80,)
    assert list(est.fit(X.to_numpy(), y).get_feature_names_out()) == ["x2", "x4"]
    assert not hasattr(est, "feature_names_in_")  # a refit on an array forgets the names


def test_columns_in_another_order_are_refused(frame):
    X, y = frame
    est = FGM(k=2).fit(X, y)
    with pytest.raises(DataError, match="column names"):
        est.predict(X[X.columns[::-1]])
