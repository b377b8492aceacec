"""Complex inputs through abs, sign, var, slogdet and cholesky, and a real operand of a complex product (which must
get a real gradient, at second order and in forward mode too), under JAX's convention.

Oracles: central finite differences (``gradcheck``, or ``central_difference`` for a real function of a real
scalar) and PyTorch.  Each test failed before its fix (issue 13 lists the values it gave).
"""

import numpy as np
import pytest

import autodiff.numpy as anp
from autodiff import grad, gradcheck, hvp, jvp
from tests import internals
from tests.derivative_checks import central_difference
from tests.oracle import needs_torch, torch


# abs of a complex input pulled back with z/|z|; JAX's convention needs conj(z)/|z|.
def test_abs_of_complex_grad_and_jvp():
    f = lambda t: anp.abs((1 + 2j) * t + 0.5j)  # noqa: E731
    assert grad(f)(0.3) == pytest.approx(central_difference(f, 0.3), rel=1e-7)  # was -1.666; FD 2.1926
    _, tangent = jvp(anp.abs, (3 + 4j,), (1j,))
    assert tangent == pytest.approx(central_difference(lambda t: abs(3 + 4j + 1j * t), 0.0), rel=1e-7)  # was -0.8


# A real input's gradient came back complex under nesting (and jvp raised).
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
    op = getattr(internals, name)
    x = np.array([0.3, -0.2, 0.5])
    args = lambda a: (a, B) if real_arg == 0 else (B, a)  # noqa: E731
    loss = lambda a: anp.real(anp.sum(op(*args(a)) ** 2))  # noqa: E731
    assert gradcheck(loss, x, order=2)  # gradcheck also checks the gradient is float64


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
