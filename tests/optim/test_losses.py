"""The loss table against independent references: derivatives by finite differences,
conjugates by numerical maximisation, curvature bounds by second differences, and the numba
kernels' codes against the table's values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from explorer.optim.losses import LOSSES, NUMBA_CODES, make_loss

Z = np.linspace(-3.0, 3.0, 61)
CONVEX = [name for name, cls in LOSSES.items() if cls.convex]
# every loss at its defaults, and Huber's hinge at another width
CASES = [(name, {}) for name in sorted(LOSSES)] + [("huber_svm", {"h": 0.3})]
CONVEX_CASES = [(name, kw) for name, kw in CASES if LOSSES[name].convex]


@pytest.mark.parametrize(("name", "kw"), CASES)
def test_derivative_is_the_finite_difference_of_the_value(name, kw):
    loss = make_loss(name, **kw)
    h = 1e-6
    fd = (loss.value(Z + h) - loss.value(Z - h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(Z), fd, atol=5e-6)  # h-wide kinks


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_curvature_bounds_the_second_difference(name):
    loss = make_loss(name)
    h = 1e-3
    second = (loss.derivative(Z + h) - loss.derivative(Z - h)) / (2 * h)
    assert np.all(np.abs(second) <= loss.curvature * (1 + 1e-6) + 1e-9)


@pytest.mark.parametrize(("name", "kw"), CONVEX_CASES)
@pytest.mark.parametrize("a", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_conjugate_is_the_supremum(name, kw, a):
    """l*(−a) = sup_z (−a z − l(z)), found by a bounded scalar search."""
    loss = make_loss(name, **kw)
    res = minimize_scalar(lambda z: a * z + float(loss.value(np.array([z]))[0]),
                          bounds=(-50.0, 50.0), method="bounded",
                          options={"xatol": 1e-12})
    assert float(loss.conj_neg(np.array([a]))[0]) == pytest.approx(-res.fun, abs=1e-6)


@pytest.mark.parametrize("name,outside", [("squared_hinge", [-0.1]),
                                          ("huber_svm", [-0.1, 1.1])])
def test_conjugate_is_infinite_outside_the_dual_domain(name, outside):
    """A dual value built from an α outside the domain must not look like a finite bound."""
    loss = make_loss(name)
    assert np.all(np.isinf(loss.conj_neg(np.array(outside))))


def test_numba_codes_are_derived_from_the_table_and_agree_with_it():
    from explorer.kernels._numba import _loss_derivative, _loss_value

    assert NUMBA_CODES == {"squared_hinge": 0, "logistic": 1, "huber_svm": 2, "lorenz": 3,
                           "squared": 4}
    for name, code in NUMBA_CODES.items():
        for loss in ([make_loss(name, h=0.1), make_loss(name, h=0.7)] if name == "huber_svm"
                     else [make_loss(name)]):
            h = loss.numba_param
            assert _loss_value(Z, code, h) == pytest.approx(float(loss.value(Z).sum()),
                                                            rel=1e-12)
            np.testing.assert_allclose(_loss_derivative(Z, code, np.empty_like(Z), h),
                                       loss.derivative(Z), atol=1e-15)




def test_unknown_loss_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        make_loss("hinge")








@pytest.mark.parametrize("name", sorted(LOSSES))
def test_second_derivative_is_the_finite_difference_of_the_derivative(name):
    """Away from the kinks (where the table gives the generalised value of one side)."""
    loss = make_loss(name)
    h = 1e-6
    z = Z[np.abs(Z - 1.0) > 0.15]  # the squared hinge's, Huber's and Lorenz's kinks near 1
    fd = (loss.derivative(z + h) - loss.derivative(z - h)) / (2 * h)
    np.testing.assert_allclose(loss.second_derivative(z), fd, atol=1e-5)
    assert np.all(loss.second_derivative(Z) <= loss.curvature * (1 + 1e-9))


@pytest.mark.parametrize(("name", "kw"), CONVEX_CASES)
@pytest.mark.parametrize("t", [1e-3, 0.5, 2.0, 50.0])
def test_prox_is_the_minimiser_found_by_a_scalar_search(name, kw, t):
    """The table's proximal map (closed forms, and the safeguarded Newton shared by the
    others) against Brent's method on t·l(z) + ½(z − v)² at points on every piece."""
    loss = make_loss(name, **kw)
    v = np.linspace(-4.0, 4.0, 33)
    got = loss.prox(v, t)
    for vi, zi in zip(v, got):
        def objective(z, vi=vi):
            return t * float(loss.value(np.array(z))) + 0.5 * (z - vi) ** 2
        ref = minimize_scalar(objective, bracket=(vi - 1.0, vi + 1.0), tol=1e-12).x
        assert objective(zi) <= objective(ref) + 1e-12
        assert abs(zi - ref) < 1e-5


@pytest.mark.parametrize("t", [0.0, -1.0, float("nan")])
def test_prox_refuses_a_step_that_is_not_positive(t):
    with pytest.raises(ValueError, match="positive"):
        make_loss("logistic").prox(np.zeros(3), t)


def test_a_non_convex_loss_has_no_prox():
    with pytest.raises(ValueError, match="not convex"):
        make_loss("lorenz").prox(np.zeros(3), 1.0)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_argument_map_gives_the_loss_the_table_evaluates(name):
    """D·f + e is the argument ``value_at`` evaluates the loss at (margin or residual)."""
    rng = np.random.default_rng(1)
    y = np.sign(rng.standard_normal(20)) if name != "squared" else rng.standard_normal(20)
    f = rng.standard_normal(20)
    loss = make_loss(name)
    D, e = loss.argument(y)
    np.testing.assert_allclose(loss.value(D * f + e), loss.value_at(y, f), rtol=1e-15)
