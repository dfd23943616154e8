"""FGM — the feature generating machine (Tan, Tsang & Wang, JMLR; PROX-FGM / PROX-SLR).

Problem (eq. 5/6, relaxed to the convex hull of D): ``min_{d∈D} min_w ½‖w‖² + C Σ l(y_i
wᵀ(x_i ⊙ λ ⊙ √d))`` with ``D = {d ∈ [0,1]^m : Σ d_j ≤ B}`` over features or groups. Solved by the
cutting-plane Alg. 1 (:func:`explorer.optim.cutting_plane`): the worst-case analysis (Alg. 2)
scores every candidate by ``c = λ²‖X_Gᵀ(α⊙y)‖²`` and adds the top B as a block d_T; the
restricted master is solved in the primal (Theorem 4, eq. 31)

    min_ω ½(Σ_t ‖ω_t‖)² + C Σ_i l(y_i (Σ_t ω_tᵀ x_it + b))

by APG with the closed-form Moreau projection (Alg. 3/4), warm started between outer
iterations; α is recovered from the margins (squared hinge α = Cξ, logistic α = C e^ξ/(1+e^ξ)).

Bounds (Theorem 2), reported per outer iteration in objective units: ``upper`` is the best
primal objective so far (a feasible point of the full problem), ``lower`` the best dual value
``−C Σ l*(−α_i/C) − ½ Σ_{top B} c_j(α)`` — in the paper's sign convention θ = −objective these
are β_T = −upper and φ_T = −lower; both are monotone.

The paper has no bias; ``fit_intercept=True`` adds an unpenalised intercept that is never a
candidate (the empty model is then the intercept-only model, and the first block is scored
against its residual instead of the paper's α = 1).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._params import ParamSpec, cv_choice
from ..engines.fgm import OVERSELECT, Candidates, Fitted, L12Master, Restricted, refine_path
from ..features import BinnedSpace, Columns, LinearSpace, Poly2Space
from ..kernels import take_columns
from ..kernels.chunked import interruptible
from ..optim import LOSSES, OuterStep, Stopping, WarmStart, cutting_plane
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


@register("fgm")
class FGM(BaseSelector):
    """Feature generating machine: B features (or groups) per cutting-plane iteration.

    Parameters
    ----------
    B : int or None
        Candidates per generated block (≈ features wanted per iteration; B ≤ #selected ≤ T·B).
        None: 10 (the paper's scale); with ``k``, ⌈k/5⌉ for the paper's algorithm (a path of
        several cutting-plane steps: one block of k is marginal screening, 3–9 points behind
        on grants at k ≤ 10) and k with ``refine="auto"`` (level with k/5 on the real sets
        and faster; ``benchmarks/bench_real.py``). ``B_`` is the value used.
    C : float or "cv"
        Loss trade-off (objective above). "cv": chosen by ``cv``-fold cross-validation
        over ``Cs`` along a warm-started path (:mod:`explorer.methods._cv`); ``C_`` is the
        chosen value, ``cv_scores_`` the held-out scores.
    loss : {"auto", "squared_hinge", "logistic"}
        PROX-FGM (squared hinge) or PROX-SLR (logistic). "auto" (default): the squared hinge
        of the paper's algorithm, the logistic loss with ``refine="auto"`` — the likelihood
        abess's best subset minimises: on the real sets of ``benchmarks/bench_real.py`` the
        refinement searched on the squared hinge trailed abess by 0.1–0.3 points of accuracy
        on fine-foods and 0.5–1.1 on grants, on the logistic loss it is level. ``loss_`` is
        the loss used.
    max_outer : int
        T_max, the most outer iterations (paper: 15).
    tol : float
        Stop when the master objective changes by at most this relative amount (ε_c = 1e-2).
    inner_tol : float
        Accuracy of the restricted master: APG stops on its certified duality gap relative
        to the objective, ``inner_tol`` with several blocks and ``inner_tol²`` with one (where
        it bounds the coefficients' relative error by ``inner_tol``). Masters of intermediate
        outer iterations, which only choose the next block, stop at a 1e-2 gap; the last one
        is solved to this accuracy (the paper stops APG on a 1e-4 objective change).
    max_inner : int
        Cap on APG iterations per outer iteration.
    fit_intercept : bool
        Add an unpenalised intercept (not in the paper; see the module docstring).
    groups : array of group ids, or list of index arrays, optional
        Group selection (eq. 12): non-overlapping ids; overlapping index sets (columns are
        duplicated and mapped back onto the original features); tree-structured sets are
        searched with the pruning of Proposition 2. Can also be given to ``fit``.
    group_weights : array, optional
        λ_g per group.
    feature_scaling : {"auto", None, "norm", "rms"}
        λ_j = 1/‖f_j‖ per feature (eq. 4); "rms": λ_j = √n/‖f_j‖ (unit root-mean-square
        columns); "auto" (default): "rms" when the columns' scales spread over more than 100×
        (features in different units: on pd-speech FGM is then 100–600× faster and 2–6
        points more accurate at k = 20–50; level with abess on fine-foods' tf-idf words),
        none otherwise — the papers' standardised designs are fitted as in the paper.
    feature_map : {None, "poly2", "binned"}
        Nonlinear selection over explicit maps: degree-2 polynomial columns scored implicitly
        (``poly_gamma``, ``poly_r``), or binned additive responses (``n_bins``) selected per
        input feature.
    warm_start : bool
        Refit from the previous solution: its selected candidates become the first blocks
        (re-chunked by the new B) with their weights as the starting point.
    refine : {None, "auto"}
        None: the paper's algorithm. "auto": a best-subset refinement at the same number of
        features — the ℓ1² path is grown with blocks of ⌈1.5·B⌉, the k = round(selected·B/⌈1.5B⌉)
        features that backward elimination keeps (Optimal Brain Surgeon's w_q²/(2[H⁻¹]_qq):
        each removal lets the others adjust) and the restricted ℓ2 model is refit on them
        (the de-biasing of Fig. 4); then exchange rounds (the ⌈k/2⌉ best-scored features
        outside join, refit, eliminate back to k, refit; when that is rejected, one-for-one
        swaps) are kept while each lowers the restricted loss by more than abess's threshold
        (at most 8;
        :func:`~explorer.engines.fgm.refine.splice`); one more record shows the pruned set
        and the rounds. Linear features only.
    k : int or None
        The number of features wanted (None: the paper's count, B ≤ #selected ≤ T·B). The
        outer loop then ignores ``tol`` and runs until the path holds k features (⌈1.5·k⌉
        with ``refine="auto"``), for up to max(``max_outer``, ⌈k/B⌉ + 2) iterations; a path
        that cannot grow that far is filled up to k by the forward sacrifice ½g_j²/h_j of the
        features outside it (``info["added"]`` of the last record). It is then cut to exactly
        k: with the paper's algorithm the k features of largest |w_j|/λ_j are kept — in eq. 5
        feature j enters the model as w_j·λ_j·√d_j·x_j, so |w_j| is the scale the learned d
        gives it — and the restricted ℓ2 model is refit on them (the de-biasing of Fig. 4);
        with ``refine="auto"`` by the refinement above. With ``groups`` (the paper's
        algorithm only) k counts groups, eq. 12's candidates: the path is grown to k groups,
        the k of largest ‖w_g‖ are kept (completed by the best worst-case scores when the path
        holds fewer) and the ℓ2 model is refit on their features. Not with ``feature_map``.
    Cs : sequence of float, optional
        The grid of ``C="cv"`` (default 0.001 … 1000 by half decades).
    cv : int
        Folds of ``C="cv"`` (stratified, as ``GridSearchCV(cv=cv)``).
    poly_gamma, poly_r : float
        The degree-2 map's (γ·xᵀx' + r)² scale and offset (``feature_map="poly2"``).
    n_bins : int
        Bins per feature of ``feature_map="binned"``.
    always_include, exclude, penalty_factor, positive
        What the user knows, keyword-only (:mod:`explorer.methods.knowledge`): features
        always in, never in, a factor per feature, non-negative weights. FGM honours
        ``always_include``, ``exclude``, ``penalty_factor``; it refuses the others with a
        message that names the methods that can.

    Attributes
    ----------
    selected_features_ : ndarray of int
        Indices of the selected features (``get_support(indices=True)``).
    coef_, intercept_ : ndarray, float
        The linear model in the input's units (zero outside the selection).
    history_ : list of IterationRecord
        One record per outer iteration: objective, bounds, selected set, ``info``.
    lower_bound_, upper_bound_ : float
        The certified bounds of Theorem 2 on the optimum, in objective units.
    inner_measure_ : float
        The last master's certified relative duality gap.
    B_ : int
        The block size used.
    k_ : int
        The number of features the model holds (``k``, or the paper's count at B).
    loss_ : str
        The loss used ("auto" resolved).
    C_ : float
        The C used (with ``C="cv"``: the chosen one).
    Cs_, cv_scores_ : ndarray
        With ``C="cv"``: the grid of C and the ``(len(Cs_), cv)`` array of held-out scores, one
        row per C and one column per fold.
    stopped_early_ : bool
        The callback returned False; the model so far is kept.

    See Also
    --------
    FSMulti : FGM's outer loop for F1, PRBEP, Rec@k or the Hamming loss.
    explorer.methods.Abess : best-subset selection, the strongest peer at k features.
    explorer.experiments.sweep : accuracy versus the number of features.

    References
    ----------
    .. [1] M. Tan, I. W. Tsang and L. Wang, "Towards large-scale and ultrahigh dimensional
       feature selection via feature generation", Journal of Machine Learning Research.

    Examples
    --------
    Exactly five features of the breast-cancer data:

    >>> from explorer import FGM, load
    >>> data = load("breast-cancer").split(test_size=0.3, seed=0)
    >>> fgm = FGM(k=5).fit(data.X, data.y)
    >>> [data.feature_names[j] for j in fgm.selected_features_]
    ['mean concave points', 'concavity error', 'worst texture', 'worst area', 'worst concavity']
    >>> round(fgm.score(data.X_test, data.y_test), 2)
    0.95

    The paper's path, two features per cutting-plane iteration, watched record by record:

    >>> records = []
    >>> path = FGM(B=2, C=1).fit(data.X, data.y, callback=records.append)
    >>> [r.n_selected for r in records]
    [2, 4, 6, 8, 9, 9]
    >>> bool(path.lower_bound_ <= path.upper_bound_)
    True
    """

    display_name = "FGM"
    record_keys = frozenset({  # its records' info keys
        "B", "active_blocks", "added", "added_groups", "before", "block",
        "block_features", "block_names", "block_norms", "block_scores", "bytes_read",
        "converged_inner", "groups_kept", "groups_on_path", "groups_visited",
        "inner_objective", "loss", "loss_after", "loss_before", "n_blocks",
        "n_generated", "new_features", "passes", "pinned", "pruned", "refine",
        "runner_scores", "runners_up", "scaling", "solver", "splice_rounds",
        "spliced_in", "stop_reason"
    })
    sparsity_param = "k"
    has_bounds = True
    has_inner_trace = True
    supports_warm_start = True
    accepts_chunked = True
    knowledge = frozenset({"exclude", "always_include", "penalty_factor"})
    _fit_params = ("groups",)
    param_specs = (
        ParamSpec("B", "B (features per block)", None, "int", 1, 10**7, log=True,
                  nullable=True, auto="10, or from k",
                  help="candidates added per cutting-plane iteration", bound="n_features"),
        ParamSpec("C", "C", 10.0, "float", 1e-3, 1e4, log=True,
                  help="loss trade-off; 'cv': chosen by cross-validation over Cs",
                  extra=cv_choice()),
        ParamSpec("loss", "loss", "auto", "choice",
                  choices=("auto", "squared_hinge", "logistic"),
                  help="PROX-FGM (squared hinge) or PROX-SLR (logistic); auto: squared hinge, "
                       "logistic with refine"),
        ParamSpec("max_outer", "max outer iterations", 15, "int", 1, 200,
                  help="T_max (paper: 15)"),
        ParamSpec("tol", "outer tolerance", 1e-2, "float", 0.0, 1.0, log=True, live=False,
                  help="relative objective change that stops the outer loop"),
        ParamSpec("inner_tol", "inner tolerance", 3e-5, "float", 0.0, 1e-1, log=True,
                  live=False, help="certified relative gap that stops APG on the last master"),
        ParamSpec("max_inner", "max APG steps", 2000, "int", 10, 100000, log=True, live=False),
        ParamSpec("fit_intercept", "intercept", True, "bool",
                  help="unpenalised bias (not in the paper)"),
        ParamSpec("feature_scaling", "feature scaling", "auto", "choice",
                  choices=("auto", None, "norm", "rms"), nullable=True,
                  help="auto: unit-RMS columns for features in different units; "
                       "norm: λ_j = 1/‖f_j‖ (eq. 4); rms: λ_j = √n/‖f_j‖"),
        ParamSpec("feature_map", "feature map", None, "choice",
                  choices=(None, "poly2", "binned"), nullable=True,
                  help="nonlinear selection: degree-2 products or binned responses"),
        ParamSpec("poly_gamma", "poly γ", 1.0, "float", 1e-6, 1e6, log=True, live=False,
                  when={"feature_map": ("poly2",)}),
        ParamSpec("poly_r", "poly r", 1.0, "float", 0.0, 1e6, live=False,
                  when={"feature_map": ("poly2",)}),
        ParamSpec("n_bins", "bins", 8, "int", 2, 255, live=False,
                  when={"feature_map": ("binned",)}),
        ParamSpec("warm_start", "warm start", False, "bool", live=False,
                  help="refit from the previous solution"),
        ParamSpec("refine", "refine", None, "choice", choices=(None, "auto"), nullable=True,
                  help="best-subset refinement: grow past k, eliminate back to k (each "
                       "removal letting the others adjust), refit, exchange while the "
                       "loss falls"),
        ParamSpec("k", "k (features kept)", None, "int", 1, 10**7, log=True, nullable=True,
                  bound="n_features", auto="the paper's count at B",
                  help="exactly k features: the path grown to k, cut by |w|, refit "
                       "(None: the paper's count at B)"),
    )

    def __init__(self, B: int | None = None, C: float = 10.0, loss: str = "auto",
                 max_outer: int = 15, tol: float = 1e-2, inner_tol: float = 3e-5,
                 max_inner: int = 2000, fit_intercept: bool = True, groups=None,
                 group_weights=None, feature_scaling: str | None = "auto",
                 feature_map: str | None = None, poly_gamma: float = 1.0, poly_r: float = 1.0,
                 n_bins: int = 8, warm_start: bool = False, refine: str | None = None,
                 k: int | None = None, Cs=None, cv: int = 3,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.B = B
        self.C = C
        self.loss = loss
        self.max_outer = max_outer
        self.tol = tol
        self.inner_tol = inner_tol
        self.max_inner = max_inner
        self.fit_intercept = fit_intercept
        self.groups = groups
        self.group_weights = group_weights
        self.feature_scaling = feature_scaling
        self.feature_map = feature_map
        self.poly_gamma = poly_gamma
        self.poly_r = poly_r
        self.n_bins = n_bins
        self.warm_start = warm_start
        self.refine = refine
        self.k = k
        self.Cs = Cs
        self.cv = cv

    sweep_values = classmethod(k_sweep)

    # ------------------------------------------------------------------ setup
    def _check_params(self) -> None:
        if self.feature_map is not None and (self.groups is not None or
                                             self.feature_scaling not in (None, "auto")):
            raise ValueError("feature_map cannot be combined with groups or feature_scaling")
        if self.refine is not None and (self.feature_map is not None or
                                        self.groups is not None):
            raise ValueError("refine='auto' works on single linear features: it cannot be "
                             "combined with feature_map or groups")
        if self.k is not None and self.feature_map is not None:
            raise ValueError("k counts linear features (or groups): it cannot be combined "
                             "with feature_map (choose B to size those)")

    def _make_space(self, X, groups):
        start = getattr(self, "_path_start", None)  # the previous C's fit on these rows
        if start is not None and self.feature_map is None:
            return start["space"].on(X)
        know = self._known()
        if self.feature_map is not None and know is not None:
            raise ValueError("always_include and penalty_factor act on linear features: they "
                             "cannot be combined with feature_map (exclude can)")
        if self.feature_map == "poly2":
            return Poly2Space(X, gamma=self.poly_gamma, r=self.poly_r)
        if self.feature_map == "binned":
            return BinnedSpace(X, n_bins=self.n_bins)
        space = LinearSpace(X, groups=groups, group_weights=self.group_weights,
                            scaling=self.feature_scaling)
        if know is not None:
            space.fix(know.pinned, know.factor)
        return space

    # ------------------------------------------------------------------ fit
    def _fit(self, X, y, recorder: Recorder, groups=None, **_):
        groups = self.groups if groups is None else groups
        chunked = getattr(X, "is_chunked", False)
        if chunked and self.feature_map is not None:
            raise ValueError("feature_map needs X in memory: a dask X is selected over its "
                             "linear features (with or without groups)")
        space = self._make_space(X, groups)
        self.space_ = space
        density = X.nnz / max(1, X.shape[0] * X.shape[1]) if sp.issparse(X) else 1.0
        sparse_cache = (chunked and X.sparse or sp.issparse(X) and density < 0.1) and \
            self.feature_map is None
        initial_blocks, coef0, tau0 = self._warm_blocks(space)
        def new_master(coef0=None):
            problem = Restricted(y, LOSSES[self.loss_](), self.C, self.fit_intercept,
                                 Stopping(self.inner_tol, self.max_inner),
                                 interrupt=recorder.interrupted)
            return L12Master(problem, n_samples=X.shape[0], sparse_cache=sparse_cache,
                             coef0=coef0, stop_flag=recorder.stop_flag())

        master = new_master(coef0)
        master.tau = tau0
        self._master = master
        previously = set()
        B = self._grown_B()
        grown_to = None
        if self.k is not None:
            if groups is not None and self.refine is not None:
                raise ValueError("refine='auto' works on single linear features: it cannot "
                                 "be combined with groups")
            grown_to = int(self.k) if self.refine is None else \
                int(np.ceil(OVERSELECT * int(self.k)))
        unit = "features" if groups is None else "groups"
        grown = GROWN.format(target="k" if self.refine is None else "1.5·k", unit=unit)
        stopping = outer_stopping(self.max_outer, self.tol, B, grown_to, grown)

        def on_step(step: OuterStep) -> bool:
            self._update_model(space, master)
            sol = step.solution
            info = block_record_info(space, step, previously, B)
            info.update({
                "n_generated": int(self._n_generated),
                "converged_inner": bool(sol.info.get("converged", False)),
                "solver": "APG, then proximal Newton"
                if sol.info.get("solver") == "proximal Newton" else "APG",
                "weights": self.coef_[self.support_],
            })
            if chunked:
                info.update({"passes": int(X.passes), "bytes_read": int(X.bytes_read)})
            return emit_outer_step(recorder, self, step, info, sol.info.get("inner_gap"))

        with interruptible(X, recorder.interrupted):  # Stop within a chunk task of a pass
            result = cutting_plane(space, master, B=B, stopping=stopping, on_step=on_step,
                                   initial_blocks=initial_blocks, context=B)
        self._update_model(space, master)
        self.stop_reason_ = result.stop_reason
        if not result.grown:
            # (a path grown to cut from: its last master only chose blocks, the refit below
            # is the certified one)
            self._check_certificate(result, master, recorder)
        if groups is not None and self.k is not None and not recorder.should_stop:
            self._cut_groups_to_k(space, master, new_master(), result, recorder)
        elif (self.refine is not None or self.k is not None) and not recorder.should_stop \
                and self.support_.any():
            self._prune_and_refit(X, y, result, recorder, B, space)
        self.lower_bound_ = result.lower
        self.upper_bound_ = result.upper
        self.n_passes_ = int(space.passes)
        self.n_outer_ = int(result.n_outer)
        self._warm = self._warm_state(master)

    @property
    def k_(self) -> int:
        """The number of features the model holds: ``k``, or the paper's count at B when
        ``k`` is None (what the app's disabled k slider shows)."""
        return self.n_selected_

    @property
    def loss_(self) -> str:
        """The loss fitted: ``loss``, "auto" resolved (logistic with refine, else the squared
        hinge)."""
        if self.loss != "auto":
            return self.loss
        return "logistic" if self.refine is not None else "squared_hinge"

    @property
    def _B(self) -> int:
        """B, or its default: 10; ⌈k/5⌉ for the paper's algorithm with k; k with refine."""
        if self.B is not None:
            return int(self.B)
        if self.k is None:
            return 10
        return int(self.k) if self.refine is not None else max(1, int(np.ceil(int(self.k) / 5)))

    def _grown_B(self) -> int:
        """Block size of the outer loop: B, or ⌈1.5·B⌉ when refining (grown past k)."""
        self.B_ = self._B
        if self.refine is None:
            return self.B_
        return int(np.ceil(OVERSELECT * self.B_))

    def _prune_and_refit(self, X, y, result, recorder: Recorder, B_grown: int,
                         space) -> None:
        """refine='auto': keep the k features backward elimination keeps, refit, then exchange
        rounds while the restricted loss falls (:func:`~explorer.engines.fgm.refine.splice`); one
        more record. A path that converged with fewer than k features is filled up to k
        first, by the forward sacrifice of the best-scored features outside it (one more
        pass)."""
        before = np.union1d(self.selected_features_, space.fixed)  # a pinned weight can be 0
        k = int(self.k) if self.k is not None else \
            max(1, int(round(before.size * self._B / B_grown)))
        stopping = Stopping(float(self.inner_tol) ** 2, int(self.max_inner))
        chunked = X if getattr(X, "is_chunked", False) else None
        # every step below needs only a few columns: read them once (in memory or from disk),
        # scaled by λ as the model sees them (its weights w_j = coef_j/λ_j)
        lam = space.lam
        read = chunked.take if chunked is not None else partial(take_columns, X)

        def take(ids):
            return _times_columns(read(ids), lam[ids])

        w_model = self.coef_ / np.where(lam > 0, lam, 1.0)
        paper = self.refine is None
        problem = Restricted(np.asarray(y, dtype=np.float64), LOSSES[self.loss_](),
                             float(self.C), self.fit_intercept, stopping, recorder.interrupted)
        out = refine_path(problem, Candidates(take, space.top, self.n_features_in_),
                          Fitted(before, w_model[before], None, float(self.intercept_)),
                          k, signal=None if result.solution is None else result.solution.signal,
                          paper=paper, ask_past=self._B, pinned=space.fixed)
        kept, res, added = out.kept, out.result, out.added
        passes = {}
        if chunked is not None:
            passes = {"passes": int(chunked.passes), "bytes_read": int(chunked.bytes_read)}
        coef = np.zeros(self.n_features_in_)
        coef[kept] = out.weights * lam[kept]
        self.coef_, self.intercept_ = coef, out.intercept
        self.support_ = coef != 0
        self.support_[space.fixed] = True  # pinned, even at weight 0 (a constant column)
        self.refined_from_ = before
        self.inner_measure_ = float(res.measure)
        # 1e-8: the one-block gap's float64 floor (coefficients then within 1e-4)
        if res.measure > max(stopping.tol, 1e-8) and not recorder.should_stop:
            recorder.warn(f"FGM's refit on the {kept.size} kept features stopped at a "
                          f"relative duality gap of {res.measure:.2g} (asked: "
                          f"{stopping.tol:.2g}): its weights are not certified.")
        verb, rule = ("cut", "|w|") if paper else ("refined", "backward elimination")
        how = (f"{verb}: the path ended at {before.size} features, {added.size} more "
               "added by forward sacrifice, refit") if added.size else \
            (f"{verb}: kept {kept.size} of {before.size} features by {rule}, refit")
        recorder.emit(objective=res.objective, n_selected=int(self.support_.sum()),
                      selected=np.flatnonzero(self.support_), inner_steps=res.n_iter,
                      inner_measure=res.measure,
                      info={REFINE_KEY: "paper" if paper else "auto", "before": before,
                            "pruned": np.setdiff1d(before, kept), "added": added,
                            "spliced_in": np.setdiff1d(kept, out.support),
                            "splice_rounds": out.rounds, "loss_before": out.loss_before,
                            "loss": self.loss_,
                            "loss_after": out.loss_after,
                            "inner_objective": np.asarray(res.trace, dtype=float),
                            "B": self._B, "stop_reason": how,
                            "weights": coef[self.support_], **passes})

    def _cut_groups_to_k(self, space, master: L12Master, refit: L12Master, result,
                         recorder: Recorder) -> None:
        """k groups: the grown path's k of largest ‖w_g‖ (completed by the best worst-case
        scores when it holds fewer), refit on their features as one ℓ2 block — the cut of
        FGM(k) on single features, with eq. 12's groups as the candidates."""
        k = int(self.k)
        kept, before, added = k_candidates(space, master, result.solution, k)
        was = self.selected_features_
        refit.initial()
        refit.add_block(space.columns(kept))
        sol = refit.solve(Stopping(float(self.inner_tol) ** 2, int(self.max_inner)))
        self._update_model(space, refit)
        self._master = refit
        features = space.input_features(kept)
        self.refined_from_ = was
        self.inner_measure_ = float(sol.info.get("inner_gap") or 0.0)
        recorder.emit(objective=sol.objective, n_selected=int(self.support_.sum()),
                      selected=np.flatnonzero(self.support_), inner_steps=sol.inner_steps,
                      inner_measure=sol.info.get("inner_gap"),
                      info={REFINE_KEY: "paper", "before": was,
                            "pruned": np.setdiff1d(was, features),
                            "added": space.input_features(added),
                            "spliced_in": np.zeros(0, dtype=np.int64), "splice_rounds": 0,
                            "inner_objective": np.asarray(sol.trace, dtype=float),
                            "B": self._B, "groups_kept": kept, "groups_on_path": int(before.size),
                            "added_groups": added,
                            "stop_reason": f"cut: kept {kept.size} of {before.size} groups "
                                           "by ‖w_g‖, refit",
                            "weights": self.coef_[self.support_]})

    def _check_certificate(self, result, master: L12Master, recorder: Recorder) -> None:
        """``inner_measure_``: the last master's relative duality gap; a ConvergenceWarning
        when it is above the tolerance asked for (the master ran out of ``max_inner`` steps:
        typically features on very different scales, whose conditioning a first-order master
        pays for)."""
        solution = result.solution
        gap = solution.info.get("inner_gap") if solution is not None else None
        self.inner_measure_ = float(gap) if gap is not None else 0.0
        wanted = master.final_tolerance()
        converged = solution is not None and solution.info.get("converged", False)
        if gap is not None and gap > wanted and not converged and not recorder.should_stop:
            recorder.warn(
                f"FGM's last restricted master used its max_inner={int(self.max_inner)} steps "
                f"and stopped at a relative duality gap of {gap:.2g} (asked: {wanted:.2g}); "
                "the selection is usable but the weights are not certified. "
                + ("Raising max_inner fixes this." if self.feature_scaling not in
                   (None, "auto") else "feature_scaling='rms' (columns on one scale) or "
                   "raising max_inner fixes this."))

    # ------------------------------------------------------------------ model
    def _update_model(self, space, master: L12Master) -> None:
        m = self.n_features_in_
        self.intercept_ = float(master.intercept)
        if self.feature_map is None:
            self.coef_ = linear_coef(master.weights_by_column(), m)
            self.support_ = self.coef_ != 0
            self.support_[space.fixed] = True  # pinned, even at weight 0
            self._n_generated = int(np.count_nonzero(self.coef_))
            return
        importance = np.zeros(m)  # per input feature: Σ |weights of its generated columns|
        generated = []
        for cols, w in master.weights_by_column():
            if cols.width == 0:
                continue
            np.add.at(importance, cols.feature_a, np.abs(w))
            pair = cols.kind == 2
            np.add.at(importance, cols.feature_b[pair], np.abs(w[pair]))
            generated.append((replace(cols, matrix=None), w))  # the model, not the data
        self.coef_ = importance
        self.support_ = importance > 0
        self._generated = generated
        self._n_generated = int(sum(np.count_nonzero(w) for _, w in generated))

    def _decision_binary(self, X) -> np.ndarray:
        if self.feature_map is None:
            return super()._decision_binary(X)
        out = np.full(X.shape[0], self.intercept_)
        for cols, w in self._generated:
            keep = w != 0
            if keep.any():
                sub = _subset(cols, keep)
                out += np.asarray(self.space_.transform(X, sub) @ w[keep]).ravel()
        return out

    @property
    def generated_features_(self):
        """Selected generated columns (nonlinear maps): a list of (name, weight)."""
        out = []
        for cols, w in getattr(self, "_generated", []):
            for c in np.flatnonzero(w):
                out.append((self.space_.describe(int(cols.candidate[c])) if cols.kind[c] != 3
                            else f"x{cols.feature_a[c]} ≥ t{cols.feature_b[c]}", float(w[c])))
        return out

    # ------------------------------------------------------------------ warm start
    def _path_state(self):
        """The feature space (its scaling λ reads X's columns, not C) for the next C."""
        space = getattr(self, "space_", None)
        return {"space": space} if isinstance(space, LinearSpace) else None

    def _warm_state(self, master: L12Master) -> WarmStart:
        weights = {}
        by_candidate = {}
        for cols, w in master.weights_by_column():
            for c in range(cols.width):
                key = (int(cols.candidate[c]), int(cols.feature_a[c]), int(cols.feature_b[c]))
                weights[key] = weights.get(key, 0.0) + float(w[c])
                by_candidate[key[0]] = by_candidate.get(key[0], 0.0) + float(w[c]) ** 2
        ranked = sorted((c for c, v in by_candidate.items() if v > 0),
                        key=lambda c: -by_candidate[c])
        return WarmStart(key=self._warm_key(n_features=self.n_features_in_,
                                            feature_map=self.feature_map),
                         support=np.asarray(ranked, dtype=np.int64), coef=weights,
                         step=master.tau)

    def _warm_blocks(self, space):
        """A warm start's candidates, strongest first, re-chunked by the new B."""
        state = self._warm_for(n_features=self.n_features_in_, feature_map=self.feature_map)
        if state is None:
            return [], None, None
        B = self._B
        ranked = state.support
        blocks = [ranked[i:i + B] for i in range(0, ranked.size, B)]
        return blocks[: max(1, int(self.max_outer) - 1)], state.coef, state.step


def _subset(cols, keep):
    matrix = cols.matrix[:, np.flatnonzero(keep)] if cols.matrix is not None else None
    return Columns(matrix=matrix, candidate=cols.candidate[keep], feature_a=cols.feature_a[keep],
                   feature_b=cols.feature_b[keep], scale=cols.scale[keep], kind=cols.kind[keep])


def _times_columns(cols, scale: np.ndarray):
    """The columns ``cols`` (dense or sparse) each times its ``scale``."""
    if np.all(scale == 1.0):
        return cols
    if sp.issparse(cols):
        return (cols @ sp.diags(scale)).tocsc()
    return np.asarray(cols) * scale[None, :]
