"""Nested differentiation: levels keep outer variables apart, to any order."""

import math

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hessian


def test_closed_over_variable():
    assert grad(lambda x: x * grad(lambda y: x * y)(x))(1.0) == 2.0


def test_closed_over_variable_arrays():
    x0 = np.array([1.0, 2.0])
    f = lambda x: anp.sum(x * grad(lambda y: anp.sum(x * y))(x))  # noqa: E731
    np.testing.assert_allclose(grad(f)(x0), 2 * x0)


def _nth(f, n):
    for _ in range(n):
        f = grad(f)
    return f


def test_fourth_derivative_of_sin():
    assert math.isclose(_nth(anp.sin, 4)(0.5), math.sin(0.5), rel_tol=1e-12)


def test_fifth_derivative_of_sin_and_exp():
    assert math.isclose(_nth(anp.sin, 5)(0.5), math.cos(0.5), rel_tol=1e-12)
    assert math.isclose(_nth(lambda x: anp.exp(2 * x), 5)(0.3), 32 * math.exp(0.6), rel_tol=1e-12)


def test_fifth_derivative_of_tanh_against_finite_differences():
    d4 = _nth(anp.tanh, 4)
    h = 1e-4
    fd = (d4(0.3 + h) - d4(0.3 - h)) / (2 * h)
    assert math.isclose(_nth(anp.tanh, 5)(0.3), fd, rel_tol=1e-6)


def rosenbrock(x):
    return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    n = len(x)
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        h[i + 1, i + 1] += 200
        h[i, i + 1] = h[i + 1, i] = -400 * x[i]
    return h


def test_hessian_of_rosenbrock_is_analytic():
    x = np.random.default_rng(1).standard_normal(6)
    np.testing.assert_allclose(hessian(rosenbrock)(x), rosenbrock_hessian(x), rtol=1e-12)


def test_hvp_equals_hessian_times_vector():
    rng = np.random.default_rng(2)
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    (hv,) = autodiff.hvp(rosenbrock, (x,), (v,))
    np.testing.assert_allclose(hv, rosenbrock_hessian(x) @ v, rtol=1e-12)


def test_jvp_matches_jacobian():
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    f = lambda x: anp.sin(x) * anp.sum(x ** 2)  # noqa: E731
    out, tangent = autodiff.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tangent, autodiff.jacobian(f)(x) @ v, rtol=1e-12)
    assert autodiff.gradcheck(f, x)


def test_third_order_through_jacobian_of_hessian():
    x = np.array([0.3, -0.7])
    third = autodiff.jacobian(hessian(lambda x: anp.sum(x ** 4)))(x)
    expected = np.zeros((2, 2, 2))
    for i in range(2):
        expected[i, i, i] = 24 * x[i]
    np.testing.assert_allclose(third, expected, rtol=1e-12)


def test_inner_derivative_does_not_see_outer_variable_as_its_own():
    # d/dx of g(x) = d/dy [sin(x * y)] at y=1  = cos(x) - x sin(x)... differentiate again.
    g = lambda x: grad(lambda y: anp.sin(x * y))(1.0)  # noqa: E731
    x = 0.4
    assert math.isclose(g(x), math.cos(x) * x)
    assert math.isclose(grad(g)(x), math.cos(x) - x * math.sin(x), rel_tol=1e-12)
