"""linalg.norm's derivatives: complex inputs in every form (against finite differences and torch), rows and vectors
of exact zeros (NaN where a second derivative has no value, never another number), and the default ord over a
2-tuple axis with keepdims (against numpy, finite differences and torch)."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, hessian
from tests.derivative_checks import central_difference
from tests.oracle import needs_torch, torch

# --- complex input, in every form ---

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
    assert grad(f)(0.7) == pytest.approx(central_difference(f, 0.7), rel=1e-6)  # whole: was -1.675; FD 2.0972


@needs_torch
def test_complex_norm_against_torch():
    z = np.array([1 + 2j, -1 + 0.5j, 0.25 - 1j])
    zt = torch.tensor(z, requires_grad=True)
    torch.linalg.vector_norm(zt, ord=3).backward()
    assert np.allclose(grad(lambda z: anp.linalg.norm(z, ord=3))(z), np.conj(zt.grad.numpy()))


def test_complex64_norm_is_float32():
    z = np.array([3 + 4j, 1j], np.complex64)
    assert anp.linalg.norm(z).dtype == np.linalg.norm(z).dtype == np.float32


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


# --- at exact zeros ---

# Hessians at exact zeros: the norm squared through |x| * |x| lost sign's derivative.
@needs_torch
@pytest.mark.parametrize("kwargs", [{"ord": 2}, {"axis": 0}, {"keepdims": True}, {"ord": 2, "axis": -1}])
def test_norm_hessian_at_exact_zeros(kwargs):
    f = lambda v: anp.sum(anp.linalg.norm(v, **kwargs) ** 2)  # noqa: E731
    v = np.array([1.0, 0.0])
    assert gradcheck(f, v, order=2)  # was [[2, 0], [0, 0]] instead of 2 I
    torch_h = torch.autograd.functional.hessian(lambda t: torch.sum(t * t), torch.tensor(v))
    assert np.allclose(hessian(f)(v), torch_h.numpy())


# --- the default ord, a 2-tuple axis and keepdims ---

NORM_CASES = [((2, 3), (0, 1)), ((2, 3), (-2, -1)), ((4, 2, 3), (1, 2)), ((2, 3, 4), (0, 2))]


@pytest.mark.parametrize("shape, axis", NORM_CASES)
@pytest.mark.parametrize("keepdims", [True, False])
def test_norm_default_ord_tuple_axis_matches_numpy(shape, axis, keepdims):
    x = np.random.default_rng(0).standard_normal(shape)
    got = anp.linalg.norm(x, axis=axis, keepdims=keepdims)
    want = np.linalg.norm(x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("shape, axis", NORM_CASES)
@pytest.mark.parametrize("order", [1, 2])
def test_norm_default_ord_tuple_axis_keepdims_passes_gradcheck(shape, axis, order):
    x = np.random.default_rng(1).standard_normal(shape)
    assert gradcheck(lambda m: anp.linalg.norm(m, axis=axis, keepdims=True), x, order=order)


@pytest.mark.parametrize("shape, axis", NORM_CASES)
def test_norm_default_ord_tuple_axis_keepdims_gradient_matches_torch(shape, axis):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    x = np.random.default_rng(2).standard_normal(shape)
    weights = np.random.default_rng(3).standard_normal(np.linalg.norm(x, axis=axis, keepdims=True).shape)
    ours = autodiff.grad(lambda m: anp.sum(anp.linalg.norm(m, axis=axis, keepdims=True) * weights))(x)
    t = torch.tensor(x, requires_grad=True)
    (torch.linalg.norm(t, dim=axis, keepdim=True) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-10, atol=1e-12)
