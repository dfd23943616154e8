"""Independent references for the solvers: generic conic programs solved by Clarabel.

These formulate the same problems from scratch (second-order and exponential cones), so a test
that compares a method against them does not compare the method with itself.
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp


def _solve(P, q, A, b, cones, *, tol=1e-10):
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = tol
    settings.tol_gap_rel = tol
    settings.tol_feas = tol
    solver = clarabel.DefaultSolver(sp.csc_matrix(sp.triu(P)), np.asarray(q, float),
                                    sp.csc_matrix(A), np.asarray(b, float), cones, settings)
    sol = solver.solve()
    assert "Solved" in str(sol.status), sol.status
    return np.array(sol.x), sol.obj_val


class _Rows:
    """Accumulates constraint rows s = b − A x with their cones."""

    def __init__(self, nvar):
        self.nvar = nvar
        self.rows, self.b, self.cones = [], [], []

    def add(self, coefs: list[dict], rhs: list[float], cone):
        for c, r in zip(coefs, rhs):
            row = np.zeros(self.nvar)
            for k, v in c.items():
                row[k] += v
            self.rows.append(row)
            self.b.append(r)
        self.cones.append(cone)

    def matrices(self):
        return np.array(self.rows), np.array(self.b), self.cones


def prox_l1_squared_reference(g_blocks, tau):
    """argmin_ω τ/2‖ω − g‖² + ½(Σ_t‖ω_t‖)² as an SOCP."""
    sizes = [len(g) for g in g_blocks]
    W, T = sum(sizes), len(sizes)
    nvar = W + T + 1
    g = np.concatenate(g_blocks)
    P = sp.diags(np.concatenate([np.full(W, tau), np.zeros(T), [1.0]]))
    q = np.concatenate([-tau * g, np.zeros(T), [0.0]])
    rows = _Rows(nvar)
    t_idx = W + T
    rows.add([{**{W + k: 1.0 for k in range(T)}, t_idx: -1.0}], [0.0],
             clarabel.NonnegativeConeT(1))
    start = 0
    for k, size in enumerate(sizes):
        rows.add([{W + k: -1.0}] + [{start + i: -1.0} for i in range(size)], [0.0] * (size + 1),
                 clarabel.SecondOrderConeT(size + 1))
        start += size
    A, b, cones = rows.matrices()
    x, _ = _solve(P, q, A, b, cones)
    out, start = [], 0
    for size in sizes:
        out.append(x[start:start + size])
        start += size
    return out


def l12_master_reference(blocks, y, C, loss="squared_hinge", fit_intercept=True):
    """min ½(Σ_t‖ω_t‖)² + C Σ l(y_i (Σ_t A_t ω_t + b)_i) by a conic solver.

    Returns (list of ω_t, b, objective).
    """
    A_all = np.hstack(blocks)
    n, W = A_all.shape
    T = len(blocks)
    sizes = [blk.shape[1] for blk in blocks]
    iw, ib, iu, it = 0, W, W + 1, W + 1 + T
    base = it + 1
    if loss == "squared_hinge":
        ixi = base
        nvar = base + n
        P = sp.diags(np.concatenate([np.zeros(base - 1), [1.0], np.full(n, C)]))
        q = np.zeros(nvar)
    else:
        iv, ia, ic = base, base + n, base + 2 * n
        nvar = base + 3 * n
        P = sp.diags(np.concatenate([np.zeros(base - 1), [1.0], np.zeros(3 * n)]))
        q = np.zeros(nvar)
        q[iv:iv + n] = C
    rows = _Rows(nvar)
    if not fit_intercept:
        rows.add([{ib: 1.0}], [0.0], clarabel.ZeroConeT(1))
    rows.add([{**{iu + k: 1.0 for k in range(T)}, it: -1.0}], [0.0],
             clarabel.NonnegativeConeT(1))
    start = 0
    for k, size in enumerate(sizes):
        rows.add([{iu + k: -1.0}] + [{iw + start + i: -1.0} for i in range(size)],
                 [0.0] * (size + 1), clarabel.SecondOrderConeT(size + 1))
        start += size
    for i in range(n):
        margin = {iw + j: y[i] * A_all[i, j] for j in range(W)}
        margin[ib] = y[i]
        if loss == "squared_hinge":
            # ξ_i + y_i f_i − 1 ≥ 0 and ξ_i ≥ 0
            rows.add([{**{k: -v for k, v in margin.items()}, ixi + i: -1.0}], [-1.0],
                     clarabel.NonnegativeConeT(1))
            rows.add([{ixi + i: -1.0}], [0.0], clarabel.NonnegativeConeT(1))
        else:
            # a_i ≥ exp(−y_i f_i − v_i), c_i ≥ exp(−v_i), a_i + c_i ≤ 1
            rows.add([{**margin, iv + i: 1.0}, {}, {ia + i: -1.0}], [0.0, 1.0, 0.0],
                     clarabel.ExponentialConeT())
            rows.add([{iv + i: 1.0}, {}, {ic + i: -1.0}], [0.0, 1.0, 0.0],
                     clarabel.ExponentialConeT())
            rows.add([{ia + i: 1.0, ic + i: 1.0}], [1.0], clarabel.NonnegativeConeT(1))
    A, b, cones = rows.matrices()
    x, obj = _solve(P, q, A, b, cones)
    omegas, start = [], 0
    for size in sizes:
        omegas.append(x[iw + start:iw + start + size])
        start += size
    return omegas, float(x[ib]), float(obj)


def fgm_relaxation_reference(X, y, C, B, fit_intercept=True, pinned=()):
    """The optimum P* of FGM's convex relaxation (eq. 9) for the squared hinge, via its dual

    max_{α≥0 (, αᵀy=0)} Σα − ‖α‖²/(2C) − ½ Σ_{top B} (x_jᵀ(α⊙y))²

    with the top-B sum written as min_θ Bθ + Σ_j max(0, r_j − θ), r_j ≥ (x_jᵀ(α⊙y))².
    ``pinned`` features have d_j = 1 outside the budget (D = {d_pinned = 1, Σ_others d ≤ B}):
    their r_j enter the sum whole, the top B is over the others.
    """
    n, m = X.shape
    ia, ith, isv, ir = 0, n, n + 1, n + 1 + m
    nvar = ir + m
    # minimise the negated dual: −Σα + ‖α‖²/(2C) + ½Bθ + ½Σs
    P = sp.diags(np.concatenate([np.full(n, 1.0 / C), np.zeros(1 + 2 * m)]))
    q = np.concatenate([-np.ones(n), [0.5 * B], np.full(m, 0.5), np.zeros(m)])
    rows = _Rows(nvar)
    for i in range(n):
        rows.add([{ia + i: -1.0}], [0.0], clarabel.NonnegativeConeT(1))
    if fit_intercept:
        rows.add([{ia + i: y[i] for i in range(n)}], [0.0], clarabel.ZeroConeT(1))
    for j in range(m):
        rows.add([{isv + j: -1.0}], [0.0], clarabel.NonnegativeConeT(1))
        if j in pinned:  # ½ r_j itself (its s_j stays at 0)
            q[ir + j] = 0.5
        else:
            rows.add([{isv + j: -1.0, ith: -1.0, ir + j: 1.0}], [0.0],
                     clarabel.NonnegativeConeT(1))
        # r ≥ q² ⇔ ‖(2q, r − 1)‖ ≤ r + 1, q = Σ_i α_i y_i x_ij
        qrow = {ia + i: y[i] * X[i, j] for i in range(n)}
        rows.add([{ir + j: -1.0}, {k: -2 * v for k, v in qrow.items()}, {ir + j: -1.0}],
                 [1.0, 0.0, -1.0], clarabel.SecondOrderConeT(3))
    A, b, cones = rows.matrices()
    x, obj = _solve(P, q, A, b, cones)
    return -float(obj)


def cut_problem_reference(Pmat, q, beta, bounds, C, R, fit_intercept=True):
    """min ½(Σ‖w_t‖)² + Cξ, ξ ≥ ⟨w,p_k⟩ + bβ_k + q_k, ξ ≥ 0, |b| ≤ R — as a primal SOCP."""
    W, K = Pmat.shape
    T = len(bounds)
    iw, ib, iu, it, ixi = 0, W, W + 1, W + 1 + T, W + 2 + T
    nvar = ixi + 1
    P = sp.diags(np.concatenate([np.zeros(it), [1.0], [0.0]]))
    qv = np.zeros(nvar)
    qv[ixi] = C
    rows = _Rows(nvar)
    rows.add([{ixi: -1.0}], [0.0], clarabel.NonnegativeConeT(1))
    for k in range(K):
        # ξ − ⟨w,p_k⟩ − bβ_k − q_k ≥ 0
        coef = {iw + j: Pmat[j, k] for j in range(W)}
        coef[ib] = beta[k]
        coef[ixi] = -1.0
        rows.add([coef], [-q[k]], clarabel.NonnegativeConeT(1))
    R = R if fit_intercept else 0.0
    rows.add([{ib: 1.0}, {ib: -1.0}], [R, R], clarabel.NonnegativeConeT(2))
    rows.add([{**{iu + t: 1.0 for t in range(T)}, it: -1.0}], [0.0],
             clarabel.NonnegativeConeT(1))
    for t, (a, b) in enumerate(bounds):
        rows.add([{iu + t: -1.0}] + [{iw + j: -1.0} for j in range(a, b)], [0.0] * (b - a + 1),
                 clarabel.SecondOrderConeT(b - a + 1))
    A, bvec, cones = rows.matrices()
    x, obj = _solve(P, qv, A, bvec, cones)
    return x[:W], float(x[ib]), float(obj)


def group_lasso_reference(Phi, Y, groups, loss, lam, q_is_2=True):
    """min Σ_t Σ_i L + λ Σ_g ‖W_g‖₂ (+ free b_t) for squared hinge / squared losses, as an
    SOCP: t_i ≥ max(0, 1 − y f)² via rotated cones; group norms via SOC."""
    n, c = Phi.shape
    T = Y.shape[1]
    iw, ib = 0, c * T
    ie = ib + T               # slack e_{i,t} (hinge part) or residual
    it = ie + n * T           # squared terms s_{i,t} ≥ e²
    ig = it + n * T           # group norm bounds
    nvar = ig + len(groups)
    qv = np.zeros(nvar)
    qv[it:it + n * T] = 1.0
    qv[ig:] = lam
    rows = _Rows(nvar)

    def wvar(j, t):
        return iw + j * T + t

    for t in range(T):
        for i in range(n):
            e = ie + i * T + t
            f = {wvar(j, t): Phi[i, j] for j in range(c)}
            f[ib + t] = 1.0
            if loss == "squared_hinge":
                # e ≥ 1 − y f, e ≥ 0
                rows.add([{**{k: -Y[i, t] * v for k, v in f.items()}, e: -1.0}], [-1.0],
                         clarabel.NonnegativeConeT(1))
                rows.add([{e: -1.0}], [0.0], clarabel.NonnegativeConeT(1))
            else:
                # e = y − f
                rows.add([{**f, e: 1.0}], [Y[i, t]], clarabel.ZeroConeT(1))
            s = it + i * T + t
            # s ≥ e² ⇔ ‖(2e, s − 1)‖ ≤ s + 1
            rows.add([{s: -1.0}, {e: -2.0}, {s: -1.0}], [1.0, 0.0, -1.0],
                     clarabel.SecondOrderConeT(3))
    for k, g in enumerate(groups):
        entries = [{wvar(j, t): -1.0} for j in g for t in range(T)]
        rows.add([{ig + k: -1.0}] + entries, [0.0] * (len(entries) + 1),
                 clarabel.SecondOrderConeT(len(entries) + 1))
    A, b, cones = rows.matrices()
    x, obj = _solve(sp.csc_matrix((nvar, nvar)), qv, A, b, cones)
    W = x[:c * T].reshape(c, T)
    return W, x[ib:ib + T], float(obj)


def grfl_reference(X, y, lam_rel, *, sigma, n_candidates=50, max_features=300, seed=0):
    """Rakotomamonjy, Flamary & Yger (2013), Algorithm 1 written out for random Fourier pairs:
    candidates v ~ N(0, σ⁻²I) give unit-norm columns [cos vᵀx, sin vᵀx]; the loss is the
    squared hinge Σ max(0, 1 − y f)² with a free intercept and the group penalty λ Σ_g ‖w_g‖;
    each step draws ``n_candidates`` pairs and adds the one of largest violation ‖φᵀL′‖ while
    it exceeds λ (λ = ``lam_rel`` × the largest violation at the intercept-only model), and
    the restricted problem is solved by FISTA to a 1e-9 step. Returns a predict function."""
    rng = np.random.default_rng(seed)
    n, d = X.shape

    def columns(A, V):
        Z = A @ V.T
        out = np.empty((A.shape[0], 2 * V.shape[0]))
        out[:, 0::2], out[:, 1::2] = np.cos(Z), np.sin(Z)
        return out

    def dloss(f):
        return -2.0 * y * np.maximum(0.0, 1.0 - y * f)

    b = 0.0
    for _ in range(200):  # the intercept-only model
        b -= dloss(np.full(n, b)).sum() / (2.0 * n)
    V, scale, w, lam = np.zeros((0, d)), np.zeros(0), np.zeros(0), None
    while True:
        Phi = columns(X, V) * scale if V.shape[0] else np.zeros((n, 0))
        r = dloss(Phi @ w + b)
        cand = rng.standard_normal((n_candidates, d)) / sigma
        C = columns(X, cand)
        norms = np.linalg.norm(C, axis=0)
        violation = np.linalg.norm(((C / norms).T @ r).reshape(-1, 2), axis=1)
        lam = lam_rel * violation.max() if lam is None else lam
        j = int(np.argmax(violation))
        if violation[j] <= lam * (1 + 1e-4) or V.shape[0] >= max_features:
            break
        V = np.vstack([V, cand[j]])
        scale = np.append(scale, 1.0 / norms[2 * j:2 * j + 2])
        A = np.hstack([columns(X, V) * scale, np.ones((n, 1))])
        L = 2.0 * np.linalg.norm(A, 2) ** 2
        z = np.append(np.append(w, [0.0, 0.0]), b)
        previous, t = z.copy(), 1.0
        for k in range(3000):
            u = z + (t - 1.0) / (t + 2.0) * (z - previous) if k else z
            step = u - A.T @ dloss(A @ u) / L
            W = step[:-1].reshape(-1, 2)
            norm = np.linalg.norm(W, axis=1, keepdims=True)
            step[:-1] = (W * np.maximum(0.0, 1.0 - (lam / L) / np.maximum(norm, 1e-300))).ravel()
            previous, z, t = z, step, t + 1.0
            if np.linalg.norm(z - previous) <= 1e-9 * max(1.0, np.linalg.norm(z)):
                break
        w, b = z[:-1], z[-1]

    def predict(X_new):
        if not V.shape[0]:
            return np.sign(np.full(X_new.shape[0], b))
        return np.sign(columns(X_new, V) * scale @ w + b)

    return predict
