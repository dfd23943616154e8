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

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from .prox import prox_group_lq, soft_threshold

LOSSES = ("squared_hinge", "logistic", "squared")


def loss_value(loss: str, Y: np.ndarray, F: np.ndarray) -> float:
    if loss == "squared_hinge":
        return float(np.sum(np.maximum(0.0, 1.0 - Y * F) ** 2))
    if loss == "logistic":
        return float(np.sum(np.logaddexp(0.0, -Y * F)))
    return float(np.sum((Y - F) ** 2))


def loss_gradient(loss: str, Y: np.ndarray, F: np.ndarray) -> np.ndarray:
    """∂L/∂F (n × T): the L′ of the paper's violation h = φᵀL′."""
    if loss == "squared_hinge":
        return -2.0 * Y * np.maximum(0.0, 1.0 - Y * F)
    if loss == "logistic":
        return -Y * expit(-Y * F)
    return -2.0 * (Y - F)


def curvature(loss: str) -> float:
    return {"squared_hinge": 2.0, "logistic": 0.25, "squared": 2.0}[loss]


def _block_size(groups, c: int) -> int:
    """g if the groups are the consecutive blocks [0, g), [g, 2g), … covering all c columns
    (GrFL's layout), else 0."""
    if not groups:
        return 0
    g = len(groups[0])
    if g == 0 or len(groups) * g != c:
        return 0
    first = np.fromiter((grp[0] for grp in groups), dtype=np.int64, count=len(groups))
    if not np.array_equal(first, np.arange(0, c, g)):
        return 0
    return g if all(len(grp) == g and grp[-1] == grp[0] + g - 1 for grp in groups) else 0


def group_norms(W: np.ndarray, groups, q: float, block: int | None = None) -> np.ndarray:
    """‖W_g‖_q per group; ``block`` is :func:`_block_size` when the caller knows it."""
    if not groups:
        return np.zeros(0)
    g = _block_size(groups, W.shape[0]) if block is None else block
    if g:
        A = np.abs(W.reshape(len(groups), -1))
        return A.max(axis=1) if q == np.inf else np.sum(A ** q, axis=1) ** (1.0 / q)
    return np.array([np.sum(np.abs(W[grp]) ** q) ** (1.0 / q) if q != np.inf
                     else np.abs(W[grp]).max() for grp in groups])


def prox_groups(V: np.ndarray, groups, threshold: float, q: float,
                block: int | None = None) -> np.ndarray:
    """Prox of threshold·Σ_g ‖V_g‖_q (each group's block flattened over its columns and tasks)."""
    g = _block_size(groups, V.shape[0]) if block is None else block
    if g:
        return prox_group_lq(V.reshape(len(groups), -1), threshold, q).reshape(V.shape)
    out = V.copy()
    for grp in groups:
        block = V[grp].reshape(1, -1)
        out[grp] = prox_group_lq(block, threshold, q).reshape(V[grp].shape)
    return out


@dataclass
class MasterResult:
    W: np.ndarray
    w_shared: np.ndarray
    b: np.ndarray
    objective: float
    n_iter: int
    trace: list = field(default_factory=list)
    converged: bool = False
    step_constant: float | None = None   # FISTA's last Lipschitz estimate (a warm L0)


def objective(Phi, Y, W, ws, b, groups, loss, lam_p, lam_s, q, block=None) -> float:
    F = Phi @ (W + ws[:, None]) + b[None, :]
    return loss_value(loss, Y, F) + lam_p * float(group_norms(W, groups, q, block).sum()) + \
        lam_s * float(np.abs(ws).sum())


MAX_BACKTRACKS = 100  # doublings of L per step: every loop has a bound


def fista_master(Phi, Y, groups, loss, lam_p, lam_s=0.0, q=2.0, W0=None, ws0=None, b0=None,
                 tol=1e-6, max_iter=5000, L0=None, kkt_tol=None,
                 interrupt=None) -> MasterResult:
    """Accelerated proximal gradient with backtracking (Beck & Teboulle) on eq. (17).

    Stops when the objective changes by at most ``tol`` relative, or — with ``kkt_tol`` — when
    the gradient mapping L·(z − prox(z − ∇f(z)/L)), the residual of the optimality conditions
    (5)–(10), is at most ``kkt_tol``·λ_p in every entry."""
    n, c = Phi.shape
    T = Y.shape[1]
    shared = lam_s > 0
    W = np.zeros((c, T)) if W0 is None else W0.copy()
    ws = np.zeros(c) if ws0 is None or not shared else ws0.copy()
    b = np.zeros(T) if b0 is None else b0.copy()
    blk = _block_size(groups, c)
    # backtracking corrects any start; unit-norm columns give ‖Φ‖₂² ≥ 1
    L = float(L0) if L0 else curvature(loss) * max(float(np.max(np.sum(Phi * Phi, 0),
                                                               initial=0.0)), 1e-12)
    F0 = objective(Phi, Y, W, ws, b, groups, loss, lam_p, lam_s, q, blk)
    trace = [F0]
    zW, zs, zb = W.copy(), ws.copy(), b.copy()
    t = 1.0
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        if interrupt is not None and interrupt():
            break
        Fz = Phi @ (zW + zs[:, None]) + zb[None, :]
        fz = loss_value(loss, Y, Fz)
        G = loss_gradient(loss, Y, Fz)
        gW = Phi.T @ G
        gs = gW.sum(axis=1) if shared else np.zeros(c)
        gb = G.sum(axis=0)
        for _ in range(MAX_BACKTRACKS):
            nW = prox_groups(zW - gW / L, groups, lam_p / L, q, blk)
            ns = soft_threshold(zs - gs / L, lam_s / L) if shared else zs
            nb = zb - gb / L
            Fn = Phi @ (nW + ns[:, None]) + nb[None, :]
            fn = loss_value(loss, Y, Fn)
            dW, ds, db = nW - zW, ns - zs, nb - zb
            model = fz + float(np.sum(gW * dW) + gs @ ds + gb @ db) + \
                0.5 * L * float(np.sum(dW * dW) + ds @ ds + db @ db)
            if fn <= model + 1e-12 * max(1.0, abs(model)):
                break
            L *= 2.0
        else:  # 2^100 × the curvature estimate: only NaN or inf data get here
            raise FloatingPointError("FISTA's line search found no step: the loss or its "
                                     "gradient is not finite (check the data and the "
                                     "feature family's parameters)")
        F_new = fn + lam_p * float(group_norms(nW, groups, q, blk).sum()) + \
            lam_s * float(np.abs(ns).sum())
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        if F_new > trace[-1]:  # adaptive restart
            t_next = 1.0
            beta = 0.0
        else:
            beta = (t - 1.0) / t_next
        zW = nW + beta * (nW - W)
        zs = ns + beta * (ns - ws)
        zb = nb + beta * (nb - b)
        change = abs(trace[-1] - F_new)
        W, ws, b, t = nW, ns, nb, t_next
        trace.append(F_new)
        L *= 0.9  # let the step grow back
        if kkt_tol is not None:
            residual = L * max(np.abs(dW).max(initial=0.0), np.abs(ds).max(initial=0.0),
                               np.abs(db).max(initial=0.0))
            done = residual <= kkt_tol * lam_p
        else:
            done = change <= tol * max(abs(F_new), 1e-12)
        if done:
            converged = True
            break
    return MasterResult(W, ws, b, trace[-1], n_iter, trace, converged, step_constant=L)


def _prox_loss(loss: str, v: np.ndarray, xi: float) -> np.ndarray:
    """argmin_a L(a) + ξ/2 (a − v)² for the split variable a of each loss (Table 2)."""
    if loss == "squared_hinge":       # L(a) = max(0, a)², a = 1 − y f
        return np.where(v > 0, xi * v / (xi + 2.0), v)
    if loss == "squared":             # L(a) = a², a = y − f
        return xi * v / (xi + 2.0)
    a = v.copy()                      # L(a) = log(1 + e^a), a = −y f: Newton on σ(a) + ξ(a−v)
    for _ in range(30):
        s = expit(a)
        step = (s + xi * (a - v)) / (s * (1 - s) + xi)
        a -= step
        if np.max(np.abs(step)) < 1e-12:
            break
    return a


def admm_master(Phi, Y, groups, loss, lam_p, lam_s=0.0, q=2.0, W0=None, ws0=None, b0=None,
                tol=1e-6, max_iter=5000, xi=None, eta=None, interrupt=None) -> MasterResult:
    """The ADMM of §4.1 on eq. (17), with the two linear systems' inverses cached."""
    n, c = Phi.shape
    T = Y.shape[1]
    shared = lam_s > 0
    xi = float(xi) if xi else max(10.0 / n, 0.1)
    eta = float(eta) if eta else max(10.0, float(c))
    eta_s = eta
    # a = c_t − D_t (Φ(w_t + w̃) + b_t): D = Y, c = 1 (squared hinge); D = Y, c = 0 (logistic);
    # D = I, c = y (squared)
    if loss == "squared":
        D = np.ones_like(Y)
        cvec = Y.copy()
    else:
        D = Y.copy()
        cvec = np.ones_like(Y) if loss == "squared_hinge" else np.zeros_like(Y)
    W = np.zeros((c, T)) if W0 is None else W0.copy()
    ws = np.zeros(c) if ws0 is None or not shared else ws0.copy()
    b = np.zeros(T) if b0 is None else b0.copy()
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
    blk = _block_size(groups, c)
    trace = [objective(Phi, Y, W, ws, b, groups, loss, lam_p, lam_s, q, blk)]
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        if interrupt is not None and interrupt():
            break
        F = Phi @ (W + ws[:, None]) + b[None, :]
        z = cvec - D * F
        a = _prox_loss(loss, z + mu / xi, xi)
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
        value = objective(Phi, Y, U, us if shared else ws, b, groups, loss, lam_p, lam_s, q,
                          blk)
        primal = np.linalg.norm(z - a) + np.linalg.norm(W - U) + \
            (np.linalg.norm(ws - us) if shared else 0.0)
        change = abs(trace[-1] - value)
        trace.append(value)
        if it > 2 and change <= tol * max(abs(value), 1e-12) and \
                primal <= np.sqrt(tol) * max(1.0, np.linalg.norm(F)):
            converged = True
            break
    final_ws = us if shared else ws
    # the split copies carry the exact zeros of the prox; report the objective there
    return MasterResult(U, final_ws, b,
                        objective(Phi, Y, U, final_ws, b, groups, loss, lam_p, lam_s, q),
                        it, trace, converged)
