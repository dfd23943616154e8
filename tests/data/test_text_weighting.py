"""The catalogue's text sets as tf-idf weights or as the raw counts a CountVectorizer gives:
the same documents and words either way."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.data import make


@pytest.mark.parametrize("name", ["fine-foods", "text-like"])
def test_counts_are_the_same_documents_as_the_tfidf_weights(name):
    tfidf, counts = make(name), make(name, weighting="counts")
    assert counts.X.shape == tfidf.X.shape and counts.X_test.shape == tfidf.X_test.shape
    for a, b in ((tfidf.X, counts.X), (tfidf.X_test, counts.X_test)):
        a, b = a.tocsr(), b.tocsr()
        np.testing.assert_array_equal(a.indptr, b.indptr)
        np.testing.assert_array_equal(a.indices, b.indices)
    assert np.all(counts.X.data == np.round(counts.X.data)) and counts.X.data.min() >= 1
    assert counts.X.data.max() > 1  # a word seen more than once in a document
    np.testing.assert_array_equal(counts.y, tfidf.y)
    if tfidf.feature_names is not None:
        assert list(counts.feature_names) == list(tfidf.feature_names)


def test_an_unknown_weighting_is_refused():
    with pytest.raises(ValueError, match="weighting"):
        make("text-like", weighting="binary")
