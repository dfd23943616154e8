"""FS-Manifold — semi-supervised feature selection by manifold regularisation (Xu, King, Lyu &
Jin, IEEE TNN 2010).

Relaxed problem (12) for a fixed τ: min_{p∈P} max_{α∈Q} φ(p, α) with
φ(p, α) = αᵀe − ½(α∘y)ᵀ M(p) (α∘y), M(p) = (1−τ)² X_l diag(p) X_lᵀ + (τ²/ρ) H,
P = {p ∈ [0,1]^d : Σp = m}, Q = {α ∈ [0,C]^l : αᵀy = 0}; H = X_l Z⁻¹ X_lᵀ with Z = Xᵀ𝓛X over
labeled and unlabeled rows (:mod:`explorer.engines.fs_manifold`: through the smaller of the
n × n Gram matrix and the d × d matrix Z, the graph exact or by nearest-neighbour descent;
ridge semantics documented there).

Algorithm 2 (extended level method): p⁰ = (m/d)e; each iteration solves the SVM dual with
kernel M(pⁱ) (scikit-learn's SVC, precomputed kernel) → αⁱ; adds the cut φ(p, αⁱ), linear in
p with slope −½(1−τ)²(X_lᵀ(αⁱ∘y))² (the shared Xᵀs scorer); the lower bound is the LP
min_p max_j φ(p, αʲ), the upper bound min_j φ(pʲ, αʲ); the next p projects pⁱ onto the level
set at ℓ = λ·upper + (1−λ)·lower through its dual (:mod:`explorer.optim.level`); stop when the
gap ≤ ``tol``·|upper|. The m largest entries of the p that attains the upper bound are the
selection; predictions come from a linear hinge-loss SVM (same C) on the labeled rows
restricted to those m features.

τ = "auto" chooses τ in {0, 0.1, …, 0.9} by cross-validated accuracy on the labeled rows (the
outer max over τ of eq. 12). τ = 1 is rejected: the kernel would no longer depend on p.
Scale: with a fixed ρ (the paper's 10) and an unnormalised Laplacian, (τ²/ρ)H can be a
millionth of the feature term (8.6e-7 on digits-3v8 at τ = ½), and τ then changes nothing.
The default ``rho="auto"`` (ρ = tr(H)/tr(X_l diag(p⁰) X_lᵀ), both terms of equal trace at
τ = ½) makes τ the knob it is in the paper; every record carries ``manifold_ratio`` =
tr((τ²/ρ)H)/tr((1−τ)² X_l diag(p) X_lᵀ).
Multi-class: the joint one-against-others form of §IV.C (one α per class, one p).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from .._params import ParamSpec, cv_choice
from ..data import as_matrix
from ..engines.fs_manifold import (
    GRAPHS,
    ROUTES,
    GraphStopped,
    adjacency,
    kernel_route,
    laplacian,
    manifold_kernel,
    nearest_neighbours,
    svm_dual,
)
from ..features import negligible, scales_spread
from ..kernels import xts
from ..optim import LevelStep, Stopping, level_method, relative_gap
from .base import BaseSelector, Recorder, register
from .records import FitStopped

MAX_SVM_ITER = 1_000_000  # libsvm iterations of the final SVM
P_RECORDED = 5000  # features up to which every record carries the whole p (lessons)
TAU_GRID = tuple(round(0.1 * i, 1) for i in range(10))


@register("fs-manifold")
class FSManifold(BaseSelector):
    """Semi-supervised selection of m features: margin on the labeled rows, smoothness on the
    k-NN graph of labeled and unlabeled rows.

    Parameters
    ----------
    m : int
        Number of features selected.
    tau : float in [0, 1) or "auto"
        Trade-off between the feature term and the manifold term (0: supervised).
    rho : float or "auto"
        Manifold regularisation ρ (paper: 10); "auto" balances the two kernel traces.
    C : float or "cv"
        SVM trade-off; "cv": chosen by cross-validation over ``Cs``.
    n_neighbors, metric, graph_weights, laplacian
        The graph: k nearest neighbours (cosine or euclidean), binary or heat weights,
        unnormalised D − W or symmetric normalised Laplacian.
    graph : {"auto", "exact", "approximate"}
        How the neighbours are found: exact (brute force) or by nearest-neighbour descent;
        "auto": exact up to 10,000 rows (labelled and unlabelled), else approximate, with its
        recall estimated on 200 rows (``graph_recall_``).
    kernel : {"auto", "gram", "covariance"}
        How H = X_l Z⁺ X_lᵀ is formed: through the n × n Gram matrix or the d × d matrix
        Z = Xᵀ𝓛X; "auto": the smaller (same H to rounding, :mod:`explorer.engines.fs_manifold`).
    level : float
        λ of the level set ℓ = λ·upper + (1−λ)·lower (paper: 0.9).
    max_iter, tol
        Level-method iterations and relative gap that stops it.
    feature_scaling : {"auto", None, "rms"}
        "rms": every column at unit root mean square (over the labelled and unlabelled rows)
        for the graph, the selection and the SVM, the weights mapped back to the raw
        columns; "auto" (default): "rms" when the columns' scales spread over more than 100×
        (FGM's rule), else the raw columns as in the paper; None: the raw columns.
    Cs : sequence of float, optional
        The grid of ``C="cv"``.
    cv : int
        Folds of ``C="cv"`` (stratified).
    always_include, exclude, penalty_factor, positive
        What the user knows, keyword-only (:mod:`explorer.methods.knowledge`): features
        always in, never in, a factor per feature, non-negative weights. FS-Manifold honours
        ``always_include``, ``exclude``; it refuses the others with a message that names the
        methods that can.

    Attributes
    ----------
    selected_features_ : ndarray of int
        The m features of largest p.
    p_ : ndarray
        The feature weights on the simplex that attain the upper bound.
    upper_bound_ : float
        The level method's best objective.
    rho_, tau_ : float
        The manifold scale used (``rho="auto"``: both terms of equal trace at τ = ½) and τ.
    converged_ : bool
        The level method's gap met ``tol`` within ``max_iter``.
    history_ : list of IterationRecord
        One record per level iteration; ``info["manifold_ratio"]`` compares the two terms.
    kernel_route_, graph_route_ : str
        The kernel's route ("gram" or "covariance") and the graph's ("exact" or
        "approximate"), also in every record's ``info``.
    graph_recall_ : float
        The share of the exact k nearest neighbours the graph holds (1.0 when exact; else
        estimated on 200 rows).
    n_unlabeled_ : int
        The unlabelled rows the graph was built with.
    n_passes_ : int
        The fit's products of a vector with the matrix it works on: the graph's and the
        manifold kernel's X_all·X_allᵀ (a product per row of X_all each), every oracle's
        weighted Gram X_l diag(p) X_lᵀ (one per labelled row) and X_lᵀ(α∘y) per class, τ's
        cross-validation included.

    See Also
    --------
    FGM : the supervised selection at a number of features.

    References
    ----------
    .. [1] Z. Xu, I. King, M. R.-T. Lyu and R. Jin, "Discriminative semi-supervised feature
       selection via manifold regularization", IEEE Transactions on Neural Networks, 2010.

    Examples
    --------
    Ten labelled digits and 347 unlabelled ones:

    >>> from explorer import FSManifold, load
    >>> semi = load("digits-3v8-semi")
    >>> semi.X.shape, semi.X_unlabeled.shape
    ((10, 64), (347, 64))
    >>> fsm = FSManifold(m=20).fit(semi.X, semi.y, X_unlabeled=semi.X_unlabeled)
    >>> fsm.converged_, len(fsm.selected_features_)
    (True, 20)
    >>> bool(fsm.upper_bound_ - fsm.lower_bound_ <= 1e-3 * fsm.upper_bound_)
    True
    >>> round(fsm.score(semi.X_test, semi.y_test), 2)
    0.89
    """

    display_name = "FS-Manifold"
    record_keys = frozenset({"gap", "level", "manifold_ratio", "p", "p_top", "rho", "tau",
                             "kernel_route", "graph_route", "graph_recall"})
    knowledge = frozenset({"exclude", "always_include"})
    sparsity_param = "m"
    multiclass = "native"
    has_bounds = True
    _fit_params = ("X_unlabeled",)
    param_specs = (
        ParamSpec("m", "m (features)", 20, "int", 1, 100000, log=True,
                  help="number of features selected", bound="n_features"),
        ParamSpec("tau", "τ (manifold weight)", 0.5, "float", 0.0, 1.0,
                  help="0: supervised; 'auto': cross-validated",
                  extra={"allow_strings": ("auto",), "options": TAU_GRID + ("auto",),
                         "word_label": "cross-validated (slow)"}),
        ParamSpec("rho", "ρ", "auto", "float", 1e-6, 1e9, log=True,
                  help="manifold regularisation; 'auto' (default) balances the kernel traces "
                       "so that τ moves the model (ρ = 10 leaves the manifold term ~1e-6 of "
                       "the feature term on digits: τ then changes nothing)",
                  extra={"allow_strings": ("auto",),
                         "options": (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, "auto"),
                         "word_label": "auto (balanced traces)"}),
        ParamSpec("C", "C", 1.0, "float", 1e-4, 1e4, log=True,
                  help="SVM trade-off; 'cv': cross-validated", extra=cv_choice()),
        ParamSpec("n_neighbors", "neighbours", 20, "int", 1, 500, live=False),
        ParamSpec("metric", "graph metric", "cosine", "choice",
                  choices=("cosine", "euclidean"), live=False),
        ParamSpec("graph_weights", "graph weights", "binary", "choice",
                  choices=("binary", "heat"), live=False),
        ParamSpec("laplacian", "Laplacian", "unnormalized", "choice",
                  choices=("unnormalized", "normalized")),
        ParamSpec("graph", "neighbour search", "auto", "choice", choices=GRAPHS, live=False,
                  help="auto: exact up to 10,000 rows, else approximate (recall reported)"),
        ParamSpec("kernel", "kernel route", "auto", "choice", choices=ROUTES, live=False,
                  help="auto: through the smaller of the n × n and d × d matrices"),
        ParamSpec("feature_scaling", "feature scaling", "auto", "choice",
                  choices=("auto", None, "rms"), nullable=True,
                  help="auto: unit-RMS columns for features in different units"),
        ParamSpec("level", "level λ", 0.9, "float", 0.01, 0.99, live=False),
        ParamSpec("max_iter", "max iterations", 100, "int", 1, 10000, log=True, live=False),
        ParamSpec("tol", "gap tolerance", 1e-3, "float", 0.0, 1.0, live=False),
    )

    def __init__(self, m: int = 20, tau: float | str = 0.5, rho: float | str = "auto",
                 C: float = 1.0, n_neighbors: int = 20, metric: str = "cosine",
                 graph_weights: str = "binary", laplacian: str = "unnormalized",
                 level: float = 0.9, max_iter: int = 100, tol: float = 1e-3,
                 feature_scaling: str | None = "auto", Cs=None, cv: int = 3,
                 graph: str = "auto", kernel: str = "auto",
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.m = m
        self.Cs = Cs
        self.cv = cv
        self.tau = tau
        self.rho = rho
        self.C = C
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.graph_weights = graph_weights
        self.laplacian = laplacian
        self.level = level
        self.max_iter = max_iter
        self.tol = tol
        self.feature_scaling = feature_scaling
        self.graph = graph
        self.kernel = kernel

    def _check_params(self) -> None:
        if self.tau != "auto" and float(self.tau) >= 1.0:
            raise ValueError("tau=1 removes the feature term: the kernel no longer depends on "
                             "p, so no feature can be selected (use tau < 1)")

    # ------------------------------------------------------------------ fit
    def _fit(self, X, y, recorder: Recorder, X_unlabeled=None, **_):
        d = X.shape[1]
        m = int(self.m)
        if m > d:
            raise ValueError(f"m={m} is larger than the number of features (n_features={d})")
        if X_unlabeled is not None:
            X_unlabeled = as_matrix(X_unlabeled, what="X_unlabeled")
            if X_unlabeled.shape[1] != d:
                raise ValueError(f"X_unlabeled has {X_unlabeled.shape[1]} features, X has {d}")
        Y = self._label_matrix(y)
        know = self._known()
        self._fixed = np.zeros(0, np.int64) if know is None else know.pinned
        unit = self._unit(X, X_unlabeled)
        if unit is not None:
            X = _times_columns(X, unit)
            X_unlabeled = None if X_unlabeled is None else _times_columns(X_unlabeled, unit)
        self.n_unlabeled_ = 0 if X_unlabeled is None else int(X_unlabeled.shape[0])
        start = getattr(self, "_path_start", None)  # the previous C's fit on these rows
        self._passes = 0
        if start is not None:
            mk, self._routes = start["kernel"], start["routes"]
        else:
            mk, found = self._manifold(X, X_unlabeled, recorder)
            self._routes = {"kernel_route": mk.route, "graph_route": found.route,
                            "graph_recall": float(found.recall)}
        self.kernel_route_ = self._routes["kernel_route"]
        self.graph_route_ = self._routes["graph_route"]
        self.graph_recall_ = self._routes["graph_recall"]
        self.graph_components_ = mk.components
        self.ridge_ = mk.ridge
        self._mk = mk
        rho = self._rho(X, mk.H, m)
        self.rho_ = rho
        tau = self.tau
        if tau == "auto":
            tau = self._choose_tau(X, y, Y, mk.H, rho, m)
        self.tau_ = float(tau)
        p0 = start["p"] if start is not None and start["tau"] == self.tau_ else None
        self._level_method(X, Y, mk.H, self.tau_, rho, m, recorder, p0=p0, fixed=self._fixed)
        self._final_svm(X, y)
        self.n_passes_ = int(self._passes)
        if unit is not None:  # the weights of the raw features
            self.coef_ = self.coef_ * unit

    def _manifold(self, X, X_unlabeled, recorder: Recorder):
        """The graph over labelled and unlabelled rows and the manifold kernel H, each long
        stage reported to the recorder (``progress``) and stopped on request
        (:class:`~explorer.methods.records.FitStopped`: no model yet)."""
        n = X.shape[0] + self.n_unlabeled_
        route = kernel_route(n, X.shape[1], self.kernel)  # refuses a matrix too large first
        X_all = X if X_unlabeled is None else (
            sp.vstack([sp.csr_matrix(X), sp.csr_matrix(X_unlabeled)], format="csr")
            if sp.issparse(X) or sp.issparse(X_unlabeled) else np.vstack([X, X_unlabeled]))
        search = "finding the nearest neighbours"

        def told(stage):
            return lambda fraction: recorder.progress(stage, fraction)

        try:
            recorder.progress(search, 0.0)
            found = nearest_neighbours(X_all, self.n_neighbors, self.metric, self.graph,
                                       progress=told(search))
            recorder.progress(search, 1.0)
            if recorder.interrupted():
                raise GraphStopped
            L = laplacian(adjacency(found, self.graph_weights), self.laplacian)
            mk = manifold_kernel(X_all, X.shape[0], L, route=route,
                                 progress=told("building the manifold kernel"))
        except GraphStopped:
            raise FitStopped("FS-Manifold was stopped while building its graph and kernel, "
                             "before its first model") from None
        self._passes += 2 * X_all.shape[0]  # the graph's and the kernel's products with X_all
        return mk, found

    def _unit(self, X, X_unlabeled=None):
        """Per-feature factors that give the columns unit RMS (``feature_scaling``: "rms", or
        "auto" when their scales spread over 100×, as FGM's); None to fit the raw columns.
        The graph, the manifold kernel, the selection and the final SVM all see the scaled
        columns: on pd-speech's raw ones (1e-21 to 4e10) p stayed at its start and the first
        m features were chosen (test accuracy 0.75, the majority's; 0.84 scaled)."""
        if self.feature_scaling is None:
            return None
        parts = [X] if X_unlabeled is None else [X, X_unlabeled]
        squares = sum(_column_squares(part) for part in parts)
        rows = sum(part.shape[0] for part in parts)
        if self.feature_scaling == "auto" and not scales_spread(np.sqrt(squares), rows):
            return None
        rms = np.sqrt(squares / rows)
        return np.where(negligible(rms), 1.0, 1.0 / np.maximum(rms, 1e-300))

    def _path_state(self):
        """The graph and manifold kernel (C plays no part in them) and the optimal p, the
        next C's first point (:func:`~explorer.optim.level.level_method`'s ``p0``)."""
        return {"kernel": self._mk, "routes": dict(self._routes), "p": self.p_.copy(),
                "tau": self.tau_}

    def _label_matrix(self, y):
        if np.ndim(y) == 1 and set(np.unique(y)) <= {-1.0, 1.0}:
            return y[:, None].astype(np.float64)
        classes = self.classes_
        return np.where(np.asarray(y)[:, None] == classes[None, :], 1.0, -1.0)

    def _rho(self, X, H, m):
        if self.rho != "auto":
            return float(self.rho)
        p0 = np.full(X.shape[1], m / X.shape[1])
        self._passes += X.shape[0]
        feature_trace = float(_weighted_gram(X, p0).trace())
        return max(float(np.trace(H)), 1e-300) / max(feature_trace, 1e-300)

    # ------------------------------------------------------------------ Alg. 2
    def _level_method(self, X, Y, H, tau, rho, m, recorder, p0=None, fixed=()):
        """Alg. 2 by :func:`explorer.optim.level.level_method`; the oracle at p solves one SVM
        dual per class on the kernel (1−τ)²K_p + (τ²/ρ)H and returns its cut. The ``fixed``
        features (pinned by the user) are held at p_j = 1 and always selected."""
        fixed = np.asarray(fixed, dtype=np.int64)
        a2, b2 = (1.0 - tau) ** 2, tau**2 / rho

        def oracle(p):
            self._passes = getattr(self, "_passes", 0) + X.shape[0] + Y.shape[1]
            K_p = _weighted_gram(X, p)
            M = a2 * K_p + b2 * H
            value, c, g = 0.0, 0.0, np.zeros(X.shape[1])
            for k in range(Y.shape[1]):
                yk = Y[:, k]
                alpha = svm_dual(M, yk, float(self.C))
                s = alpha * yk
                v = xts(X, s)                      # X_lᵀ(α∘y): the shared scorer
                g_k = 0.5 * a2 * v * v
                c_k = float(alpha.sum()) - 0.5 * b2 * float(s @ H @ s)
                value += c_k - float(g_k @ p)
                c += c_k
                g += g_k
            ratio = b2 * float(np.trace(H)) / max(a2 * float(K_p.trace()), 1e-300) \
                if a2 > 0 else np.inf
            return value, c, g, ratio

        def on_step(step: LevelStep) -> bool:
            self._store(step.best_p, m, fixed)
            top = _top(step.best_p, m, fixed)
            # φ(p) ≥ 0 (the SVM dual is 0 at α = 0): the cut model's minimum, negative on
            # the first cuts, is reported no lower than that floor (a valid, tighter bound)
            lower = max(step.lower, 0.0)
            return recorder.emit(
                objective=step.value, n_selected=m, selected=np.sort(top), inner_steps=1,
                lower=lower, upper=step.upper,
                inner_measure=min(step.measure, relative_gap(step.upper, lower)),
                info={"gap": step.upper - lower, "manifold_ratio": step.extra,
                      "tau": tau, "rho": rho, "p_top": step.best_p[top].copy(),
                      **getattr(self, "_routes", {}),
                      "weights": step.best_p[np.sort(top)], "level": step.level,
                      "p": step.best_p.copy() if step.best_p.size <= P_RECORDED else None})

        result = level_method(oracle, X.shape[1], m, level=float(self.level),
                              stopping=Stopping(float(self.tol), int(self.max_iter)),
                              on_step=on_step, p0=p0, fixed=fixed)
        self.p_ = result.best_p
        self.lower_bound_, self.upper_bound_ = max(result.lower, 0.0), result.upper
        self.converged_ = bool(result.converged)
        if not result.converged and not recorder.should_stop:
            gap = (result.upper - result.lower) / max(abs(result.upper), 1e-300)
            recorder.warn(f"FS-Manifold's level method used its max_iter={int(self.max_iter)} "
                          f"iterations and stopped at a relative gap of {gap:.2g} (asked: "
                          f"{float(self.tol):g}): the selection is the best p so far; raise "
                          "max_iter to certify it.")

    def _store(self, p, m, fixed=()):
        top = _top(p, m, fixed)
        support = np.zeros(p.size, dtype=bool)
        support[top] = True
        self.support_ = support
        self.p_ = p
        # a usable model at every iteration (the final SVM replaces these weights)
        if not hasattr(self, "coef_") or np.shape(self.coef_)[-1] != p.size:
            self.coef_ = np.zeros(p.size)
            self.intercept_ = 0.0

    # ------------------------------------------------------------------ τ by CV
    def _choose_tau(self, X, y, Y, H, rho, m):
        from sklearn.model_selection import StratifiedKFold

        labels = np.asarray(y)
        _, counts = np.unique(labels, return_counts=True)
        folds = int(min(5, counts.min()))
        if folds < 2:
            self.tau_scores_ = {}
            return 0.0
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
        scores = {}
        for tau in TAU_GRID:
            correct = 0
            for train, test in splitter.split(np.zeros(len(labels)), labels):
                probe = FSManifold(**{**self.get_params(), "tau": tau, "rho": rho,
                                      "max_iter": min(int(self.max_iter), 30)})
                probe.classes_ = self.classes_
                probe.n_features_in_ = self.n_features_in_
                Ht = H[np.ix_(train, train)]
                C = np.eye(train.size) - 1.0 / train.size
                probe._level_method(X[train], Y[train], C @ Ht @ C, tau, rho, m,
                                    Recorder(None), fixed=self._fixed)
                self._passes += probe._passes
                probe._final_svm(X[train], labels[train])
                scores_ = probe._decision_binary(X[test])
                if scores_.ndim == 1:  # binary: labels are ±1 here
                    predicted = np.where(scores_ > 0, 1.0, -1.0)
                else:
                    predicted = np.unique(labels)[np.argmax(scores_, axis=1)]
                correct += int(np.sum(predicted == labels[test]))
            scores[tau] = correct / len(labels)
        self.tau_scores_ = scores
        best = max(scores.values())
        return min(t for t, s in scores.items() if s == best)  # ties: the smaller τ

    # ------------------------------------------------------------------ prediction
    def _final_svm(self, X, y):
        """The paper's final linear SVM on the selected features, its iterations bounded
        (``MAX_SVM_ITER``: on pd-speech's raw columns, 1e-3 to 1e10, libsvm ran for hours); a
        fit that hits the bound says so."""
        cols = np.flatnonzero(self.support_)
        Xs = X[:, cols]
        labels = np.asarray(y)
        classes = np.unique(labels)
        targets = [labels == classes[1]] if len(classes) == 2 else \
            [labels == c for c in classes]
        coefs, intercepts = [], []
        for target in targets:
            svm = SVC(kernel="linear", C=float(self.C), max_iter=MAX_SVM_ITER)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                svm.fit(Xs, np.where(target, 1, -1))
            if np.any(np.asarray(svm.n_iter_) >= MAX_SVM_ITER):
                warnings.warn(f"FS-Manifold's final SVM stopped at {MAX_SVM_ITER:,} iterations "
                              "before converging", ConvergenceWarning, stacklevel=3)
            w = np.zeros(X.shape[1])
            w[cols] = np.asarray(svm.coef_.toarray() if sp.issparse(svm.coef_) else svm.coef_
                                 ).ravel()
            coefs.append(w)
            intercepts.append(float(svm.intercept_[0]))
        if len(classes) == 2:
            self.coef_, self.intercept_ = coefs[0], intercepts[0]
        else:
            self.coef_, self.intercept_ = np.vstack(coefs), np.array(intercepts)


    @classmethod
    def sweep_values(cls, X, y, n_points: int = 10):
        d = X.shape[1]
        return sorted({int(v) for v in np.geomspace(1, max(1, d // 2), n_points)})


def _top(p: np.ndarray, m: int, fixed) -> np.ndarray:
    """The m features of largest p, the ``fixed`` ones first (ties: the earlier feature)."""
    first = np.zeros(p.size, dtype=bool)
    first[np.asarray(fixed, dtype=np.int64)] = True
    return np.lexsort((np.arange(p.size), -p, ~first))[:m]


def _weighted_gram(X, p) -> np.ndarray:
    """X diag(p) Xᵀ (dense l × l), sparse-safe."""
    if sp.issparse(X):
        return np.asarray((X.multiply(p[None, :]) @ X.T).toarray())
    return (X * p[None, :]) @ X.T


def _column_squares(X) -> np.ndarray:
    """Σ_i x_ij² per column, without a copy of a dense X in another format."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=0)).ravel()
    X = np.asarray(X)
    return np.einsum("ij,ij->j", X, X)


def _times_columns(X, unit: np.ndarray):
    return sp.csr_matrix(X @ sp.diags(unit)) if sp.issparse(X) else np.asarray(X) * unit
