"""Issue 13's wrong numbers and crashes, one test per bug (and per sibling found auditing them).

Oracles: central finite differences (``gradcheck``, or ``_central`` for a real function of a real
scalar) and PyTorch.  Each test failed before its fix; the issue lists the values it gave.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, hessian, hvp, jvp
from autodiff.nn import functional as F
from autodiff.numpy import _elementwise as E
from tests.oracle import needs_torch, torch


def _central(f, t, eps=1e-6):
    """d f / d t at the real scalar ``t`` (``f`` may return a complex number)."""
    return (f(t + eps) - f(t - eps)) / (2 * eps)


def _value(f):
    """``f`` with its traced result unwrapped, for the finite-difference oracle."""
    return lambda t: complex(autodiff.stop_gradient(f(t))) if np.iscomplexobj(f(t)) else float(f(t))


# 1. abs of a complex input pulled back with z/|z|; JAX's convention needs conj(z)/|z|.
def test_abs_of_complex_grad_and_jvp():
    f = lambda t: anp.abs((1 + 2j) * t + 0.5j)  # noqa: E731
    assert grad(f)(0.3) == pytest.approx(_central(f, 0.3), rel=1e-7)  # was -1.666; FD 2.1926
    _, tangent = jvp(anp.abs, (3 + 4j,), (1j,))
    assert tangent == pytest.approx(_central(lambda t: abs(3 + 4j + 1j * t), 0.0), rel=1e-7)  # was -0.8


# 2. Complex linalg.norm, in every form.
C, D = np.array([1 + 2j, -1 + 0.5j]), np.array([0.3j, 1.0])
M = np.outer(C, [1.0, 2j, -0.5 + 1j])
NORMS = {
    "whole": lambda t: anp.linalg.norm(C * t + D),
    "ord=2": lambda t: anp.linalg.norm(C * t + D, ord=2),
    "ord=3": lambda t: anp.linalg.norm(C * t + D, ord=3),
    "ord=1": lambda t: anp.linalg.norm(C * t + D, ord=1),
    "ord=inf": lambda t: anp.linalg.norm(C * t + D, ord=np.inf),
    "axis": lambda t: anp.sum(anp.linalg.norm(M * t + 1j, axis=0)),
    "keepdims": lambda t: anp.sum(anp.linalg.norm(M * t + 1j, axis=1, keepdims=True)),
    "fro": lambda t: anp.linalg.norm(M * t + 1j, "fro"),
    "fro axes": lambda t: anp.linalg.norm(M * t + 1j, "fro", axis=(0, 1)),
}


@pytest.mark.parametrize("form", NORMS)
def test_complex_norm(form):
    f = NORMS[form]
    assert grad(f)(0.7) == pytest.approx(_central(f, 0.7), rel=1e-6)  # whole: was -1.675; FD 2.0972


@needs_torch
def test_complex_norm_against_torch():
    z = np.array([1 + 2j, -1 + 0.5j, 0.25 - 1j])
    zt = torch.tensor(z, requires_grad=True)
    torch.linalg.vector_norm(zt, ord=3).backward()
    assert np.allclose(grad(lambda z: anp.linalg.norm(z, ord=3))(z), np.conj(zt.grad.numpy()))


def test_complex64_norm_is_float32():
    z = np.array([3 + 4j, 1j], np.complex64)
    assert anp.linalg.norm(z).dtype == np.linalg.norm(z).dtype == np.float32


# 3. NaN where the gradient is 0.
def test_std_of_a_scalar_and_over_a_length_one_axis():
    assert grad(anp.std)(3.5) == _central(lambda t: float(np.std(t)), 3.5)  # was nan
    x = np.array([[1.0], [2.0]])
    assert gradcheck(lambda x: anp.std(x, axis=1), x, order=1)  # was nan
    assert gradcheck(lambda x: anp.std(x, axis=1), x, order=2)


def test_power_zero_exponent_at_zero():
    assert grad(lambda x: anp.power(x, 0.0))(0.0) == _central(lambda t: np.power(t, 0.0), 0.0)  # was nan
    assert grad(grad(lambda x: anp.power(x, 0.0)))(0.0) == 0.0  # was nan; x ** 0 is constant
    assert gradcheck(lambda x: anp.power(x, 0.0), np.array([0.0, 1.5]), order=2)


@pytest.mark.parametrize("ord", [None, 2, 3])
def test_norm_over_an_axis_with_a_zero_row(ord):
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    assert gradcheck(lambda x: anp.linalg.norm(x, ord=ord, axis=1), x)  # was nan in row 0
    h = hessian(lambda x: anp.sum(anp.linalg.norm(x, ord=ord, axis=1)))(x)
    # design.md section 11: the zero row's own second derivatives have no value: NaN (a mixed one, whose truth is
    # 0 as the rows are separate, may be NaN too: never another number); the other row's block stays exact
    assert np.isnan(h[0, :, 0]).all()
    assert np.all(np.isnan(h[0, :, 1]) | (h[0, :, 1] == 0)) and np.all(np.isnan(h[1, :, 0]) | (h[1, :, 0] == 0))
    np.testing.assert_allclose(h[1, :, 1, :], hessian(lambda r: anp.linalg.norm(r, ord=ord))(x[1]), rtol=1e-12)


# 4. Hessians at exact zeros: the norm squared through |x| * |x| lost sign's derivative.
@needs_torch
@pytest.mark.parametrize("kwargs", [{"ord": 2}, {"axis": 0}, {"keepdims": True}, {"ord": 2, "axis": -1}])
def test_norm_hessian_at_exact_zeros(kwargs):
    f = lambda v: anp.sum(anp.linalg.norm(v, **kwargs) ** 2)  # noqa: E731
    v = np.array([1.0, 0.0])
    assert gradcheck(f, v, order=2)  # was [[2, 0], [0, 0]] instead of 2 I
    torch_h = torch.autograd.functional.hessian(lambda t: torch.sum(t * t), torch.tensor(v))
    assert np.allclose(hessian(f)(v), torch_h.numpy())


# 5. A real input's gradient came back complex under nesting (and jvp raised).
B = np.array([1 + 2j, -0.5 + 1j, 0.3 - 0.7j])
B3 = np.array([[1 + 2j, -0.5j, 0.3], [0.2 - 1j, 1.0, 2j]])
MIXED = {
    "outer": lambda a: anp.outer(a, B),
    "outer, complex first": lambda a: anp.outer(B, a),
    "inner": lambda a: anp.inner(B3, a),
    "vdot": lambda a: anp.vdot(B, a),
    "vdot, real first": lambda a: anp.vdot(a, B),
    "tensordot": lambda a: anp.tensordot(B3, a, axes=([1], [0])),
    "dot N-d": lambda a: anp.dot(np.stack([B3, B3 * 1j]), a),
    "concatenate": lambda a: anp.concatenate([a, B]),
    "stack": lambda a: anp.stack([a, B], axis=1),
}


@pytest.mark.parametrize("name", MIXED)
def test_real_operand_of_complex_product_stays_real(name):
    op = MIXED[name]
    a = np.array([0.3, -0.2, 0.5])
    loss = lambda a: anp.real(anp.sum(op(a) ** 2))  # noqa: E731
    assert gradcheck(loss, a, order=2)  # outer: the second-order value was off by about 40%
    (h,) = hvp(loss, (a,), (np.array([1.0, -2.0, 0.5]),))
    assert h.dtype == np.float64
    _, tangent = jvp(op, (a,), (np.array([1.0, 0.0, -1.0]),))  # raised a dtype error
    step = np.array([1.0, 0.0, -1.0])
    fd = (np.asarray(op(a + 1e-6 * step)) - np.asarray(op(a - 1e-6 * step))) / 2e-6
    assert np.allclose(tangent, fd, atol=1e-7)


@needs_torch
def test_outer_second_order_against_torch():
    a = np.array([0.3, -0.2, 0.5])
    inner = lambda a: anp.sum(grad(lambda b: anp.real(anp.sum(anp.outer(b, B) ** 2)))(a) ** 2)  # noqa: E731
    at = torch.tensor(a, requires_grad=True)
    (g,) = torch.autograd.grad(torch.real(torch.sum(torch.outer(at.to(torch.complex128), torch.tensor(B)) ** 2)),
                               at, create_graph=True)
    (want,) = torch.autograd.grad(torch.sum(g**2), at)
    assert np.allclose(grad(inner)(a), want.numpy())


@pytest.mark.parametrize("name", ["sin_backward", "cos_backward", "tanh_backward"])
@pytest.mark.parametrize("real_arg", [0, 1])
def test_fused_second_order_rules_keep_a_real_argument_real(name, real_arg):
    """sin's pullback sin_backward(g, x) and its siblings gave a real argument beside a complex one a
    complex cotangent (a complex g meets a real x when a cotangent arrives through a complex product)."""
    op = getattr(E, name)
    x = np.array([0.3, -0.2, 0.5])
    args = lambda a: (a, B) if real_arg == 0 else (B, a)  # noqa: E731
    loss = lambda a: anp.real(anp.sum(op(*args(a)) ** 2))  # noqa: E731
    assert gradcheck(loss, x, order=2)  # gradcheck also checks the gradient is float64


# 6. float32 became float64 through exp2, log2, log10 (float64 constants in the pullbacks).
@pytest.mark.parametrize("op", [anp.exp2, anp.log2, anp.log10], ids=lambda f: f.__name__)
def test_float32_stays_float32(op):
    x = np.array([0.5, 2.0], np.float32)
    _, tangent = jvp(op, (x,), (np.ones(2, np.float32),))
    assert tangent.dtype == np.float32
    _, second = jvp(grad(lambda y: anp.sum(op(y))), (x,), (np.ones(2, np.float32),))  # was float64
    assert second.dtype == np.float32
    assert gradcheck(lambda y: op(y), x, order=2)


# 7. maximum (and its siblings) crashed on Python floats: a comparison of two floats is a bool.
@pytest.mark.parametrize("f", [
    lambda x: anp.maximum(x, 0.5), lambda x: anp.minimum(0.5, x), lambda x: anp.fmax(x, 2.0),
    lambda x: anp.clip(0.2, x, 1.0), lambda x: anp.clip(x, 0.0, 1.0), lambda x: F.relu(x),
], ids=["maximum", "minimum", "fmax", "clip lower bound", "clip", "relu"])
def test_choices_at_python_floats(f):
    for t in (0.1, 0.6):  # away from the kinks
        assert grad(f)(t) == pytest.approx(_central(lambda s: float(f(s)), t))  # maximum raised AttributeError


# Siblings found auditing the above.
@needs_torch
def test_complex_sign_is_differentiable():
    z = np.array([1 + 2j, -0.5 + 0.1j])
    u = np.array([0.3 - 1j, 2.0 + 0.5j])
    zt = torch.tensor(z, requires_grad=True)
    torch.real(torch.sum(torch.sgn(zt) * torch.tensor(u))).backward()
    assert np.allclose(grad(lambda z: anp.real(anp.sum(anp.sign(z) * u)))(z), np.conj(zt.grad.numpy()))


@needs_torch
def test_complex_var_is_real_and_matches_numpy():
    z = np.array([1 + 2j, 3 - 1j, 0.5j])
    assert np.allclose(anp.var(z), np.var(z)) and np.isrealobj(anp.var(z))
    zt = torch.tensor(z, requires_grad=True)
    torch.var(zt, unbiased=False).backward()
    assert np.allclose(grad(anp.var)(z), np.conj(zt.grad.numpy()))


@needs_torch
def test_complex_slogdet_sign_is_differentiable():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    u = 0.3 - 0.7j
    at = torch.tensor(a, requires_grad=True)
    sign, logdet = torch.linalg.slogdet(at)
    (torch.real(sign * u) + logdet).backward()
    f = lambda a: anp.real(anp.linalg.slogdet(a)[0] * u) + anp.linalg.slogdet(a)[1]  # noqa: E731
    assert np.allclose(grad(f)(a), np.conj(at.grad.numpy()))  # the sign's cotangent was dropped


def test_complex_cholesky_refuses_to_differentiate():
    a = np.array([[2.0, 0.5j], [-0.5j, 1.0]])
    with pytest.raises(NotImplementedError, match="cholesky: the derivative at a complex"):  # was a wrong number
        grad(lambda a: anp.real(anp.sum(anp.linalg.cholesky(a))))(a)


# prod at zeros, found by the differential fuzzer (tests/test_fuzz.py): a tuple of axes raised in np.moveaxis,
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
