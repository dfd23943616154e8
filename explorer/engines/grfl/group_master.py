"""GrFL's restricted master (Rakotomamonjy et al., eq. 17) over the generated columns Φ:

    min_{W, w̃, b}  Σ_t Σ_i L(y_it, (Φ(w_t + w̃) + b_t)_i) + λ_p Σ_g ‖W_g‖_q + λ_s ‖w̃‖₁

with W = [w_1 … w_T] (one column per task), groups g of columns (a Fourier pair is one group)
and an unpenalised intercept per task. Losses as in the paper's Table 2, without ½:
squared hinge max(0, 1 − yf)², logistic log(1 + e^{−yf}), squared (y − f)².

Two solvers over the same problem:

* :func:`fista_master` — accelerated proximal gradient with backtracking and warm starts;
* :func:`admm_master` — the ADMM of §4.1 (splitting a_t = c_t − D_t(Φ(w_t + w̃) + b_t),
  U = W, ũ = w̃; prox of the loss, prox of the norms, and two linear systems whose inverses
  are computed once), with the paper's ξ = max(10/n, 0.1), η = max(10, d).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...optim import (
    COARSE_STALL,
    TINY,
    Composite,
    Datafit,
    GroupLq,
    MasterSolution,
    SolverResult,
    Stopping,
    apg,
    block_size,
    group_norms,
    make_loss,
    prox_groups,
    soft_threshold,
)

LOSSES = ("squared_hinge", "logistic", "squared")  # Table 2's, in the loss table
FINE = Stopping(1e-4, 5000)  # the last master's KKT tolerance and steps per solve


def datafit(loss: str, Y: np.ndarray) -> Datafit:
    """GrFL's Σ_t Σ_i L(y_it, f_it) (Table 2, without ½: the loss's ``unhalved``) from the
    loss table."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {LOSSES}")
    the_loss = make_loss(loss)
    return Datafit(the_loss, Y, scale=the_loss.unhalved, mean=False)


def loss_value(loss: str, Y: np.ndarray, F: np.ndarray) -> float:
    return datafit(loss, Y).value(F)


def loss_gradient(loss: str, Y: np.ndarray, F: np.ndarray) -> np.ndarray:
    """∂L/∂F (n × T): the L′ of the paper's violation h = φᵀL′."""
    return datafit(loss, Y).gradient(F)


def curvature(loss: str) -> float:
    the_loss = make_loss(loss)
    return the_loss.unhalved * the_loss.curvature


@dataclass(frozen=True)
class GroupObjective:
    """Eq. (17) but its columns: targets ``Y`` (n × T), the loss (Table 2's, by its name in
    the loss table), ``lam_p`` on the groups' ℓq norms (``q``), ``lam_s`` on the shared w̃'s
    ℓ1 norm."""

    Y: np.ndarray
    loss: str
    lam_p: float
    lam_s: float = 0.0
    q: float = 2.0


def objective(Phi, groups, spec: GroupObjective, x, block=None) -> float:
    """Eq. (17) at the point ``x`` = (W, w̃, b) over the columns ``Phi``."""
    W, ws, b = x
    F = Phi @ (W + ws[:, None]) + b[None, :]
    return loss_value(spec.loss, spec.Y, F) + \
        spec.lam_p * float(group_norms(W, groups, spec.q, block).sum()) + \
        spec.lam_s * float(np.abs(ws).sum())


class GroupProblem(Composite):
    """Eq. (17) as an APG problem: a point is (W, w̃, b). Its certified measure is the KKT
    residual of (5)–(10): the gradient mapping L·‖x − prox(x − ∇f(x)/L)‖_∞ relative to λ_p
    (zero exactly at the optimum; the dual of eq. 17 with free intercepts has no cheap
    feasible point)."""

    n_parts = 3

    def __init__(self, Phi, groups, spec: GroupObjective, L: float = 1.0):
        self.Phi = Phi
        self.fit = datafit(spec.loss, spec.Y)
        self.omega = GroupLq(groups, spec.lam_p, spec.q, spec.lam_s)
        self.shared = spec.lam_s > 0
        self.L = float(L)

    def outputs(self, x):
        W, ws, b = x
        return self.Phi @ (W + ws[:, None]) + b[None, :]

    def smooth(self, x):
        F = self.outputs(x)
        G = self.fit.gradient(F)
        gW = self.Phi.T @ G
        gs = gW.sum(axis=1) if self.shared else np.zeros_like(x[1])
        return self.fit.value(F), (gW, gs, G.sum(axis=0))

    def prox_step(self, v, grad, step):
        nW, ns = self.omega.prox(v[0] - step * grad[0], v[1] - step * grad[1], step)
        x = (nW, ns, v[2] - step * grad[2])
        return x, self.fit.value(self.outputs(x))

    def penalty(self, x) -> float:
        return self.omega.value(x[0], x[1])

    def measure(self, x, last=None) -> float:
        if last is not None:
            self.L = last[2]
        _, grad = self.smooth(x)
        step = 1.0 / self.L
        new, _ = self.prox_step(x, grad, step)
        residual = max(float(np.abs(a - n).max(initial=0.0)) for a, n in zip(x, new)) / step
        return residual / max(self.omega.lam, TINY)


def _start(Phi, spec: GroupObjective, start):
    """(W, w̃, b) copied from ``start`` (any part None: zeros; w̃ only with a shared λ_s)."""
    c, T = Phi.shape[1], spec.Y.shape[1]
    W0, ws0, b0 = start if start is not None else (None, None, None)
    W = np.zeros((c, T)) if W0 is None else np.array(W0, dtype=np.float64)
    ws = np.zeros(c) if ws0 is None or not spec.lam_s > 0 else np.array(ws0, dtype=np.float64)
    b = np.zeros(T) if b0 is None else np.array(b0, dtype=np.float64)
    return W, ws, b


def fista_master(Phi, groups, spec: GroupObjective, start=None, *, stopping: Stopping,
                 L0: float | None = None, interrupt=None) -> SolverResult:
    """Eq. (17) over the columns ``Phi`` by :func:`explorer.optim.apg.apg` from ``start``
    (W, w̃, b; None: zeros), stopped when the KKT residual (see :class:`GroupProblem`) is at
    most ``stopping.tol``·λ_p (or on ``stopping.stall``). ``x`` of the result is (W, w̃, b)."""
    loss = spec.loss
    W, ws, b = _start(Phi, spec, start)
    # backtracking corrects any start; unit-norm columns give ‖Φ‖₂² ≥ 1
    L = float(L0) if L0 else curvature(loss) * max(float(np.max(np.sum(Phi * Phi, 0),
                                                               initial=0.0)), 1e-12)
    if not np.isfinite(L) or not np.all(np.isfinite(Phi)):
        raise FloatingPointError("FISTA's line search found no step: the loss or its gradient "
                                 "is not finite (check the data and the feature family's "
                                 "parameters)")
    problem = GroupProblem(Phi, groups, spec, L)
    return apg(problem, (W, ws, b), L0=L, stopping=stopping, eta=0.9, interrupt=interrupt)


def _prox_split(loss: str, v: np.ndarray, xi: float) -> np.ndarray:
    """argmin_a s·l(−a) + ξ/2 (a − v)² for the split variable a = −(the loss's argument) of
    §4.1, by the loss table's proximal map (s: Table 2's scale)."""
    the_loss = make_loss(loss)
    return -the_loss.prox(-v, the_loss.unhalved / xi)


def admm_master(Phi, groups, spec: GroupObjective, start=None, *, stopping: Stopping,
                xi: float | None = None, eta: float | None = None,
                interrupt=None) -> SolverResult:
    """The ADMM of §4.1 on eq. (17), with the two linear systems' inverses cached; stopped by
    the same KKT measure as :func:`fista_master` (checked every ``stopping.check_every`` steps
    on the split copies, which carry the prox's exact zeros)."""
    Y, loss, lam_p, lam_s, q = spec.Y, spec.loss, spec.lam_p, spec.lam_s, spec.q
    max_iter = stopping.max_iter
    n, c = Phi.shape
    T = Y.shape[1]
    shared = lam_s > 0
    xi = float(xi) if xi else max(10.0 / n, 0.1)
    eta = float(eta) if eta else max(10.0, float(c))
    eta_s = eta
    # a = c − D (Φ(w_t + w̃) + b_t) is minus the loss's argument D·f + e (c = −e): the margin
    # (D = Y) or the residual (D = 1, c = y); the paper's 1 − y f for the squared hinge is this
    # a shifted by a constant, which leaves the iterates unchanged
    D, e = datafit(loss, Y).loss.argument(Y)
    cvec = -e
    W, ws, b = _start(Phi, spec, start)
    U, us = W.copy(), ws.copy()
    F = Phi @ (W + ws[:, None]) + b[None, :]
    a = cvec - D * F
    mu = np.zeros((n, T))
    nu = np.zeros((c, T))
    nus = np.zeros(c)
    # cached inverses of eq. (26) (w_t, b_t jointly) and eq. (28) (w̃)
    ones = np.ones((n, 1))
    A = np.block([[xi * Phi.T @ Phi + eta * np.eye(c), xi * Phi.T @ ones],
                  [xi * ones.T @ Phi, np.array([[xi * n]])]])
    A_inv = np.linalg.inv(A)
    S_inv = np.linalg.inv(T * xi * Phi.T @ Phi + eta_s * np.eye(c)) if shared else None
    blk = block_size(groups, c)
    trace = [objective(Phi, groups, spec, (W, ws, b), blk)]
    problem = GroupProblem(Phi, groups, spec,
                           curvature(loss) * max(float(np.linalg.norm(Phi, 2)) ** 2, 1e-12))
    converged = False
    measure = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        if interrupt is not None and interrupt():
            break
        F = Phi @ (W + ws[:, None]) + b[None, :]
        z = cvec - D * F
        a = _prox_split(loss, z + mu / xi, xi)
        U = prox_groups(W + nu / eta, groups, lam_p / eta, q, blk)
        if shared:
            us = soft_threshold(ws + nus / eta_s, lam_s / eta_s)
        # target of the fitted values for each task: D(c − a + μ/ξ) (D² = 1)
        target = D * (cvec - a + mu / xi)
        base = target - (Phi @ ws)[:, None]
        rhs = np.vstack([xi * Phi.T @ base - nu + eta * U, xi * base.sum(axis=0, keepdims=True)])
        sol = A_inv @ rhs
        W, b = sol[:c], sol[c]
        if shared:
            resid = (target - Phi @ W - b[None, :]).sum(axis=1)
            ws = S_inv @ (xi * Phi.T @ resid - nus + eta_s * us)
        F = Phi @ (W + ws[:, None]) + b[None, :]
        z = cvec - D * F
        mu += xi * (z - a)
        nu += eta * (W - U)
        if shared:
            nus += eta_s * (ws - us)
        value = objective(Phi, groups, spec, (U, us if shared else ws, b), blk)
        trace.append(value)
        if it % stopping.check_every == 0 or it == max_iter:
            measure = problem.measure((U, us if shared else ws, b))
            if stopping.met(measure):
                converged = True
                break
    final_ws = us if shared else ws
    # the split copies carry the exact zeros of the prox; report the objective there
    x = (U, final_ws, b)
    return SolverResult(x, problem.objective(x), trace, it, converged,
                        problem.measure(x) if not converged else measure)


class GroupMaster:
    """GrFL's restricted master (eq. 17) in the protocol of :func:`~explorer.optim.cutting_plane`
    (``initial``/``add_block``/``solve``/``polish``/``lower_bound``): each block is one or more
    generated groups; the signal it returns is L′ (n × T) at the current outputs, which the
    sampled space scores as violations. Masters inside the loop stop at a KKT residual of
    ``coarse``·λ or (FISTA) on the paper's relative objective change ``COARSE_STALL``, whichever
    first (they only choose the next feature: on xor this is 5–6× faster at the same test
    accuracy); :meth:`polish` solves the last to ``stopping.tol`` (``stopping.max_iter`` steps
    per solve). ``spec.lam_p`` may be set later through ``lam`` (GrFL takes λ from the first
    violations); ``start``: (W, w̃, b) of a warm start, for the first block added.
    """

    def __init__(self, spec: GroupObjective, *, group_size: int = 1, solver: str = "fista",
                 stopping: Stopping = FINE, coarse: float = 1e-1, interrupt=None,
                 start=None):
        if solver not in ("fista", "admm"):
            raise ValueError(f"unknown solver {solver!r}; choose 'fista' or 'admm'")
        self.Y = np.asarray(spec.Y, dtype=np.float64)
        self.loss = spec.loss
        self.lam, self.lam_shared, self.q = float(spec.lam_p), float(spec.lam_s), float(spec.q)
        self.solver = solver
        self.tol = float(stopping.tol)
        self.coarse = max(self.tol, float(coarse))
        self.max_inner = int(stopping.max_iter)
        self.group_size = int(group_size)
        self.interrupt = interrupt
        n, T = self.Y.shape
        self.Phi = np.zeros((n, 0))
        self.groups: list[np.ndarray] = []
        self.columns: list = []
        self.W, self.ws = np.zeros((0, T)), np.zeros(0)
        self.b = np.atleast_1d(datafit(self.loss, self.Y).best_constant()).astype(np.float64)
        self._start = start  # (W, w̃, b) of a warm start, for the first block added
        self._L = None
        self._measure = np.inf
        self.result: SolverResult | None = None

    # --------------------------------------------------------------- protocol
    def initial(self):
        """The empty model: the best constant output per task, its loss and L′."""
        F = np.repeat(self.b[None, :], self.Y.shape[0], axis=0)
        value = loss_value(self.loss, self.Y, F)
        return self._solution(value, F, [value], 0, np.nan)

    def add_block(self, columns) -> None:
        width, g = columns.width, self.group_size
        start = self.Phi.shape[1]
        self.Phi = np.hstack([self.Phi, np.asarray(columns.matrix, dtype=np.float64)])
        self.groups.extend(np.arange(start + i, start + i + g) for i in range(0, width, g))
        self.columns.append(columns)
        W = np.zeros((width, self.Y.shape[1]))
        ws = np.zeros(width)
        if self._start is not None and start == 0 and self._start[0].shape[0] == width:
            W, ws, self.b = (np.array(a, dtype=np.float64) for a in self._start)
            ws = ws if ws.size == width else np.zeros(width)
        self._start = None
        self.W, self.ws = np.vstack([self.W, W]), np.concatenate([self.ws, ws])

    def solve(self, tol: float | None = None):
        spec = GroupObjective(self.Y, self.loss, self.lam, self.lam_shared, self.q)
        coarse = tol is None
        stopping = Stopping(self.coarse if coarse else tol, self.max_inner,
                            stall=COARSE_STALL if coarse and self.solver == "fista" else None)
        if self.solver == "fista":
            res = fista_master(self.Phi, self.groups, spec, (self.W, self.ws, self.b),
                               stopping=stopping, L0=self._L, interrupt=self.interrupt)
        else:
            res = admm_master(self.Phi, self.groups, spec, (self.W, self.ws, self.b),
                              stopping=stopping, interrupt=self.interrupt)
        (self.W, self.ws, self.b), self._L = res.x, res.step_constant
        self._measure = float(res.measure)
        self.result = res
        F = self.Phi @ (self.W + self.ws[:, None]) + self.b[None, :]
        sol = self._solution(res.objective, F, res.trace, res.n_iter, res.measure)
        sol.info["converged"] = bool(res.converged)
        return sol

    def polish(self):
        """Re-solve to ``tol`` (None when the coarse solve already met it)."""
        if self._measure <= self.tol or (self.interrupt is not None and self.interrupt()):
            return None
        return self.solve(self.tol)

    def lower_bound(self, solution, top_scores):
        return None  # no cheap dual point for eq. 17 (free intercepts): the test is the KKT one

    # --------------------------------------------------------------- helpers
    def group_norms(self) -> np.ndarray:
        return group_norms(self.W, self.groups, self.q) if self.groups else np.zeros(0)

    def _solution(self, value, F, trace, steps, measure):
        return MasterSolution(objective=float(value), signal=loss_gradient(self.loss, self.Y, F),
                              trace=list(trace), inner_steps=int(steps),
                              block_norms=self.group_norms(),
                              info={"inner_gap": float(measure)})
