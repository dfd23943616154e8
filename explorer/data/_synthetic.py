"""Seeded synthetic generators for every design in the five papers (see shared/METHODS.md).

Each returns a :class:`Dataset` with ``truth`` (informative feature indices) and its own test
part, sized by arguments. Big designs are generated in row chunks so memory stays at the size
of the result.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._dataset import Dataset

_CHUNK = 2048


def _rng(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


def _gaussian(rng, n, m, dtype, density=1.0):
    """An n×m N(0,1) matrix; with density < 1 each entry is kept with that probability (CSR)."""
    if density >= 1.0:
        out = np.empty((n, m), dtype=dtype)
        for start in range(0, n, _CHUNK):
            stop = min(n, start + _CHUNK)
            out[start:stop] = rng.standard_normal((stop - start, m), dtype=np.float64)
        return out
    blocks = []
    for start in range(0, n, _CHUNK):
        rows = min(_CHUNK, n - start)
        nnz = rng.binomial(rows * m, density)
        flat = rng.choice(rows * m, size=nnz, replace=False) if rows * m < 2**31 else \
            np.unique(rng.integers(0, rows * m, size=nnz))
        flat.sort()
        r, c = np.divmod(flat, m)
        vals = rng.standard_normal(flat.size).astype(dtype)
        blocks.append(sp.csr_matrix((vals, (r, c)), shape=(rows, m), dtype=dtype))
    return sp.vstack(blocks, format="csr")


def _sign(v):
    out = np.sign(v).astype(np.int64)
    out[out == 0] = 1
    return out


# ----------------------------------------------------------------------------- FGM (000)
def make_fgm_linear(n_samples: int = 4096, n_features: int = 4096, n_informative: int = 400,
                    weighting: str = "I", n_test: int = 4096, density: float = 1.0,
                    dtype=np.float64, seed: int = 0) -> Dataset:
    """FGM's synthetic linear design (§6.2.1 of Tan et al.; Figs. 2, 3, 6 and 7).

    X ~ N(0, 1); ``n_informative`` features get weights w0 ~ U(0, 1) (Type I), w0**0.3
    (Type II, flatter) or w0**3 (Type III, sharper); labels y = sign(X w) in {-1, +1}.
    With ``density < 1`` (Fig. 7) each entry of X is kept with probability ``density`` and the
    labels are computed from the subsampled matrix (so the signal stays learnable; the paper
    does not say which it did).
    """
    weighting = str(weighting).upper()
    powers = {"I": 1.0, "II": 0.3, "III": 3.0}
    if weighting not in powers:
        raise ValueError(f"weighting must be 'I', 'II' or 'III', got {weighting!r}")
    if not 0 < n_informative <= n_features:
        raise ValueError("need 0 < n_informative <= n_features")
    rng = _rng(seed)
    truth = np.sort(rng.choice(n_features, n_informative, replace=False))
    w = np.zeros(n_features)
    w[truth] = rng.uniform(0.0, 1.0, n_informative) ** powers[weighting]
    X = _gaussian(rng, n_samples, n_features, dtype, density)
    X_test = _gaussian(rng, n_test, n_features, dtype, density)
    return Dataset(
        X=X, y=_sign(X @ w), X_test=X_test, y_test=_sign(X_test @ w), truth=truth,
        name=f"fgm-type{ {'I': 1, 'II': 2, 'III': 3}[weighting]}", task="classification",
        description=(f"FGM synthetic Type {weighting}: {n_informative} informative of "
                     f"{n_features} N(0,1) features, y = sign(Xw)"
                     + (f", density {density}" if density < 1 else "")),
        source="Tan, Tsang & Wang (JMLR), §6.2.1", licence="synthetic",
        meta={"w": w},
    )


def make_fgm_groups(n_samples: int = 4096, n_groups: int = 2000, group_size: int = 10,
                    n_informative_groups: int = 100, n_test: int = 2000, dtype=np.float64,
                    seed: int = 0) -> Dataset:
    """FGM's group design (§7.2): groups of ``group_size`` N(0,1) features, a random set of
    informative groups with N(0, 1) weights, y = sign(X w)."""
    if not 0 < n_informative_groups <= n_groups:
        raise ValueError("need 0 < n_informative_groups <= n_groups")
    rng = _rng(seed)
    m = n_groups * group_size
    groups = np.repeat(np.arange(n_groups), group_size)
    good = np.sort(rng.choice(n_groups, n_informative_groups, replace=False))
    truth = np.flatnonzero(np.isin(groups, good))
    w = np.zeros(m)
    w[truth] = rng.standard_normal(truth.size)
    X = _gaussian(rng, n_samples, m, dtype)
    X_test = _gaussian(rng, n_test, m, dtype)
    return Dataset(
        X=X, y=_sign(X @ w), X_test=X_test, y_test=_sign(X_test @ w), truth=truth,
        groups=groups, name="fgm-groups", task="classification",
        description=(f"FGM group synthetic: {n_groups} groups of {group_size}, "
                     f"{n_informative_groups} informative"),
        source="Tan, Tsang & Wang (JMLR), §7.2", licence="synthetic",
        meta={"w": w, "informative_groups": good},
    )


# ----------------------------------------------------------------------------- FSA (003)
def _ar1(rng, n, m, delta, dtype):
    """Rows with corr(x_i, x_j) = delta**|i-j| by an AR(1) recursion along the features."""
    from scipy.signal import lfilter

    out = np.empty((n, m), dtype=dtype)
    scale = np.sqrt(1.0 - delta**2)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        eps = rng.standard_normal((stop - start, m))
        eps[:, 1:] *= scale
        # x_j = delta x_{j-1} + sqrt(1-delta^2) e_j: a first-order recursive filter
        out[start:stop] = lfilter([1.0], [1.0, -delta], eps, axis=1)
    return out


def _fsa_truth(k_star: int, n_features: int) -> np.ndarray:
    truth = np.arange(1, k_star + 1) * 10 - 1  # variables 10, 20, …, 10k* (1-based)
    if truth[-1] >= n_features:
        raise ValueError(f"k_star={k_star} needs at least {10 * k_star} features")
    return truth


def make_planted_logistic(n_samples: int = 300, n_features: int = 500, n_signals: int = 20,
                          rho: float = 0.5, null: bool = False, seed: int = 0) -> Dataset:
    """A planted design for error control: x ~ N(0, Σ), Σ_ij = ρ^|i−j| (correlated
    nuisance), ``n_signals`` columns at random with weights ±1 in a logistic model,
    y ∈ {−1, 1}; ``null``: the labels permuted, so that nothing carries signal."""
    if not 0.0 <= rho < 1.0:
        raise ValueError("rho must be in [0, 1)")
    if not 0 < n_signals <= n_features:
        raise ValueError(f"n_signals must be in 1 … {n_features}, got {n_signals}")
    rng = _rng(seed)
    X = _ar1(rng, n_samples, n_features, rho, np.float64)
    truth = np.sort(rng.choice(n_features, n_signals, replace=False))
    w = np.zeros(n_features)
    w[truth] = rng.choice([-1.0, 1.0], n_signals)
    y = np.where(rng.random(n_samples) < 1 / (1 + np.exp(-(X @ w))), 1, -1)
    if null:
        y = rng.permutation(y)
    return Dataset(X=X, y=y, truth=truth, name="planted-logistic",
                   description=(f"{n_signals} of {n_features} AR(1) columns (ρ = {rho}) in a "
                                "logistic model" + (", labels permuted" if null else "")),
                   source="synthetic", licence="synthetic")


def make_fsa_correlated(n_samples: int = 1000, n_features: int = 1000, k_star: int = 10,
                        delta: float = 0.9, label_noise: float = 0.0,
                        task: str = "classification", n_test: int = 1000, dtype=np.float64,
                        seed: int = 0) -> Dataset:
    """FSA's simulated data (§3.1, eq. 17; Tables 2–4): x ~ N(0, Σ), Σ_ij = δ^|i−j|.

    Classification: y = 1 if Σ_{j≤k*} x_{10j} > 0 else 0; with ``label_noise`` = 0.1 that share
    of the training examples gets a random label (about 5% wrong, Table 3). Regression
    (Table 4): y = Σ_{i≤k*} x_{10i} + N(0, 1).
    """
    if task not in ("classification", "regression"):
        raise ValueError("task must be 'classification' or 'regression'")
    if not 0.0 <= delta < 1.0:
        raise ValueError("delta must be in [0, 1)")
    rng = _rng(seed)
    truth = _fsa_truth(k_star, n_features)
    X = _ar1(rng, n_samples, n_features, delta, dtype)
    X_test = _ar1(rng, n_test, n_features, delta, dtype)
    signal, signal_test = X[:, truth].sum(1, dtype=np.float64), \
        X_test[:, truth].sum(1, dtype=np.float64)
    if task == "classification":
        y, y_test = (signal > 0).astype(np.int64), (signal_test > 0).astype(np.int64)
        if label_noise > 0:
            flip = rng.random(n_samples) < label_noise
            y[flip] = rng.integers(0, 2, flip.sum())
    else:
        y = signal + rng.standard_normal(n_samples)
        y_test = signal_test + rng.standard_normal(n_test)
    name = "fsa-regression" if task == "regression" else (
        "fsa-noisy" if label_noise > 0 else "fsa-correlated")
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, truth=truth, task=task, name=name,
        description=(f"FSA simulated {task}: Σ_ij = {delta}^|i-j|, relevant variables "
                     f"10, 20, …, {10 * k_star}" + (f", {label_noise:.0%} random labels"
                                                   if label_noise else "")),
        source="Barbu et al. (TPAMI), §3.1", licence="synthetic",
    )


def make_fsa_equicorrelated(n_samples: int = 10000, n_features: int = 1000, k_star: int = 10,
                            alpha: float = 0.5, n_test: int = 2000, dtype=np.float32,
                            seed: int = 0) -> Dataset:
    """FSA's large equally-correlated design (§3.1.3, eq. 18): x_i = α z_i 1 + ε_i, so every
    pair of predictors has correlation α²/(1+α²); labels as eq. (17)."""
    rng = _rng(seed)
    truth = _fsa_truth(k_star, n_features)

    def draw(n):
        out = np.empty((n, n_features), dtype=dtype)
        for start in range(0, n, _CHUNK):
            stop = min(n, start + _CHUNK)
            z = rng.standard_normal((stop - start, 1))
            out[start:stop] = alpha * z + rng.standard_normal((stop - start, n_features))
        return out

    X, X_test = draw(n_samples), draw(n_test)
    y = (X[:, truth].sum(1, dtype=np.float64) > 0).astype(np.int64)
    y_test = (X_test[:, truth].sum(1, dtype=np.float64) > 0).astype(np.int64)
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, truth=truth, name="fsa-equicorrelated",
        description=(f"FSA equally correlated (corr {alpha**2 / (1 + alpha**2):.2f}), "
                     f"{k_star} relevant"),
        source="Barbu et al. (TPAMI), §3.1.3", licence="synthetic",
    )


def make_fsa_nonlinear(n_samples: int = 1000, n_features: int = 200, k_star: int = 5,
                       kind: str = "abs", n_test: int = 1000, seed: int = 0) -> Dataset:
    """Relevant variables act through |x| (or x²): y = 1 if Σ_j g(x_{10j}) > median.

    A linear model sees no signal in x_{10j} (the classes are symmetric in each variable),
    while a piecewise-linear response (FSA §2.5) recovers them.
    """
    if kind not in ("abs", "square"):
        raise ValueError("kind must be 'abs' or 'square'")
    rng = _rng(seed)
    truth = _fsa_truth(k_star, n_features)
    g = np.abs if kind == "abs" else np.square
    X = rng.standard_normal((n_samples, n_features))
    X_test = rng.standard_normal((n_test, n_features))
    threshold = k_star * (np.sqrt(2 / np.pi) if kind == "abs" else 1.0)
    y = (g(X[:, truth]).sum(1) > threshold).astype(np.int64)
    y_test = (g(X_test[:, truth]).sum(1) > threshold).astype(np.int64)
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, truth=truth, name="fsa-nonlinear",
        description=f"relevant variables act through {'|x|' if kind == 'abs' else 'x²'}",
        source="Barbu et al. (TPAMI), §2.5 (design ours)", licence="synthetic",
    )


def make_interactions(n_samples: int = 2000, n_features: int = 500, n_pairs: int = 5,
                      main_effect: float = 0.5, n_test: int = 1000, seed: int = 0) -> Dataset:
    """Planted pairwise interactions: y = 1 if Σ_p x_a(p)·x_b(p) + main_effect·Σ_j x_j > its
    median, over 2·``n_pairs`` relevant standard-normal variables at random positions.

    The main effects make every relevant variable visible to an additive selection; the
    products are beyond any additive model (a weight or a response curve per variable), so a
    method can keep the right variables and still predict poorly with its own model.
    """
    if 2 * n_pairs > n_features:
        raise ValueError(f"n_pairs={n_pairs} needs at least {2 * n_pairs} features")
    rng = _rng(seed)
    truth = np.sort(rng.choice(n_features, 2 * n_pairs, replace=False))
    order = rng.permutation(truth)  # which relevant variables pair up

    def latent(X):
        T = X[:, order]
        return (T[:, 0::2] * T[:, 1::2]).sum(1) + main_effect * T.sum(1)

    X = rng.standard_normal((n_samples, n_features))
    X_test = rng.standard_normal((n_test, n_features))
    cut = float(np.median(latent(X)))
    return Dataset(
        X=X, y=(latent(X) > cut).astype(np.int64), X_test=X_test,
        y_test=(latent(X_test) > cut).astype(np.int64), truth=truth, name="interactions",
        description=f"{n_pairs} pairwise products + main effects over {2 * n_pairs} of "
                    f"{n_features} variables (nonlinear)",
        source="design ours, after NIPS 2003 madelon (Guyon et al.)", licence="synthetic",
    )


def make_ranking(n_queries: int = 100, docs_per_query: int = 20, n_features: int = 200,
                 k_star: int = 5, n_grades: int = 3, noise: float = 0.5,
                 test_queries: int = 50, seed: int = 0) -> Dataset:
    """Ranking data for FSA-Rank (eq. 9): per query, documents with relevance grades 0…n−1
    from a latent score on variables 10, 20, …, 10k* plus noise."""
    rng = _rng(seed)
    truth = _fsa_truth(k_star, n_features)

    def draw(nq):
        n = nq * docs_per_query
        X = rng.standard_normal((n, n_features))
        score = X[:, truth].sum(1) + noise * rng.standard_normal(n)
        qid = np.repeat(np.arange(nq), docs_per_query)
        grades = np.empty(n, dtype=np.int64)
        for q in range(nq):
            rows = slice(q * docs_per_query, (q + 1) * docs_per_query)
            ranks = np.argsort(np.argsort(score[rows]))
            grades[rows] = (ranks * n_grades) // docs_per_query
        return X, grades, qid

    X, y, q = draw(n_queries)
    X_test, y_test, q_test = draw(test_queries)
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, query=q, query_test=q_test + n_queries,
        truth=truth, task="ranking", name="fsa-ranking",
        description=f"{n_queries} queries × {docs_per_query} documents, {n_grades} grades",
        source="Barbu et al. (TPAMI), §2.4 (design ours)", licence="synthetic",
    )


# ----------------------------------------------------------------------------- GrFL (002)
def make_xor(n_samples: int = 1000, n_features: int = 20, n_informative: int = 2,
             label_noise: float = 0.0, n_test: int = 2000, seed: int = 0) -> Dataset:
    """A high-dimensional XOR / checkerboard: y = sign(Π_{j<k} x_j) on ``n_informative``
    uniform(−1, 1) coordinates, the others pure noise. No linear feature carries signal."""
    rng = _rng(seed)
    truth = np.arange(n_informative)

    def draw(n):
        X = rng.uniform(-1.0, 1.0, (n, n_features))
        return X, _sign(np.prod(X[:, truth], axis=1))

    X, y = draw(n_samples)
    X_test, y_test = draw(n_test)
    if label_noise > 0:
        flip = rng.random(n_samples) < label_noise
        y[flip] = -y[flip]
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, truth=truth, name="xor",
        description=f"{n_informative}-way XOR in {n_features} dimensions (nonlinear)",
        source="design ours, for GrFL (Rakotomamonjy et al.)", licence="synthetic",
    )


def make_faces(n_subjects: int = 15, per_subject: int = 6, side: int = 32,
               seed: int = 7) -> Dataset:
    """Stand-in "faces" in the layout users bring them (one row of ``side``² pixels per
    image, ``n_subjects`` classes numbered from 1, as the face sets of the feature-selection
    benchmarks): each subject a smooth blob of its own place and width, each of its images
    shifted a little, plus noise."""
    rng = _rng(seed)
    yy, xx = np.mgrid[0:side, 0:side].astype(float)
    images, labels = [], []
    for subject in range(1, n_subjects + 1):
        cy, cx = rng.uniform(side / 4, 3 * side / 4, 2)
        width = rng.uniform(side / 10, side / 4)
        for _ in range(per_subject):
            dy, dx = rng.normal(0, 0.7, 2)
            blob = np.exp(-((yy - cy - dy) ** 2 + (xx - cx - dx) ** 2) / (2 * width ** 2))
            images.append((blob + 0.05 * rng.random((side, side))).ravel())
            labels.append(subject)
    return Dataset(X=np.array(images), y=np.array(labels), image_shape=(side, side),
                   name="faces", description=f"{n_subjects} subjects' {side}×{side} images "
                   "(synthetic stand-ins)", source="synthetic", licence="synthetic")


def make_textures(n_per_class: int = 200, patch: int = 16, n_classes: int = 3,
                  noise: float = 0.5, n_test_per_class: int = 200, seed: int = 0) -> Dataset:
    """Oriented-texture patches for Gabor features (stand-in for the Brodatz patches of §6.2).

    Each class is a sum of two sinusoidal gratings with a class-specific orientation and
    frequency; every patch gets a random phase, a small orientation jitter and white noise, so
    a pixel-wise linear model fails while oriented band-pass filters separate the classes.
    """
    rng = _rng(seed)
    theta = np.linspace(0, np.pi, n_classes, endpoint=False) + np.pi / (4 * n_classes)
    freq = np.linspace(0.12, 0.3, n_classes)
    yy, xx = np.mgrid[0:patch, 0:patch].astype(float)

    def draw(n_per):
        X = np.empty((n_per * n_classes, patch * patch))
        y = np.repeat(np.arange(n_classes), n_per)
        for i, c in enumerate(y):
            t = theta[c] + rng.normal(0, 0.08)
            f = freq[c] * (1 + rng.normal(0, 0.05))
            u = xx * np.cos(t) + yy * np.sin(t)
            img = np.sin(2 * np.pi * f * u + rng.uniform(0, 2 * np.pi))
            img += 0.5 * np.sin(2 * np.pi * f * 1.7 * u + rng.uniform(0, 2 * np.pi))
            X[i] = (img + noise * rng.standard_normal(img.shape)).ravel()
        order = rng.permutation(len(y))
        return X[order], y[order]

    X, y = draw(n_per_class)
    X_test, y_test = draw(n_test_per_class)
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, image_shape=(patch, patch), name="textures",
        description=f"{n_classes} oriented textures, {patch}×{patch} patches",
        source="design ours, after the Brodatz experiment of Rakotomamonjy et al. §6.2",
        licence="synthetic",
    )


# ----------------------------------------------------------------------------- text-like
def make_text_like(n_samples: int = 2000, n_features: int = 10000, words_per_doc: int = 60,
                   positive_rate: float = 0.05, n_informative: int = 50, boost: float = 8.0,
                   n_test: int = 2000, seed: int = 0, weighting: str = "tfidf") -> Dataset:
    """Sparse non-negative bag-of-words rows (Zipf word frequencies), ``positive_rate``
    positives whose documents use ``n_informative`` words ``boost`` times more often; cells
    are ℓ2-normalised tf-idf-like weights (``weighting="tfidf"``) or the raw counts
    (``"counts"``, the same documents). Imbalanced and text-shaped, for FS-multi and
    FS-Manifold."""
    if weighting not in ("tfidf", "counts"):
        raise ValueError(f"weighting must be 'tfidf' or 'counts', got {weighting!r}")
    rng = _rng(seed)
    ranks = np.arange(1, n_features + 1)
    base = 1.0 / ranks**1.1
    base /= base.sum()
    truth = np.sort(rng.choice(np.arange(20, n_features), n_informative, replace=False))
    pos = base.copy()
    pos[truth] *= boost
    pos /= pos.sum()
    idf = np.log(1.0 + 1.0 / (base * words_per_doc + 1e-12))

    cdf_neg, cdf_pos = np.cumsum(base), np.cumsum(pos)

    def draw(n):
        y = np.where(rng.random(n) < positive_rate, 1, -1)
        y[:2] = [1, -1]
        lengths = np.maximum(5, rng.poisson(words_per_doc, n))
        r = np.repeat(np.arange(n), lengths)
        u = rng.random(r.size) * cdf_neg[-1]
        c = np.where(y[r] > 0, np.searchsorted(cdf_pos, u), np.searchsorted(cdf_neg, u))
        c = np.minimum(c, n_features - 1)
        X = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n, n_features))
        X.sum_duplicates()
        if weighting == "counts":
            return X, y
        X.data = np.log1p(X.data)
        X = X @ sp.diags(idf)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
        X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X
        return sp.csr_matrix(X), y

    X, y = draw(n_samples)
    X_test, y_test = draw(n_test)
    return Dataset(
        X=X, y=y, X_test=X_test, y_test=y_test, truth=truth, name="text-like",
        description=(f"sparse text-like: {n_features:,} words, ≈{words_per_doc} per document, "
                     f"{positive_rate:.0%} positives"),
        source="design ours (stand-in for news20/Reuters)", licence="synthetic",
    )


def make_sparse_wide(n_samples: int = 20000, n_features: int = 1_350_000,
                     nnz_per_row: int = 360, n_informative: int = 500, dtype=np.float64,
                     seed: int = 0) -> Dataset:
    """A news20.binary-sized sparse matrix: ``nnz_per_row`` non-negative entries per row drawn
    with Zipf-like column popularity; labels from a sparse linear rule on ``n_informative``
    columns. For scale benchmarks (no test part)."""
    rng = _rng(seed)
    popularity = 1.0 / np.arange(1, n_features + 1) ** 0.8
    popularity /= popularity.sum()
    cdf = np.cumsum(popularity)
    cols = np.searchsorted(cdf, rng.random(n_samples * nnz_per_row))
    cols = np.minimum(cols, n_features - 1)
    rows = np.repeat(np.arange(n_samples), nnz_per_row)
    vals = rng.random(cols.size).astype(dtype)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_samples, n_features), dtype=dtype)
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-12).astype(dtype)) @ X)
    truth = np.sort(rng.choice(min(n_features, 50_000), n_informative, replace=False))
    w = np.zeros(n_features)
    w[truth] = rng.standard_normal(n_informative)
    score = X @ w
    y = _sign(score - np.median(score))
    return Dataset(X=X, y=y, truth=truth, name="sparse-wide",
                   description=f"news20-sized sparse synthetic ({n_samples:,} × {n_features:,})",
                   source="design ours", licence="synthetic")


# ----------------------------------------------------------------------------- semi-supervised
def make_semi_supervised(dataset: Dataset, n_labeled: int = 10, *,
                         setting: str = "transductive", seed: int = 0) -> Dataset:
    """Turn a labeled dataset into a semi-supervised one (FS-Manifold, §V of Xu et al.).

    ``n_labeled`` examples are drawn with the classes balanced; the remaining rows become
    ``X_unlabeled``. ``setting="transductive"``: the unlabeled rows are also the test set
    (the paper's transductive setting). ``"semi-supervised"``: half of the remaining rows are
    unlabeled training rows and the other half are new test rows never seen in training.
    """
    if setting not in ("transductive", "semi-supervised"):
        raise ValueError("setting must be 'transductive' or 'semi-supervised'")
    if dataset.task != "classification":
        raise ValueError("semi-supervised selection needs a classification dataset")
    rng = _rng(seed)
    X, y = dataset.X, dataset.y
    classes = np.unique(y)
    per_class = max(1, n_labeled // len(classes))
    labeled = []
    for c in classes:
        members = np.flatnonzero(y == c)
        if members.size <= per_class:
            raise ValueError(f"class {c!r} has only {members.size} examples; "
                             f"cannot label {per_class} of them")
        labeled.append(rng.choice(members, per_class, replace=False))
    labeled = np.sort(np.concatenate(labeled))
    rest = np.setdiff1d(np.arange(len(y)), labeled)
    rng.shuffle(rest)
    if setting == "transductive":
        unlabeled, test = rest, rest
    else:
        half = rest.size // 2
        unlabeled, test = np.sort(rest[:half]), np.sort(rest[half:])
    from dataclasses import replace

    return replace(
        dataset, X=X[labeled], y=y[labeled], X_unlabeled=X[unlabeled],
        X_test=X[test], y_test=y[test],
        name=f"{dataset.name}-semi", meta={**dataset.meta, "setting": setting,
                                           "labeled_index": labeled},
        description=f"{dataset.description} — {labeled.size} labeled, "
                    f"{unlabeled.size} unlabeled ({setting})",
    )
