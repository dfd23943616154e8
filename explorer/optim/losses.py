"""The one table of per-example losses: value, derivative, second derivative, curvature bound,
conjugate and the integer code the numba kernels dispatch on (:data:`NUMBA_CODES` is derived
from this table).

Margin losses are functions of z = y·f(x); :class:`Squared` is the residual loss ½(y − f)².
Every loss also speaks the (y, f) form (``value_at``, ``grad_at``) that datafits and multi-task
masters use. Methods scale them (FGM: ``C Σ l(z_i)``; FSA: the mean over examples). The conjugate is
written at negative arguments, ``conj_neg(a) = l*(−a)``, the form a dual needs: for
``min_w ½Ω(w)² + C Σ l(y_i f_i)`` the dual objective is ``−C Σ l*(−α_i/C) − ½‖Xᵀ(α⊙y)‖²_*``
and the dual variable is recovered from the primal as ``α_i = −C l′(z_i)`` (FGM §5, Remark 4).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

PROX_STEPS = 60  # bound on the safeguarded Newton steps of a loss's proximal map


class MarginLoss:
    """A convex loss of the margin z; subclasses define value, derivative and curvature."""

    name = ""
    curvature = 1.0  # bound on l''(z): the Lipschitz constant of the derivative
    code = -1        # the numba kernels' case for this loss (-1: no compiled path)
    convex = True
    task = "classification"  # what a model of this loss predicts
    unhalved = 1.0  # undoes the table's ½: the loss as GrFL's and FSA's papers write it
    liblinear = None  # scikit-learn's name for it where liblinear fits it (l1_min_c's loss)
    params: tuple[str, ...] = ()  # the shape parameters the loss takes (Huber's h)

    def best_constant(self, y: np.ndarray) -> float | None:
        """argmin_c Σ_i l(y_i, c) in closed form, or None where it has none (a root search
        then finds it: :meth:`~explorer.optim.Datafit.best_constant`)."""
        return None

    @property
    def numba_param(self) -> float:
        """The loss's one shape parameter as the kernels take it (Huber's h; 0 otherwise)."""
        return float(getattr(self, "h", 0.0))

    def value(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError  # abstract

    def derivative(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError  # abstract

    def second_derivative(self, z: np.ndarray) -> np.ndarray:
        """l″(z) (the generalised one at a kink); the constant ``curvature`` unless a loss
        says better."""
        return np.full(np.shape(z), float(self.curvature))

    def conj_neg(self, a: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError  # abstract

    def dual_domain(self) -> tuple[float, float]:
        """Interval of a = −l′(z)."""
        return (0.0, np.inf)

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        """argmin_z t·l(z) + ½(z − v)², element-wise: the root of φ(z) = t·l′(z) + z − v, which
        lies between v and v − t·l′(v) (l′ is monotone). Newton's method kept inside that
        bracket, falling back to bisection when a step would leave it or when the last step did
        not halve the one before (rtsafe's rule); at most ``PROX_STEPS`` steps."""
        if not self.convex:
            raise ValueError(f"the {self.name} loss is not convex: it has no proximal map")
        if not t > 0:
            raise ValueError(f"the proximal step must be positive, got {t!r}")
        v = np.asarray(v, dtype=np.float64)
        other = v - t * self.derivative(v)
        lo, hi = np.minimum(v, other), np.maximum(v, other)
        z = 0.5 * (lo + hi)
        last = hi - lo
        for _ in range(PROX_STEPS):
            phi = t * self.derivative(z) + z - v
            lo = np.where(phi < 0, z, lo)
            hi = np.where(phi > 0, z, hi)
            dx = phi / (t * self.second_derivative(z) + 1.0)
            newton = z - dx
            use = (newton > lo) & (newton < hi) & (2.0 * np.abs(dx) <= np.abs(last))
            step = np.where(use, newton, 0.5 * (lo + hi))
            last = np.abs(step - z)
            z = step
            if np.max(last, initial=0.0) <= 1e-15 * max(1.0, np.max(np.abs(z), initial=0.0)):
                break
        return z

    def argument(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(D, e) with the loss's argument D·f + e: the margin y·f (D = y, e = 0), or for a
        residual loss f − y."""
        y = np.asarray(y, dtype=np.float64)
        return y, np.zeros_like(y)

    def value_at(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """l(y, f) element-wise."""
        return self.value(y * f)

    def grad_at(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """∂l(y, f)/∂f element-wise."""
        return y * self.derivative(y * f)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquaredHinge(MarginLoss):
    """l(z) = ½ max(0, 1 − z)² (FGM's squared hinge: ``(C/2) Σ ξ_i²``)."""

    name = "squared_hinge"
    curvature = 1.0
    code = 0
    unhalved = 2.0
    liblinear = "squared_hinge"

    def value(self, z):
        xi = np.maximum(0.0, 1.0 - z)
        return 0.5 * xi * xi

    def derivative(self, z):
        return -np.maximum(0.0, 1.0 - z)

    def second_derivative(self, z):
        return (np.asarray(z) < 1.0).astype(np.float64)  # 1 where the margin is violated

    def prox(self, v, t):
        """Closed form: v where the margin holds (v ≥ 1), else (v + t)/(1 + t)."""
        v = np.asarray(v, dtype=np.float64)
        return np.where(v >= 1.0, v, (v + t) / (1.0 + t))

    def conj_neg(self, a):
        a = np.asarray(a, dtype=float)
        return np.where(a >= 0, -a + 0.5 * a * a, np.inf)


class Logistic(MarginLoss):
    """l(z) = log(1 + e^{−z})."""

    name = "logistic"
    curvature = 0.25
    code = 1
    liblinear = "log"

    def value(self, z):
        return np.logaddexp(0.0, -z)

    def derivative(self, z):
        return -expit(-z)

    def second_derivative(self, z):
        p = expit(np.abs(z))
        return p * (1.0 - p)

    def conj_neg(self, a):
        a = np.clip(np.asarray(a, dtype=float), 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.where(a > 0, a * np.log(a), 0.0) + np.where(a < 1, (1 - a) * np.log1p(-a), 0.0)
        return h

    def dual_domain(self):
        return (0.0, 1.0)


class HuberHinge(MarginLoss):
    """Huber-smoothed hinge (FSA eq. 7, after Chapelle 2007) of half-width h around z = 1:

    l(z) = 0 if z > 1 + h; (1 + h − z)²/(4h) if |1 − z| ≤ h; 1 − z if z < 1 − h.
    """

    name = "huber_svm"
    code = 2
    params = ("h",)

    def __init__(self, h: float = 0.1):
        self.h = float(h)
        self.curvature = 1.0 / (2.0 * self.h)

    def value(self, z):
        h = self.h
        u = 1.0 - z
        return np.where(u > h, u, np.where(u < -h, 0.0, (u + h) ** 2 / (4 * h)))

    def derivative(self, z):
        h = self.h
        u = 1.0 - z
        return np.where(u > h, -1.0, np.where(u < -h, 0.0, -(u + h) / (2 * h)))

    def second_derivative(self, z):
        return np.where(np.abs(1.0 - np.asarray(z)) <= self.h, 1.0 / (2 * self.h), 0.0)

    def conj_neg(self, a):
        """l*(−a) = −(1 + h)a + h a² on [0, 1] (the supremum sits in the quadratic zone at
        1 − z = 2ha − h), +∞ elsewhere."""
        a = np.asarray(a, dtype=float)
        return np.where((a >= 0) & (a <= 1), -(1.0 + self.h) * a + self.h * a * a, np.inf)

    def dual_domain(self):
        return (0.0, 1.0)


class Lorenz(MarginLoss):
    """Lorenz loss (FSA eq. 8): l(z) = ln(1 + (z − 1)²) for z ≤ 1, 0 otherwise. Non-convex
    (bounded growth), robust to wrong labels; curvature bounded by 2."""

    name = "lorenz"
    curvature = 2.0
    code = 3
    convex = False

    def value(self, z):
        u = np.minimum(z - 1.0, 0.0)
        return np.log1p(u * u)

    def derivative(self, z):
        u = np.minimum(z - 1.0, 0.0)
        return 2.0 * u / (1.0 + u * u)

    def second_derivative(self, z):  # negative beyond |z − 1| = 1: the loss is not convex
        u = np.minimum(np.asarray(z) - 1.0, 0.0)
        return np.where(u < 0.0, 2.0 * (1.0 - u * u) / (1.0 + u * u) ** 2, 0.0)

    def conj_neg(self, a):  # pragma: no cover - non-convex: no dual bound is used
        raise NotImplementedError  # abstract for a non-convex loss


class Squared(MarginLoss):
    """l(y, f) = ½(y − f)² (a residual loss: ``value``/``derivative`` take the residual f − y)."""

    name = "squared"
    curvature = 1.0
    code = 4  # the kernels evaluate it at the residual f − y
    task = "regression"
    unhalved = 2.0

    def best_constant(self, y):
        return float(np.mean(y))

    def value(self, r):
        return 0.5 * r * r

    def derivative(self, r):
        return r

    def value_at(self, y, f):
        return self.value(f - y)

    def grad_at(self, y, f):
        return f - y

    def argument(self, y):
        y = np.asarray(y, dtype=np.float64)
        return np.ones_like(y), -y

    def prox(self, v, t):
        return np.asarray(v, dtype=np.float64) / (1.0 + t)

    def conj_neg(self, a):
        """l*(−a) for l(r) = ½r²: ½a² (no constraint on the sign of a)."""
        a = np.asarray(a, dtype=float)
        return 0.5 * a * a

    def dual_domain(self):
        return (-np.inf, np.inf)


LOSSES = {"squared_hinge": SquaredHinge, "logistic": Logistic, "huber_svm": HuberHinge,
          "lorenz": Lorenz, "squared": Squared}
NUMBA_CODES = {name: cls.code for name, cls in LOSSES.items() if cls.code >= 0}


def make_loss(name: str, **params) -> MarginLoss:
    """The table's loss called ``name`` (a clear error for an unknown one)."""
    try:
        cls = LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; choose one of {sorted(LOSSES)}") from None
    return cls(**params)
