"""GrFL — learning with infinitely many features (Rakotomamonjy, Flamary & Yger, Machine
Learning 2013).

Problem (1): choose a finite set of features from a continuously parametrised family φ_θ and
their weights to minimise Σ_t Σ_i L(y_it, Φ(w_t + w̃) + b_t) + λ_s‖w̃‖₁ + λ_p Σ_g ‖W_g‖_q.
Algorithm 1 (column generation) is FGM's outer loop (:func:`explorer.optim.cutting_plane`)
with one group per step: solve the restricted master on the active features
(:class:`explorer.engines.grfl.GroupMaster`: FISTA with warm starts, or the ADMM of §4.1),
then draw ``n_candidates`` parameter values (:class:`explorer.features.SampledSpace`), score
each candidate group by its violation ‖h‖_{q′}, h_t = φᵀL′_t (and |Σ_t h_t| for the shared
weights) — the same Φᵀr product the other methods use, over generated columns — and add the
worst violator if it exceeds λ(1 + ε); stop when no sampled candidate violates (checked again
after the last master is polished to ``tol``) or at ``max_features`` groups.

What the contract means for generated features:

* ``transform(X)`` returns the learned feature responses (n × #generated columns);
* ``n_selected`` in the records counts the *input* variables the model uses (those of
  ``get_support``, as everywhere else), and ``info["n_learned"]`` the learned (generated)
  features carrying weight (a Fourier pair is one group);
* ``input_importance_`` ranks the *original* variables by their weight in the learned
  directions (Fourier: Σ_g ‖W_g‖·|v_g|/‖v_g‖; Gabor: the filters' footprints on the pixel grid);
  ``get_support`` keeps the variables whose importance is at least ``input_threshold`` times
  the largest, and ``coef_`` is that importance;
* ``lam`` defaults to 0.1·λ_max, λ_max being the largest violation at the empty model (the
  smallest λ with an empty model) over a first candidate sample; :meth:`lam_path` refits along
  a decreasing λ path with warm starts.

Columns are normalised to unit norm on the training rows. Multi-class targets become one task
per class (one-against-all, sharing the generated features); a 2-D ``y`` is multi-task.
The optimality conditions (5)–(10) are checked at the end on the active features and on a fresh
candidate sample and reported in ``kkt_``.
"""

from __future__ import annotations

import numpy as np

from .._params import ParamSpec
from ..engines.grfl import GroupMaster, GroupObjective, loss_gradient
from ..features import (
    FixedFamily,
    FourierFamily,
    GaborFamily,
    SampledSpace,
    median_bandwidth,
)
from ..optim import OuterStep, OuterStopping, Stopping, WarmStart, cutting_plane, make_loss
from . import knowledge as _knowledge
from .base import BaseSelector, Recorder, register
from .records import FitStopped

COARSE_KKT = 1e-1  # KKT residual (relative to λ) of the masters inside the loop
ELIMINATION_KEEP = 0.5  # share of the inputs kept by each round of k's backward elimination


@register("grfl")
class GrFL(BaseSelector):
    """Feature learning by column generation over random Fourier or Gabor features.

    Parameters
    ----------
    family : {"fourier", "fourier-multi", "gabor"}
        Random Fourier pairs with the median-heuristic bandwidth; with the bandwidth sampled
        too (GrFL-M); or Gabor filters on image patches (needs an image shape).
    lam, lam_shared : float or None, float
        λ_p of the group penalty (None: 0.1·λ_max) and λ_s of the shared ℓ1 part (0: none).
    q : float
        Mixed norm ℓ1-ℓq over each group (and tasks); 2 is the group lasso, 1 the lasso.
    loss : {"squared_hinge", "logistic", "squared"}
        The data term (``squared`` makes a regressor).
    n_candidates : int
        k_r, candidates sampled per generation step (for GrFL-M the same total count).
    bandwidths : sequence or None
        σ values for ``fourier-multi`` (None: median × {¼, ½, 1, 2, 4}).
    max_features : int
        Most generated features (groups).
    solver : {"fista", "admm"}
        Restricted-master solver.
    tol : float
        ε of the violation test, and the last master's stop: its KKT residual (the gradient
        mapping of eqs. 5–10) at most ε·λ (masters inside the loop, which only choose the next
        feature, stop at 0.1·λ or — with FISTA — once a step changes the objective by at most
        1e-4 relative, whichever comes first); reported in ``inner_measure_`` (the last
        master's objective in ``objective_``) and each record.
    max_inner : int
        Most master steps (FISTA or ADMM) per generated feature.
    random_state : int or None
    image_shape : (h, w) or None
        For Gabor features; None infers a square image.
    input_threshold : float
        Fraction of the largest input importance that ``get_support`` keeps.
    warm_start : bool
        Keep the generated features and weights for the next fit (not with ``k``).
    k : int or None
        Number of input variables the model uses. GrFL's own sparsity is over generated
        features, each of which mixes every input; with k set, a backward elimination by
        ``input_importance_`` (half of the inputs left per round, ⌈log₂(d/k)⌉ fits) leaves k,
        and the model is fitted on them alone (``elimination_``: the inputs left after each
        round). None: every input, ``get_support`` by ``input_threshold``.
    always_include, exclude, penalty_factor, positive
        What the user knows, keyword-only (:mod:`explorer.methods.knowledge`): features
        always in, never in, a factor per feature, non-negative weights. GrFL honours
        ``exclude`` (its features are learned over the other inputs; not with Gabor features
        or an image shape, whose pixels must stay on their grid) and refuses the others with
        a message that names the methods that can.

    Attributes
    ----------
    input_importance_ : ndarray
        Each input variable's weight in the learned directions.
    selected_features_ : ndarray of int
        The inputs whose importance is at least ``input_threshold`` × the largest.
    generated_params_ : list
        The parameters of the learned features (Fourier directions, Gabor filters).
    lam_ : float
        The λ used (``lam=None``: 0.1·``lambda_max_``).
    kkt_ : dict
        The optimality conditions (5)–(7) at the end.
    history_ : list of IterationRecord
        One record per generated feature; ``info`` holds its violation.

    See Also
    --------
    FGM : linear selection with certified bounds.

    References
    ----------
    .. [1] A. Rakotomamonjy, R. Flamary and F. Yger, "Learning with infinitely many features",
       Machine Learning, 2013.

    Examples
    --------
    On XOR the two informative variables act only together, which no linear model sees:

    >>> from explorer import GrFL
    >>> from explorer.data import make_xor
    >>> xor = make_xor(n_samples=300, n_features=10)
    >>> grfl = GrFL(family="fourier", max_features=10).fit(xor.X, xor.y)
    >>> grfl.input_importance_.argsort()[::-1][:2].tolist()
    [0, 1]
    """

    display_name = "GrFL"
    record_keys = frozenset({  # its records' info keys
        "candidate_violations", "family", "group_norms", "inner_objective", "lam",
        "n_generated", "n_inputs", "n_learned", "new_feature", "pooled", "solver", "violation"
    })
    sparsity_param = "max_features"
    multiclass = "native"
    supports_warm_start = True
    has_inner_trace = True
    _fit_params = ("image_shape", "feature_family")
    _transient = ("_master", "_space")
    knowledge = frozenset({"exclude"})  # its features mix inputs: no pin or factor per input
    param_specs = (
        ParamSpec("family", "feature family", "fourier", "choice",
                  choices=("fourier", "fourier-multi", "gabor")),
        ParamSpec("lam", "λ", None, "float", 1e-8, 1e8, log=True, nullable=True,
                  help="group penalty; None: 0.1·λ_max"),
        ParamSpec("lam_shared", "λ shared", 0.0, "float", 0.0, 1e8, live=False),
        ParamSpec("q", "q of ℓ1-ℓq", 2.0, "float", 1.0, 10.0, live=False),
        ParamSpec("loss", "loss", "squared_hinge", "choice",
                  choices=("squared_hinge", "logistic", "squared")),
        ParamSpec("n_candidates", "candidates per step", 50, "int", 1, 10000, log=True),
        ParamSpec("max_features", "max features", 100, "int", 1, 2000, log=True,
                  help="most generated features (groups)"),
        ParamSpec("solver", "master solver", "fista", "choice", choices=("fista", "admm")),
        ParamSpec("tol", "tolerance", 1e-4, "float", 0.0, 1.0, live=False,
                  help="violation test and the master's KKT residual, relative to λ"),
        ParamSpec("max_inner", "max master steps", 5000, "int", 10, 100000, log=True,
                  live=False),
        ParamSpec("random_state", "seed", 0, "int", 0, 2**31 - 1, nullable=True),
        ParamSpec("input_threshold", "input threshold", 0.5, "float", 0.0, 1.0, live=False),
        ParamSpec("warm_start", "warm start", False, "bool", live=False),
        ParamSpec("k", "k (inputs)", None, "int", 1, 100000, log=True, nullable=True,
                  live=False, bound="n_features",
                  help="number of input variables the model uses: backward elimination by "
                       "input importance (None: those above the input threshold)"),
    )

    def __init__(self, family: str = "fourier", lam: float | None = None,
                 lam_shared: float = 0.0, q: float = 2.0, loss: str = "squared_hinge",
                 n_candidates: int = 50, bandwidths=None, max_features: int = 100,
                 solver: str = "fista", tol: float = 1e-4, random_state: int | None = 0,
                 image_shape=None, input_threshold: float = 0.5, warm_start: bool = False,
                 max_inner: int = 5000, k: int | None = None,
                 *, always_include=None, exclude=None, penalty_factor=None,
                 positive: bool = False):
        self._set_knowledge(always_include, exclude, penalty_factor, positive)
        self.family = family
        self.lam = lam
        self.lam_shared = lam_shared
        self.q = q
        self.loss = loss
        self.n_candidates = n_candidates
        self.bandwidths = bandwidths
        self.max_features = max_features
        self.solver = solver
        self.tol = tol
        self.max_inner = max_inner
        self.random_state = random_state
        self.image_shape = image_shape
        self.input_threshold = input_threshold
        self.warm_start = warm_start
        self.k = k

    @property
    def _task(self) -> str:
        return make_loss(self.loss).task

    # ------------------------------------------------------------------ setup
    def _targets(self, y):
        """n × T targets: one column per task (±1 for the classification losses)."""
        y = np.asarray(y)
        self.multitask_ = y.ndim == 2
        if self.multitask_:
            y = y.astype(np.float64)
            return y if self._task == "regression" else np.where(y > 0, 1.0, -1.0)
        if self._task == "classification" and len(getattr(self, "classes_", [])) > 2:
            return np.where(y[:, None] == self.classes_[None, :], 1.0, -1.0)
        return y.astype(np.float64)[:, None]

    def _make_family(self, X, image_shape):
        d = X.shape[1]
        if self.family == "gabor":
            shape = image_shape or self.image_shape
            if shape is None:
                side = int(round(np.sqrt(d)))
                if side * side != d:
                    raise ValueError("family='gabor' needs image_shape (the features are not "
                                     "a square image)")
                shape = (side, side)
            if int(np.prod(shape)) != d:
                raise ValueError(f"image_shape {tuple(shape)} does not match {d} features")
            return GaborFamily(tuple(shape))
        sigma = median_bandwidth(X)
        self.bandwidth_ = sigma
        if self.family == "fourier":
            return FourierFamily(d, [sigma])
        bands = self.bandwidths if self.bandwidths is not None else \
            sigma * np.array([0.25, 0.5, 1.0, 2.0, 4.0])
        return FourierFamily(d, bands)

    def _check_params(self) -> None:
        if self.bandwidths is not None:
            bands = np.asarray(self.bandwidths, dtype=float).ravel()
            if bands.size == 0 or not np.all(np.isfinite(bands)) or np.any(bands <= 0):
                # a zero or NaN bandwidth makes every feature response NaN, on which the
                # master's backtracking line search never terminates
                raise ValueError(f"GrFL: bandwidths must be positive finite numbers, got "
                                 f"{list(np.asarray(self.bandwidths).ravel())}")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, *, callback=None, **fit_params):
        """Fit on ``X`` and ``y`` (:meth:`BaseSelector.fit`); with ``k`` set, on the k inputs
        a backward elimination keeps (:meth:`_fit_inputs`)."""
        if self.k is None:
            return super().fit(X, y, callback=callback, **fit_params)
        return self._fit_inputs(X, y, callback, fit_params)

    def _fit_inputs(self, X, y, callback, fit_params):
        """``k`` inputs by backward elimination: GrFL is fitted on the inputs left, which keep
        the ``ELIMINATION_KEEP`` share (at least k) of largest ``input_importance_``, until k
        are left (⌈log₂(d/k)⌉ fits from d inputs); the model is then fitted on those k alone,
        as with ``exclude`` on the others, and uses every one of them (``input_threshold``
        plays no part). The rounds report progress to the callback and stop on request
        (:class:`~explorer.methods.records.FitStopped`: no model yet)."""
        from sklearn.base import clone

        self._validate_params_against_specs()
        if self.family == "gabor" or self.image_shape is not None or \
                fit_params.get("image_shape") is not None:
            raise ValueError("GrFL: k picks input variables, and Gabor features need the whole "
                             "image; use the Fourier family, or k=None")
        d = self._validate_X(X, reset=True).shape[1]
        know = _knowledge.resolve(self, d, getattr(self, "feature_names_in_", None))
        cols = know.allowed if know is not None else np.arange(d)
        k = int(self.k)
        if k > cols.size:
            raise ValueError(f"GrFL: k={k} is larger than the {cols.size} input variables "
                             "it may use")
        rounds, passes = [int(cols.size)], 0.0
        progress = getattr(callback, "progress", None)
        cancelled = getattr(callback, "cancelled", None)
        while cols.size > k:
            keep = max(k, int(np.ceil(cols.size * ELIMINATION_KEEP)))
            if callable(progress):
                progress(f"keeping {keep} of {cols.size} inputs",
                         (len(rounds) - 1) / max(1.0, np.log2(rounds[0] / k) + 1.0))
            if callable(cancelled) and cancelled():
                raise FitStopped("GrFL was stopped while choosing its k inputs, before its "
                                 "first model")
            member = self._on_inputs(clone(self), cols, d).fit(X, y, **fit_params)
            passes += float(getattr(member, "n_passes_", 0.0))
            order = np.argsort(-member.input_importance_[cols], kind="stable")[:keep]
            cols = np.sort(cols[order])
            rounds.append(int(cols.size))
        final = self._on_inputs(clone(self).set_params(input_threshold=0.0), cols, d)
        final.fit(X, y, callback=callback, **fit_params)
        params = set(self.get_params(deep=False))
        for name in [n for n in vars(self) if n not in params]:
            del self.__dict__[name]  # an earlier fit's state
        self.__dict__.update({n: v for n, v in vars(final).items() if n not in params})
        self.n_passes_ = float(getattr(final, "n_passes_", 0.0)) + passes
        self.elimination_ = rounds
        return self

    @staticmethod
    def _on_inputs(member, cols, d):
        """``member`` (a clone) set to fit on the inputs ``cols`` alone."""
        others = np.setdiff1d(np.arange(d), cols)
        return member.set_params(k=None, warm_start=False,
                                 exclude=others if others.size else None)

    def _fit(self, X, y, recorder: Recorder, image_shape=None, feature_family=None, **_):
        """Algorithm 1 as FGM's outer loop (:func:`~explorer.optim.cutting_plane`) with one
        group per step, over a :class:`~explorer.features.SampledSpace` and the
        :class:`~explorer.engines.grfl.group_master.GroupMaster`; it stops when no sampled candidate
        violates the optimality conditions by more than ε (score ≤ 1 + tol)."""
        Y = self._targets(y)
        T = Y.shape[1]
        state = self._warm_for(n_features=X.shape[1], T=T, family=self.family) \
            if feature_family is None else None
        # a warm fit draws the candidates that follow the previous fit's (not the same ones
        # again, which it would answer with near-copies of the features it already has)
        rng = np.random.default_rng(self.random_state) if state is None else \
            state.extra["rng"]
        if state is not None:
            state = _active_only(state, self._family_size(state))
        fam = state.extra["family_"] if state is not None else \
            feature_family if feature_family is not None else self._make_family(X, image_shape)
        self.family_ = fam
        if state is not None:
            self.bandwidth_ = state.extra["bandwidth"]
        tol = float(self.tol)
        space = SampledSpace(X, fam, int(self.n_candidates), rng, q=float(self.q),
                             lam_shared=float(self.lam_shared), threshold=1.0 + tol)
        spec = GroupObjective(Y, self.loss, 1.0, float(self.lam_shared), float(self.q))
        master = GroupMaster(spec, group_size=fam.group_size, solver=self.solver,
                             stopping=Stopping(tol, int(self.max_inner)), coarse=COARSE_KKT,
                             interrupt=recorder.interrupted,
                             start=(state.coef, state.extra["ws"], state.intercept)
                             if state is not None else None)
        # λ_max: the largest violation at the empty model, over a first candidate sample
        viol = space.draw(master.initial().signal)[3]
        self.lambda_max_ = float(viol.max()) if viol.size else 0.0
        self.lam_ = float(self.lam) if self.lam is not None else 0.1 * self.lambda_max_
        space.lam = master.lam = self.lam_
        initial = [space.register(state.support)] if state is not None and \
            len(state.support) else []
        self._space, self._master = space, master
        self._sync(master, X.shape[1])

        def on_step(step: OuterStep) -> bool:
            self._sync(master, X.shape[1])
            res = master.result
            warm = step.iteration == 0
            return recorder.emit(
                objective=step.solution.objective,
                n_selected=int(np.count_nonzero(self.support_)),
                selected=np.flatnonzero(self.support_), inner_steps=step.solution.inner_steps,
                inner_measure=res.measure,
                info={"violation": np.nan if warm else space.violation[int(step.block[0])],
                      "lam": self.lam_, "n_generated": len(self._params),
                      "pooled": bool(getattr(self.family_, "pooled", False)),
                      "n_learned": int(np.count_nonzero(master.group_norms() > 0)),
                      "family": self.family, "n_inputs": int(self.support_.size),
                      "weights_label": "input importance",
                      "inner_objective": np.asarray(step.solution.trace),
                      "new_feature": "none (warm start)" if warm
                      else space.describe(int(step.block[0])),
                      "weights": self.coef_[self.support_], "solver": self.solver,
                      "candidate_violations": np.zeros(0) if warm
                      else space.draws.get(int(step.block[0]), np.zeros(0)),
                      "group_norms": master.group_norms().copy()})

        stopping = OuterStopping(int(self.max_features) - sum(map(len, initial)),
                                 threshold=1.0 + tol)
        result = cutting_plane(space, master, B=1, stopping=stopping, on_step=on_step,
                               initial_blocks=initial, report_initial=True)
        self._sync(master, X.shape[1])
        self.stop_reason_ = {"max_outer reached": "max_features reached",
                             "stopped by callback": "stopped by the callback"}.get(
            result.stop_reason, result.stop_reason)
        if master.result is None and initial:
            master.solve(tol)
            self._sync(master, X.shape[1])
        self.inner_measure_ = float(master.result.measure) if master.groups else 0.0
        self.objective_ = float(master.result.objective) if master.groups else np.nan
        self.n_passes_ = int(space.passes)
        self._warm = WarmStart(
            key=self._warm_key(n_features=X.shape[1], T=T, family=self.family),
            support=list(self._params), coef=master.W, intercept=master.b,
            extra={"ws": master.ws, "family_": fam, "rng": rng,
                   "bandwidth": getattr(self, "bandwidth_", None)})
        self.kkt_ = self._kkt(X, Y, master, space)

    @staticmethod
    def _family_size(state) -> int:
        return int(state.extra["family_"].group_size)

    def _sync(self, master, d) -> None:
        params, scales = [], []
        for cols in master.columns:
            ids = cols.candidate[:: master.group_size]
            params.extend(self._space.params[int(i)] for i in ids)
            scales.append(cols.scale)
        self._update(params, np.concatenate(scales) if scales else np.zeros(0), master.W,
                     master.ws, master.b, d)

    def _update(self, params, scales, W, ws, b, d):
        """Model attributes from the current generated features (a usable model each step)."""
        self._params = list(params)
        self._scales = np.asarray(scales, dtype=np.float64)
        self._W, self._ws, self._b = W.copy(), ws.copy(), b.copy()
        gsize = self.family_.group_size
        weights = np.array([np.linalg.norm(W[i * gsize:(i + 1) * gsize])
                            for i in range(len(params))])
        imp = self.family_.importance(params, weights) if len(params) else np.zeros(d)
        imp = np.asarray(imp, dtype=np.float64)
        if imp.size != d:
            imp = np.resize(imp, d)
        self.input_importance_ = imp
        top = imp.max(initial=0.0)
        self.support_ = imp >= self.input_threshold * top if top > 0 else np.zeros(d, bool)
        self.coef_ = imp
        self.intercept_ = float(b[0]) if b.size == 1 else b.copy()
        self.generated_params_ = list(params)

    def _kkt(self, X, Y, master, space):
        """Largest violations of the optimality conditions (5)–(10), relative to λ."""
        groups = master.groups
        if not groups:
            return {"active": 0.0, "inactive": 0.0, "candidates": np.nan}
        W = master.W
        R = loss_gradient(self.loss, Y,
                          master.Phi @ (W + master.ws[:, None]) + master.b[None, :])
        G = master.Phi.T @ R                              # ∇_W J, c × T
        active, inactive = 0.0, 0.0
        q, qd = float(self.q), space.qd
        for g in groups:
            Wg, Gg = W[g].ravel(), G[g].ravel()
            nrm = np.linalg.norm(Wg) if q == 2 else np.sum(np.abs(Wg) ** q) ** (1 / q)
            if nrm > 0 and q == 2:
                # ∇ + λ W/‖W‖ = 0 for an active group (eq. 5)
                active = max(active, np.linalg.norm(Gg + self.lam_ * Wg / nrm) / self.lam_)
            elif nrm == 0:
                gn = np.linalg.norm(Gg) if qd == 2 else np.sum(np.abs(Gg) ** qd) ** (1 / qd)
                inactive = max(inactive, max(0.0, gn / self.lam_ - 1.0))      # eq. 6
        viol = space.draw(R)[3]
        return {"active": float(active), "inactive": float(inactive),
                "candidates": float(max(0.0, viol.max(initial=0.0) / self.lam_ - 1.0))}  # eq. 7

    def _fit_allowed(self, X, y, know, callback, fit_params):
        """``exclude``: the features learned over the other inputs (:meth:`BaseSelector
        ._fit_allowed`); ``input_importance_`` spread back over every input (0 on the
        excluded ones)."""
        if self.family == "gabor" or fit_params.get("image_shape") is not None or \
                getattr(self, "image_shape", None) is not None:
            raise ValueError("GrFL: exclude leaves pixels out of an image, and Gabor "
                             "features need the whole grid; use the Fourier family, or "
                             "leave the pixels out of X yourself")
        super()._fit_allowed(X, y, know, callback, fit_params)
        full = np.zeros(self.n_features_in_)
        full[self.allowed_features_] = self.submodel_.input_importance_
        self.input_importance_ = full
        return self

    def _on_allowed(self, X):
        """X's allowed columns when fitted with ``exclude``, else None."""
        if self.__dict__.get("submodel_") is None:
            return None
        from ..kernels import take_columns

        return take_columns(self._validate_X(X, reset=False), self.allowed_features_)

    # ------------------------------------------------------------------ predict
    def transform(self, X):
        """The learned feature responses (n × #generated columns), normalised as in training."""
        from sklearn.utils.validation import check_is_fitted

        allowed = self._on_allowed(X)
        if allowed is not None:
            return self.submodel_.transform(allowed)
        check_is_fitted(self, "_W")
        X = self._validate_X(X, reset=False)
        if not self._params:
            return np.zeros((X.shape[0], 0))
        return self.family_.columns(X, self._params) * self._scales[None, :]

    def _outputs(self, X) -> np.ndarray:
        allowed = self._on_allowed(X)
        if allowed is not None:
            return self.submodel_._outputs(allowed)
        Phi = self.transform(X)
        if Phi.shape[1] == 0:
            return np.repeat(self._b[None, :], X.shape[0], axis=0)
        return Phi @ (self._W + self._ws[:, None]) + self._b[None, :]

    def _raw_scores(self, X):
        F = self._outputs(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        F = self._outputs(X)
        if self._task == "regression":
            return F[:, 0] if F.shape[1] == 1 else F
        if getattr(self, "multitask_", False):
            return np.where(F > 0, 1.0, -1.0)
        if F.shape[1] == 1:
            return self.classes_[(F[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    # ------------------------------------------------------------------ λ path
    def lam_path(self, X, y, lams, **fit_kwargs):
        """Fit along ``lams`` (decreasing), each fit warm-started from the previous one's
        features of non-zero weight and drawing the candidates that follow its draws; returns
        a list of dicts (λ, generated features, objective, fit time, the KKT certificate
        ``kkt`` and ``stop_reason``). Where no fit reaches ``max_features`` the path ends
        where cold fits do (objective within 1–2 % on the XOR design, the same certificate)."""
        out = []
        original = self.get_params()
        self.set_params(warm_start=True)
        try:
            for lam in lams:
                self.set_params(lam=float(lam))
                self.fit(X, y, **fit_kwargs)
                out.append({"lam": float(lam), "n_generated": len(self._params),
                            "objective": self.history_[-1].objective if self.history_
                            else np.nan, "fit_time": self.fit_time_,
                            "kkt": dict(self.kkt_), "stop_reason": self.stop_reason_})
        finally:
            self.set_params(warm_start=original["warm_start"], lam=original["lam"])
        return out


    @classmethod
    def sweep_values(cls, X, y, n_points: int = 10):
        return sorted({int(v) for v in np.geomspace(2, 100, n_points)})


def _active_only(state: WarmStart, group_size: int) -> WarmStart:
    """The warm state without its features of zero weight: a smaller λ would give them weight
    only if the violation test asks for them again, and carried along they would count
    against ``max_features`` (a λ path then stopped at the cap where cold fits do not)."""
    W = np.asarray(state.coef)
    if not len(state.support):
        return state
    shared = np.asarray(state.extra["ws"]).reshape(len(state.support), group_size, -1)
    norms = np.linalg.norm(W.reshape(len(state.support), group_size, -1), axis=(1, 2)) + \
        np.linalg.norm(shared, axis=(1, 2))
    keep = norms > 0
    if keep.all():
        return state
    rows = np.repeat(keep, group_size)
    ws = np.asarray(state.extra["ws"])
    return WarmStart(key=state.key, support=[p for p, k in zip(state.support, keep) if k],
                     coef=W[rows], intercept=state.intercept, step=state.step,
                     extra={**state.extra, "ws": ws[rows] if ws.shape[:1] == rows.shape else ws})


def fixed_family(n_columns: int) -> FixedFamily:
    """A finite family over the columns of X itself (tests: GrFL = the master on the bank)."""
    return FixedFamily(n_columns)

