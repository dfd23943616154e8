"""The catalogue: built-in real datasets, every synthetic design, and files under datasets/."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from .._params import ParamSpec
from . import _deformed
from . import _rdatasets as rd
from . import _synthetic as syn
from ._dataset import Dataset
from ._errors import DataError

DATASETS_DIR = Path(__file__).resolve().parents[2] / "datasets"


@dataclass(frozen=True)
class CatalogueEntry:
    """A named dataset: how to build it, what it is, and which knobs a user may turn."""

    name: str
    build: Callable[..., Dataset]
    description: str
    kind: str  # "real", "synthetic" or "file"
    params: tuple[ParamSpec, ...] = field(default_factory=tuple)

    def make(self, **overrides) -> Dataset:
        known = {p.name: p for p in self.params}
        unknown = set(overrides) - set(known)
        if unknown:
            raise ValueError(f"dataset {self.name!r} has no parameter(s) {sorted(unknown)}; "
                             f"it takes {sorted(known) or 'none'}")
        values = {p.name: p.default for p in self.params}
        values.update({k: known[k].validate(v, owner=self.name) for k, v in overrides.items()})
        ds = self.build(**values)
        ds.name = self.name
        return ds


# ----------------------------------------------------------------------------- real data
_SKLEARN_LICENCE = ("shipped with scikit-learn (BSD-3-Clause); original data from the UCI "
                    "Machine Learning Repository")


def _digits_pair(a: int, b: int) -> Dataset:
    from sklearn.datasets import load_digits

    d = load_digits()
    keep = np.isin(d.target, [a, b])
    return Dataset(
        X=d.data[keep].astype(np.float64), y=d.target[keep], image_shape=(8, 8),
        name=f"digits-{a}v{b}", description=f"8×8 handwritten digits, {a} versus {b}",
        source="sklearn.datasets.load_digits (UCI optical digits)", licence=_SKLEARN_LICENCE,
    )


def _digits_one_vs_rest(digit: int) -> Dataset:
    from sklearn.datasets import load_digits

    d = load_digits()
    y = np.where(d.target == digit, 1, -1)
    return Dataset(
        X=d.data.astype(np.float64), y=y, image_shape=(8, 8), name=f"digits-{digit}vr",
        description=f"8×8 digits, {digit} versus the rest (≈10% positives)",
        source="sklearn.datasets.load_digits (UCI optical digits)", licence=_SKLEARN_LICENCE,
    )


def _digits() -> Dataset:
    from sklearn.datasets import load_digits

    d = load_digits()
    return Dataset(X=d.data.astype(np.float64), y=d.target, image_shape=(8, 8), name="digits",
                   description="8×8 handwritten digits, 10 classes",
                   source="sklearn.datasets.load_digits (UCI optical digits)",
                   licence=_SKLEARN_LICENCE)


def _sk(loader_name: str, name: str, description: str) -> Dataset:
    import sklearn.datasets as skd

    d = getattr(skd, loader_name)()
    return Dataset(X=d.data.astype(np.float64), y=d.target, name=name,
                   feature_names=[str(f) for f in d.feature_names], description=description,
                   source=f"sklearn.datasets.{loader_name}", licence=_SKLEARN_LICENCE)


def _semi(base: str, n_labeled: int = 10, setting: str = "transductive", seed: int = 0):
    return syn.make_semi_supervised(make(base), n_labeled, setting=setting, seed=seed)


# ----------------------------------------------------------------------------- knobs
def _size(name, default, low, high, label=None):
    return ParamSpec(name, label or name.replace("_", " "), default, "int", low, high,
                     log=high / max(low, 1) > 100)


def _breast_cancer_probes(n_probes: int = 60, seed: int = 0) -> Dataset:
    """Breast cancer's 30 columns and ``n_probes`` permuted copies of them (the NIPS 2003
    probes, :func:`~explorer.data.with_probes`): real data whose null features are known."""
    from ._probes import with_probes

    base = _sk("load_breast_cancer", "breast-cancer", "Wisconsin diagnostic breast cancer")
    return with_probes(base, n_probes, seed=seed)


_WEIGHTING = ParamSpec("weighting", "cells", "tfidf", "choice", choices=("tfidf", "counts"),
                       live=False, help="tf-idf weights or raw word counts")
SEED = ParamSpec("seed", "seed", 0, "int", 0, 2**31 - 1, help="random seed")
_WEIGHT = ParamSpec("weighting", "weighting", "I", "choice", choices=("I", "II", "III"),
                    help="Type I: U(0,1); II: w^0.3 (flat); III: w^3 (sharp)")


def _entries() -> list[CatalogueEntry]:
    entries = [
        CatalogueEntry("digits-3v8", partial(_digits_pair, 3, 8),
                       "8×8 digits 3 vs 8 (image pair)", "real"),
        CatalogueEntry("digits-2v3", partial(_digits_pair, 2, 3),
                       "8×8 digits 2 vs 3 (image pair)", "real"),
        CatalogueEntry("digits-4v7", partial(_digits_pair, 4, 7),
                       "8×8 digits 4 vs 7 (image pair)", "real"),
        CatalogueEntry("digits-9vr", partial(_digits_one_vs_rest, 9),
                       "8×8 digits 9 vs rest (imbalanced)", "real"),
        CatalogueEntry("digits", _digits, "8×8 digits, 10 classes", "real"),
        CatalogueEntry("breast-cancer", partial(_sk, "load_breast_cancer", "breast-cancer",
                                                "Wisconsin diagnostic breast cancer"),
                       "Wisconsin breast cancer (30 features)", "real"),
        CatalogueEntry("breast-cancer-probes", _breast_cancer_probes,
                       "breast cancer + probes (permuted copies: known nulls)", "real",
                       (_size("n_probes", 60, 1, 3000, "probes"), SEED)),
        CatalogueEntry("wine", partial(_sk, "load_wine", "wine", "Wine recognition, 3 classes"),
                       "wine recognition (13 features, 3 classes)", "real"),
        CatalogueEntry("fine-foods", rd.fine_foods,
                       "food reviews as tf-idf words (sparse text, great vs other)", "real",
                       (ParamSpec("min_df", "min reviews per word", 3, "int", 1, 100,
                                  live=False), _WEIGHTING)),
        CatalogueEntry("grants", rd.grants, "grant applications (8,190 × 1,500+, binary)",
                       "real"),
        CatalogueEntry("pd-speech", rd.pd_speech,
                       "Parkinson's from speech (252 × 752 correlated)", "real"),
        CatalogueEntry("hepatic-injury", rd.hepatic_injury,
                       "QSAR liver injury (281 × 376, 3 classes)", "real"),
        CatalogueEntry("permeability", rd.permeability,
                       "QSAR permeability (165 × 1,107 fingerprints, regression)", "real"),
    ]
    for number, weighting in enumerate(("I", "II", "III"), start=1):
        entries.append(CatalogueEntry(
            f"fgm-type{number}",
            partial(syn.make_fgm_linear, weighting=weighting),
            f"FGM synthetic Type {weighting} (Fig. 2/3)", "synthetic",
            (_size("n_samples", 1024, 50, 16384), _size("n_features", 4096, 50, 200000),
             _size("n_informative", 400, 1, 5000), _size("n_test", 1024, 50, 16384), SEED)))
    entries += [
        CatalogueEntry(
            "fgm-sparse", partial(syn.make_fgm_linear, density=0.05),
            "FGM Fig. 7: subsampled entries (sparse)", "synthetic",
            (_size("n_samples", 2048, 50, 16384), _size("n_features", 20000, 50, 200000),
             ParamSpec("density", "density", 0.05, "float", 0.001, 1.0, log=True), _WEIGHT,
             _size("n_test", 1024, 50, 16384), SEED)),
        CatalogueEntry(
            "fgm-groups", syn.make_fgm_groups, "FGM §7.2 groups of 10", "synthetic",
            (_size("n_samples", 1024, 50, 8192), _size("n_groups", 500, 10, 40000),
             _size("group_size", 10, 1, 100), _size("n_informative_groups", 20, 1, 1000),
             _size("n_test", 1024, 50, 8192), SEED)),
        CatalogueEntry(
            "fsa-correlated", syn.make_fsa_correlated,
            "FSA Table 2: Σ=0.9^|i−j|, relevant 10,20,…", "synthetic",
            (_size("n_samples", 1000, 50, 100000), _size("n_features", 1000, 20, 100000),
             _size("k_star", 10, 1, 1000, "relevant k*"),
             ParamSpec("delta", "correlation δ", 0.9, "float", 0.0, 0.99),
             ParamSpec("label_noise", "random labels", 0.0, "float", 0.0, 0.5),
             _size("n_test", 1000, 50, 100000), SEED)),
        CatalogueEntry(
            "fsa-noisy", partial(syn.make_fsa_correlated, label_noise=0.1),
            "FSA Table 3: 10% random labels", "synthetic",
            (_size("n_samples", 1000, 50, 100000), _size("n_features", 1000, 20, 100000),
             _size("k_star", 10, 1, 1000, "relevant k*"), SEED)),
        CatalogueEntry(
            "fsa-regression", partial(syn.make_fsa_correlated, task="regression"),
            "FSA Table 4: y = Σ x_{10i} + noise", "synthetic",
            (_size("n_samples", 1000, 50, 100000), _size("n_features", 1000, 20, 100000),
             _size("k_star", 30, 1, 1000, "relevant k*"), SEED)),
        CatalogueEntry(
            "fsa-equicorrelated", syn.make_fsa_equicorrelated,
            "FSA §3.1.3: equally correlated, float32", "synthetic",
            (_size("n_samples", 5000, 50, 1000000), _size("n_features", 1000, 20, 100000),
             _size("k_star", 10, 1, 10000, "relevant k*"),
             ParamSpec("alpha", "α", 0.5, "float", 0.0, 5.0), SEED)),
        CatalogueEntry(
            "fsa-nonlinear", syn.make_fsa_nonlinear, "FSA §2.5: signal through |x|",
            "synthetic",
            (_size("n_samples", 1000, 50, 100000), _size("n_features", 200, 20, 10000),
             _size("k_star", 5, 1, 100, "relevant k*"),
             ParamSpec("kind", "response", "abs", "choice", choices=("abs", "square")), SEED)),
        CatalogueEntry(
            "interactions", syn.make_interactions,
            "pairwise products + main effects (additive models miss them)", "synthetic",
            (_size("n_samples", 2000, 50, 100000), _size("n_features", 500, 2, 10000),
             _size("n_pairs", 5, 1, 100, "interacting pairs"),
             ParamSpec("main_effect", "main effect", 0.5, "float", 0.0, 5.0),
             _size("n_test", 1000, 50, 100000), SEED)),
        CatalogueEntry(
            "fsa-ranking", syn.make_ranking, "FSA-Rank: graded documents per query",
            "synthetic",
            (_size("n_queries", 100, 5, 10000), _size("docs_per_query", 20, 2, 1000),
             _size("n_features", 200, 20, 10000), SEED)),
        CatalogueEntry(
            "xor", syn.make_xor, "GrFL: high-dimensional XOR (nonlinear)", "synthetic",
            (_size("n_samples", 1000, 50, 100000), _size("n_features", 20, 2, 10000),
             _size("n_informative", 2, 2, 10),
             ParamSpec("label_noise", "flipped labels", 0.0, "float", 0.0, 0.5), SEED)),
        CatalogueEntry(
            "textures", syn.make_textures, "GrFL: oriented texture patches (16×16)",
            "synthetic",
            (_size("n_per_class", 200, 10, 5000), _size("n_classes", 3, 2, 8),
             ParamSpec("noise", "noise", 0.5, "float", 0.0, 5.0), SEED)),
        CatalogueEntry(
            "text-like", syn.make_text_like, "sparse text-like, 5% positives", "synthetic",
            (_size("n_samples", 2000, 50, 100000), _size("n_features", 10000, 100, 2000000),
             ParamSpec("positive_rate", "positives", 0.05, "float", 0.005, 0.5, log=True),
             _WEIGHTING, SEED)),
    ]
    for pair in ("2v3", "3v8", "4v7"):
        entries.append(CatalogueEntry(
            f"digits-{pair}-semi", partial(_semi, f"digits-{pair}"),
            f"digits {pair}: few labels + unlabeled rows (FS-Manifold)", "real",
            (_size("n_labeled", 10, 2, 300, "labeled examples"),
             ParamSpec("setting", "setting", "transductive", "choice",
                       choices=("transductive", "semi-supervised")), SEED)))
    entries.append(CatalogueEntry(
        "digits-deformed-semi", _deformed.deformed_digits,
        "3 vs 8 as 28×28 deformed digits: 300 labeled, 60,000 rows (FS-Manifold at scale)",
        "real",
        (_size("n_rows", 60_000, 1_000, 200_000, "rows (labeled + unlabeled)"),
         _size("n_labeled", 300, 2, 5_000, "labeled examples"),
         _size("n_test", 2_000, 100, 20_000, "test rows"),
         ParamSpec("pair", "digits", "3v8", "choice", choices=("3v8", "2v3", "4v7"),
                   live=False), SEED)))
    entries += _file_entries()
    return entries


def _file_entries() -> list[CatalogueEntry]:
    from ._loaders import load_file

    found = []
    if DATASETS_DIR.is_dir():
        for path in sorted(DATASETS_DIR.iterdir()):
            if path.suffix.lower() in (".csv", ".tsv", ".svm", ".svmlight", ".libsvm", ".npz",
                                       ".parquet", ".mat", ".gz", ".bz2"):
                stem = path.name.split(".")[0]
                found.append(CatalogueEntry(stem, partial(load_file, path),
                                            f"file datasets/{path.name}", "file"))
    return found


_CATALOGUE: dict[str, CatalogueEntry] | None = None


def _catalogue() -> dict[str, CatalogueEntry]:
    global _CATALOGUE
    if _CATALOGUE is None:
        entries = {}
        for entry in _entries():
            entries.setdefault(entry.name, entry)
        _CATALOGUE = entries
    return _CATALOGUE


def catalogue() -> list[str]:
    """Names of the built-in datasets (real, synthetic, and files under ``datasets/``)."""
    return list(_catalogue())


def catalogue_entries() -> list[CatalogueEntry]:
    """The catalogue with descriptions and the knobs each entry takes."""
    return list(_catalogue().values())


def entry(name: str) -> CatalogueEntry:
    """The catalogue entry called ``name`` (``DataError`` listing the names if unknown)."""
    try:
        return _catalogue()[name]
    except KeyError:
        raise DataError(f"no dataset named {name!r} in the catalogue; known: "
                        f"{', '.join(catalogue())}") from None


def make(name: str, **params) -> Dataset:
    """Build the catalogue dataset ``name``, overriding any of its declared knobs."""
    return entry(name).make(**params)
