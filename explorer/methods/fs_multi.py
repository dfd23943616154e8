"""FS-multi — feature selection for multivariate performance measures (Mao & Tsang, ICDM 2011;
the math is rebuilt in shared/METHODS.md because the paper's text is a garbled extraction).

Problem (eq. 3): min_{d∈D} min_{w,ξ≥0} ½ Σ_j w_j²/d_j + Cξ subject to, for every labeling
ȳ ≠ y, (1/n) Σ_i (y_i − ȳ_i) wᵀx_i ≥ Δ(y, ȳ) − ξ, with D = {d ∈ [0,1]^m : Σ d_j = B} and Δ one
of 1−F1, 1−PRBEP, 1−Rec@k or the Hamming loss.

Two layers of cutting planes:

* outer — FGM's loop (:func:`explorer.optim.cutting_plane`, the same code): score every
  feature by (Xᵀs)² with s_i = (1/n) Σ_k α_k (y_i − ȳᵏ_i) and add the top B as a block;
* inner — the bundle method on the primal ½(Σ_t‖w_t‖)² + C·R_emp(w) over the blocks
  (:class:`explorer.engines.fs_multi.BundleMaster`), each step adding the most violated labeling
  (Joachims' search, sorted: O(n log n)) as a cut, solving the cut problem through its small
  dual (13) with Clarabel, and stopping on a certified gap: best true objective minus the cut
  model's minimum ≤ ``inner_tol`` × (J(0) − model minimum), i.e. relative to the progress over
  the empty model — relative to the objective itself, which C·Δ dominates, the bundle would
  stop before a new block gets any weight. Cuts are kept across outer iterations; one whose
  weight stayed zero for 25 cut problems is dropped.
  The outer loop's ``tol`` is measured the same way.

Intercept: the paper has none. ``fit_intercept=True`` adds an unpenalised b to the scores
(f = wᵀx + b, |b| ≤ ``intercept_bound``) for F1 and Hamming, which lets the model trade
precision for recall by shifting its threshold: with non-negative features such as text and
no bias, w = 0 stays optimal for F1 until ≈ 24 features are candidates, because every feature
pushes all scores up. PRBEP and Rec@k are ranking measures (their labelings have a fixed number
of predicted positives): a common shift changes no ranking, and for Rec@k with k ≠ #positives it
would make the risk unbounded below, so they never use b. Features that are on everywhere
(pixels, counts) give the same shift without b, so for the ranking measures the cut
coefficients y − ȳ are centred (Σ_i = 0; a no-op for PRBEP, where k = #positives). Their
``decision_function`` is a ranking score and ``predict`` thresholds it at 0.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._params import ParamSpec, cv_choice
from ..engines.fs_multi import BundleMaster, StructuredRisk, default_k
from ..features import LinearSpace
from ..optim import OuterStep, Stopping, WarmStart, cutting_plane
from ._cutting import (
    GROWN,
    block_record_info,
    emit_outer_step,
    k_candidates,
    k_sweep,
    linear_coef,
    outer_stopping,
)
from .base import BaseSelector, Recorder, register
from .records import REFINE_KEY

MEASURE_CHOICES = ("f1", "prbep", "rec@k", "hamming")


@register("fs-multi")
class FSMulti(BaseSelector):
    """Feature selection that optimises F1, PRBEP, Rec@k (or the error rate) directly.

    Parameters
    ----------
    B : int
        Features per generated block.
    C : float or None
        Loss trade-off; None is the paper's C = 0.1·n.
    measure : {"f1", "prbep", "rec@k", "hamming"}
        The multivariate measure whose loss Δ is optimised.
    k : int or None
        The number of features wanted (None: the paper's count at B). The outer loop then
        ignores ``tol`` and runs until k features hold a weight, for up to max(``max_outer``,
        ⌈k/B⌉ + 2) iterations; a path that stops short is completed by the features of
        largest worst-case score (Xᵀs)² outside it (the next block Algorithm 1 would add). It
        is then cut to the k features of largest |w_j|/λ_j and the master is solved again on
        them as one block (as FGM(k)). With ``groups``, k counts groups (the candidates) and
        the cut keeps the k of largest ‖w_g‖.
    rec_k : int or None
        Rec@k's k; None is twice the number of positives (the paper's Rec@2p).
    max_outer, tol : int, float
        Outer cutting-plane iterations and relative objective change that stops them.
    inner_tol : float
        Relative certified gap that stops the bundle method.
    max_inner : int
        Bundle steps per outer iteration at most.
    fit_intercept : bool
        Unpenalised threshold b (see the module docstring); |b| ≤ ``intercept_bound``.
    feature_scaling : {"auto", None, "norm", "rms"}
        λ_j per feature, as FGM's (:class:`~explorer.features.LinearSpace`): "norm" 1/‖f_j‖,
        "rms" 1/(‖f_j‖/√n); "auto" (default): "rms" when the columns' scales spread over more
        than 100×, else None (the paper's standardised data as in the paper). Unscaled,
        pd-speech's columns (1e-21 to 4e10) left FS-F1 at k = 10 with a cross-validated F1
        of 0.36 (0.64 with "auto"); on grants "auto" costs 0.025 of F1.
    groups : array of ids or list of index arrays, optional
        Select groups instead of single features (as FGM).
    warm_start : bool
        Start the next fit from this fit's selected features.
    intercept_bound : float
        The box |b| ≤ ``intercept_bound`` on the unpenalised threshold (F1 and Hamming).
    Cs : sequence of float, optional
        The grid of ``C="cv"``.
    cv : int
        Folds of ``C="cv"`` (stratified).
    always_include, exclude, penalty_factor, positive
        What the user knows, keyword-only (:mod:`explorer.methods.knowledge`): features
        always in, never in, a factor per feature, non-negative weights. FS-multi honours
        ``always_include``, ``exclude``, ``penalty_factor``; it refuses the others with a
        message that names the methods that can.

    Attributes
    ----------
    selected_features_ : ndarray of int
        Indices of the selected features.
    coef_, intercept_ : ndarray, float
        The linear model.
    upper_bound_ : float
        The best objective of the outer loop.
    history_ : list of IterationRecord
        One record per outer iteration; ``info["violated"]`` lists the most violated labelings.

    See Also
    --------
    FGM : the same outer loop for the hinge and logistic losses.

    Notes
    -----
    Multi-class targets are handled one-vs-rest (macro measures in :mod:`explorer.metrics`).

    References
    ----------
    .. [1] Q. Mao and I. W. Tsang, "Optimizing performance measures for feature selection",
       IEEE ICDM, 2011.

    Examples
    --------
    Five features chosen for F1:

    >>> from explorer import FSMulti, load
    >>> from explorer.metrics import f1
    >>> data = load("breast-cancer").split(test_size=0.3, seed=0)
    >>> fsm = FSMulti(measure="f1", k=5).fit(data.X, data.y)
    >>> fsm.selected_features_.tolist()
    [7, 9, 13, 18, 26]
    >>> round(f1(data.y_test, fsm.predict(data.X_test)), 2)
    0.93
    """

    display_name = "FS-multi"
    record_keys = frozenset({  # its records' info keys
        "B", "K", "T", "active_blocks", "added", "added_groups", "before", "block",
        "block_features", "block_names", "block_norms", "block_scores", "bundle_gap",
        "groups_kept", "groups_on_path", "groups_visited", "inner_gaps",
        "inner_objective", "intercept_at_bound", "measure", "n_blocks", "new_features",
        "passes", "pinned", "pruned", "refine", "runner_scores", "runners_up",
        "scaling", "stop_reason", "unused", "violated"
    })
    sparsity_param = "k"
    has_bounds = True
    has_inner_trace = True
    supports_warm_start = True
    _fit_params = ("groups",)
    knowledge = frozenset({"exclude", "always_include", "penalty_factor"})
    param_specs = (
        ParamSpec("B", "B (features per block)", 10, "int", 1, 10**7, log=True,
                  help="features added per cutting-plane iteration", bound="n_features"),
        ParamSpec("C", "C", None, "float", 1e-3, 1e7, log=True, nullable=True,
                  help="None: the paper's C = 0.1·n; 'cv': cross-validated",
                  extra=cv_choice()),
        ParamSpec("measure", "measure", "f1", "choice", choices=MEASURE_CHOICES,
                  help="the multivariate measure to optimise"),
        ParamSpec("k", "k (features kept)", None, "int", 1, 10**7, log=True, nullable=True,
                  bound="n_features", auto="the paper's count at B",
                  help="exactly k features: the path grown to k, cut by |w|, re-solved"),
        ParamSpec("rec_k", "k of Rec@k", None, "int", 1, 10**7, log=True, nullable=True,
                  help="None: twice the number of positives", bound="n_samples",
                  when={"measure": ("rec@k",)}),
        ParamSpec("max_outer", "max outer iterations", 15, "int", 1, 200),
        ParamSpec("tol", "outer tolerance", 1e-2, "float", 0.0, 1.0, live=False),
        ParamSpec("inner_tol", "bundle gap tolerance", 1e-3, "float", 0.0, 1.0, live=False),
        ParamSpec("max_inner", "max bundle steps", 200, "int", 1, 10000, log=True, live=False),
        ParamSpec("fit_intercept", "intercept", True, "bool",
                  help="unpenalised threshold (not in the paper)"),
        ParamSpec("intercept_bound", "intercept bound", 1e3, "float", 1e-3, 1e9, log=True,
                  live=False, when={"fit_intercept": (True,)}),
        ParamSpec("feature_scaling", "feature scaling", "auto", "choice",
                  choices=("auto", None, "norm", "rms"), nullable=True,
                  help="auto: unit-RMS columns for features in different units; "
                       "norm: λ_j = 1/‖f_j‖; rms: λ_j = √n/‖f_j‖"),
        ParamSpec("warm_start", "warm start", False, "bool", live=False),
    )

    def __init__(self, B: int = 10, C: float | None = None, measure: str = "f1",
                 k: int | None = None, max_outer: int = 15, tol: float = 1e-2,
                 inner_tol: float = 1e-3, max_inner: int = 200, fit_intercept: bool = True,
                 intercept_bound: float = 1e3, feature_scaling: str | None = "auto", groups=None,
                 warm_start: bool = False, rec_k: int | None = None, Cs=None, cv: int = 3,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.B = B
        self.C = C
        self.measure = measure
        self.k = k
        self.max_outer = max_outer
        self.tol = tol
        self.inner_tol = inner_tol
        self.max_inner = max_inner
        self.fit_intercept = fit_intercept
        self.intercept_bound = intercept_bound
        self.feature_scaling = feature_scaling
        self.groups = groups
        self.warm_start = warm_start
        self.rec_k = rec_k
        self.Cs = Cs
        self.cv = cv

    sweep_values = classmethod(k_sweep)

    def _fit(self, X, y, recorder: Recorder, groups=None, **_):
        n = X.shape[0]
        groups = self.groups if groups is None else groups
        space = LinearSpace(X, groups=groups, scaling=self.feature_scaling)
        know = self._known()
        if know is not None:
            space.fix(know.pinned, know.factor)
        self.space_ = space
        C = 0.1 * n if self.C is None else float(self.C)
        k = self.rec_k
        if self.measure == "rec@k" and k is None:
            k = default_k(y)
        self.C_, self.rec_k_ = C, k
        if self.measure == "rec@k" and k >= n:
            recorder.warn(f"FS-multi: Rec@k with k = {k} ≥ the {n} rows recalls every "
                          "positive whatever the scores: the measure cannot choose features "
                          "(set rec_k below the number of rows, or another measure)")
        wanted = None if self.k is None else int(self.k)
        grown = GROWN.format(target="k", unit="features" if groups is None else "groups")
        stopping = outer_stopping(self.max_outer, self.tol, int(self.B), wanted, grown,
                                  progress_scale=True)
        density = X.nnz / max(1, X.shape[0] * X.shape[1]) if sp.issparse(X) else 1.0
        # ranking measures fix the number of predicted positives: a common shift b changes no
        # ranking, and with k ≠ #positives it would drive the structural risk to −∞
        use_b = self.fit_intercept and self.measure in ("f1", "hamming")
        def new_master():
            risk = StructuredRisk(y, self.measure, C, k=k, fit_intercept=use_b,
                                  intercept_bound=self.intercept_bound)
            return BundleMaster(risk, n_samples=n, sparse_cache=sp.issparse(X) and density < 0.1,
                                stopping=Stopping(self.inner_tol, int(self.max_inner)),
                                interrupt=recorder.interrupted)

        master = new_master()
        self._master = master
        initial = self._warm_blocks()
        previously = set()

        def on_step(step: OuterStep) -> bool:
            self._update_model(master)
            sol = step.solution
            info = block_record_info(space, step, previously, int(self.B))
            info.update({key: sol.info[key] for key in
                         ("inner_gaps", "K", "bundle_gap", "intercept_at_bound", "violated")})
            info["T"] = info["n_blocks"]
            info["measure"] = self.measure
            info["weights"] = self.coef_[self.support_]
            return emit_outer_step(recorder, self, step, info, sol.info.get("inner_measure"))

        result = cutting_plane(space, master, B=int(self.B), stopping=stopping,
                               on_step=on_step, initial_blocks=initial, context=int(self.B))
        self._update_model(master)
        if wanted is not None and not recorder.should_stop:
            self._cut_to_k(space, new_master(), result, wanted, recorder)
        self.stop_reason_ = result.stop_reason
        if not self.support_.any():
            self.stop_reason_ += "; the empty model is optimal over the generated blocks"
        self.lower_bound_, self.upper_bound_ = result.lower, result.upper
        self.n_outer_ = int(result.n_outer)
        self.n_passes_ = int(space.passes)
        self._warm = WarmStart(key=self._warm_key(n_features=self.n_features_in_),
                               support=np.flatnonzero(self.support_))

    @property
    def k_(self) -> int:
        """The number of features the model holds: ``k``, or the paper's count at B when
        ``k`` is None (what the app's disabled k slider shows)."""
        return self.n_selected_

    def _cut_to_k(self, space, master: BundleMaster, result, k: int,
                  recorder: Recorder) -> None:
        """Exactly k features (k groups with ``groups``): the path's of largest ‖w‖,
        completed when it is short by the best worst-case scores outside it; the master solved
        again on them (one block). :func:`~explorer.methods._cutting.k_candidates`."""
        old_master = self._master
        kept, before, added = k_candidates(space, old_master, result.solution, k)
        was = np.flatnonzero(self.support_)
        master.initial()
        master.add_block(space.columns(kept))
        sol = master.solve()
        polished = getattr(master, "polish", lambda: None)()
        sol = polished if polished is not None else sol
        self._update_model(master)
        chosen = space.input_features(kept)
        # the master's optimum on the k may leave some of them (or all: the empty model
        # wins at this C) without weight: those are not selected (a selected feature the model
        # does not use was the k = 1 case's weight of 0) unless the user pinned them
        features = chosen[(self.coef_[chosen] != 0) | np.isin(chosen, space.fixed)]
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[features] = True
        self._master = master
        unit = "features" if space.groups is None else "groups"
        unused = np.setdiff1d(chosen, features)
        if unused.size:
            recorder.warn(f"FS-multi ({self.measure}): of the k = {k} {unit} chosen, the "
                          f"restricted master puts no weight on {unused.size} at C = "
                          f"{self.C_:g} (the measure gains nothing from them there): the "
                          f"model holds {features.size}; a larger C may use them")
        recorder.emit(objective=sol.objective, n_selected=int(features.size),
                      selected=features, inner_steps=sol.inner_steps,
                      inner_measure=sol.info.get("inner_measure"),
                      info={REFINE_KEY: "paper", "before": was,
                            "added": space.input_features(added),
                            "pruned": np.setdiff1d(was, features), "measure": self.measure,
                            "unused": unused,
                            **({} if space.groups is None else
                               {"groups_kept": kept, "groups_on_path": int(before.size),
                                "added_groups": added}),
                            "stop_reason": f"cut: kept {kept.size} of {before.size} {unit} "
                                           "by ‖w‖, solved again",
                            "weights": self.coef_[features]})

    def _update_model(self, master: BundleMaster) -> None:
        self.coef_ = linear_coef(master.weights_by_column(), self.n_features_in_)
        self.intercept_ = float(master.intercept)
        self.support_ = self.coef_ != 0
        self.support_[self.space_.fixed] = True  # pinned, even at weight 0

    def _warm_blocks(self):
        state = self._warm_for(n_features=self.n_features_in_)
        if state is None or self.groups is not None:
            return []
        support = state.support
        B = int(self.B)
        return [support[i:i + B] for i in range(0, support.size, B)][: int(self.max_outer) - 1]

