"""Derivatives at exact zeros and of Python floats, and dtypes kept: std of a scalar, x ** 0 at 0, prod at zeros
over any axes (against torch), float32 through exp2/log2/log10 at both orders, and the choices (maximum, clip,
relu) called on Python floats.  Each test failed before its fix (issue 13)."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, jvp
from autodiff.nn import functional as F
from tests.derivative_checks import central_difference


# NaN where the gradient is 0.
def test_std_of_a_scalar_and_over_a_length_one_axis():
    assert grad(anp.std)(3.5) == central_difference(lambda t: float(np.std(t)), 3.5)  # was nan
    x = np.array([[1.0], [2.0]])
    assert gradcheck(lambda x: anp.std(x, axis=1), x, order=1)  # was nan
    assert gradcheck(lambda x: anp.std(x, axis=1), x, order=2)


def test_power_zero_exponent_at_zero():
    assert grad(lambda x: anp.power(x, 0.0))(0.0) == central_difference(lambda t: np.power(t, 0.0), 0.0)  # was nan
    assert grad(grad(lambda x: anp.power(x, 0.0)))(0.0) == 0.0  # was nan; x ** 0 is constant
    assert gradcheck(lambda x: anp.power(x, 0.0), np.array([0.0, 1.5]), order=2)


# float32 became float64 through exp2, log2, log10 (float64 constants in the pullbacks).
@pytest.mark.parametrize("op", [anp.exp2, anp.log2, anp.log10], ids=lambda f: f.__name__)
def test_float32_stays_float32(op):
    x = np.array([0.5, 2.0], np.float32)
    _, tangent = jvp(op, (x,), (np.ones(2, np.float32),))
    assert tangent.dtype == np.float32
    _, second = jvp(grad(lambda y: anp.sum(op(y))), (x,), (np.ones(2, np.float32),))  # was float64
    assert second.dtype == np.float32
    assert gradcheck(lambda y: op(y), x, order=2)


# maximum (and its siblings) crashed on Python floats: a comparison of two floats is a bool.
@pytest.mark.parametrize("f", [
    lambda x: anp.maximum(x, 0.5), lambda x: anp.minimum(0.5, x), lambda x: anp.fmax(x, 2.0),
    lambda x: anp.clip(0.2, x, 1.0), lambda x: anp.clip(x, 0.0, 1.0), lambda x: F.relu(x),
], ids=["maximum", "minimum", "fmax", "clip lower bound", "clip", "relu"])
def test_choices_at_python_floats(f):
    for t in (0.1, 0.6):  # away from the kinks
        assert grad(f)(t) == pytest.approx(central_difference(lambda s: float(f(s)), t))  # maximum raised


# prod at zeros, found by the differential fuzzer (tests/rules/test_fuzz.py): a tuple of axes raised in np.moveaxis,
# and a Python float raised AttributeError; torch has the exact products of the others in both cases.
@pytest.mark.parametrize("axis", [None, 0, (0, 1), (1,), (-1, 0), (2, 1, 0)])
def test_prod_at_zeros_over_any_axes_matches_torch(axis):
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    x[0, 1, 2] = 0.0
    ours = autodiff.grad(lambda a: anp.sum(anp.prod(a, axis=axis)))(x)
    t = torch.tensor(x, requires_grad=True)
    reduced = t
    for d in sorted({d % 3 for d in (range(3) if axis is None else np.atleast_1d(axis))}, reverse=True):
        reduced = reduced.prod(d)
    reduced.sum().backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-12)


def test_prod_of_a_python_float_at_zero():
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    t.prod().backward()
    assert autodiff.grad(anp.prod)(0.0) == t.grad.item()
