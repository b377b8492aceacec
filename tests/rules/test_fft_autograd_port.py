"""HIPS autograd's ``tests/test_fft.py`` (43 cases), ported: the same functions, sizes and arguments, checked
our way.

autograd's ``check_grads`` runs reverse mode to order 2 against finite differences; here ``gradcheck`` does
that (orders 1 and 2; complex inputs under the engine's convention, docs/complex.md), and, since we have
forward mode too, the JVP is checked against central differences.  One case reads differently:
autograd refuses ``rfftn`` of odd sizes (``test_rfftn_odd_not_implemented`` expects ``NotImplementedError``);
we differentiate every size, so the port checks that case's derivatives like every other.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck

fft = anp.fft
rng = np.random.default_rng(1)


def _matrix(*shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def _hermitian_like(fun, mat):
    """autograd feeds the inverse real transforms a spectrum (``rfft`` of the matrix); so do we."""
    return getattr(fft, fun.__name__[1:])(mat) if fun.__name__.startswith("ir") else mat


def check(fun, x):
    assert gradcheck(fun, x, order=1)
    assert gradcheck(fun, x, order=2)
    v = rng.standard_normal(np.shape(x)) + (1j * rng.standard_normal(np.shape(x)) if np.iscomplexobj(x) else 0)
    eps = 1e-6
    _, tangent = autodiff.jvp(fun, (x,), (v,))
    np.testing.assert_allclose(tangent, (fun(x + eps * v) - fun(x - eps * v)) / (2 * eps), rtol=1e-6, atol=1e-7)


# --- one axis ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [{}, {"norm": "ortho"}, {"axis": 0}], ids=["fft", "fft_ortho", "fft_axis"])
def test_fft(kwargs):
    check(lambda x: fft.fft(x, **kwargs), _matrix(5, 5))


def test_ifft():
    check(fft.ifft, _matrix(5, 5))


@pytest.mark.parametrize("kwargs", [{}, {"norm": "ortho"}, {"axis": 0}], ids=["rfft", "rfft_ortho", "rfft_axes"])
def test_rfft(kwargs):
    check(lambda x: fft.rfft(x, **kwargs), _matrix(4, 4, scale=0.1))


@pytest.mark.parametrize("kwargs", [{}, {"norm": "ortho"}], ids=["irfft", "irfft_ortho"])
def test_irfft(kwargs):
    check(lambda x: fft.irfft(x, **kwargs), fft.rfft(_matrix(4, 4, scale=0.1)))


# n shorter and longer than the input, autograd's check_fft_n: D + n points
N_CASES = [(fft.fft, 5, -2), (fft.fft, 5, 2), (fft.ifft, 5, -2), (fft.ifft, 5, 2),
           (fft.rfft, 4, -2), (fft.rfft, 4, 2), (fft.irfft, 4, -2), (fft.irfft, 4, 2)]


@pytest.mark.parametrize("fun, d, n", N_CASES, ids=[f"{f.__name__}_n_{'smaller' if n < 0 else 'bigger'}"
                                                   for f, d, n in N_CASES])
def test_fft_n(fun, d, n):
    check(lambda x: fun(x, d + n), _hermitian_like(fun, _matrix(d, d)))


# --- several axes --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fun, d", [(fft.fft2, 5), (fft.ifft2, 5), (fft.fftn, 5), (fft.ifftn, 5), (fft.rfft2, 4),
                                    (fft.irfft2, 4), (fft.rfftn, 4), (fft.irfftn, 4)],
                         ids=lambda v: v.__name__ + "_s" if callable(v) else str(v))
def test_fft_s(fun, d):
    """autograd's check_fft_s: s = [D + 2, D - 2] along axes [0, 2] of a D x D x D array."""
    check(lambda x: fun(x, s=[d + 2, d - 2], axes=[0, 2]), _hermitian_like(fun, _matrix(d, d, d, scale=0.1)))


def test_ifft2():
    check(fft.ifft2, _matrix(5, 5))


@pytest.mark.parametrize("fun, d", [(fft.fft2, 5), (fft.fftn, 5), (fft.rfft2, 4)],
                         ids=lambda v: v.__name__ if callable(v) else str(v))
def test_forward_2d(fun, d):
    check(fun, _matrix(d, d, scale=0.1))


def test_ifftn():
    check(fft.ifftn, _matrix(5, 5))


def test_irfft2():
    check(fft.irfft2, fft.rfft2(_matrix(4, 4, scale=0.1)))


def test_rfftn():
    check(fft.rfftn, _matrix(4, 4, 4, scale=0.1))


def test_rfftn_odd():
    """autograd raises NotImplementedError for odd sizes; ours differentiates them."""
    check(fft.rfftn, _matrix(5, 5, 5, scale=0.1))


def test_rfftn_subset():
    check(lambda x: fft.rfftn(x)[(0, 1, 0), (3, 3, 2)], _matrix(4, 4, 4, scale=0.1))


def test_rfftn_axes():
    check(lambda x: fft.rfftn(x, axes=(0, 2)), _matrix(4, 4, 4, scale=0.1))


def test_irfftn():
    check(fft.irfftn, fft.rfftn(_matrix(4, 4, 4, scale=0.1)))


def test_irfftn_subset():
    check(lambda x: fft.irfftn(x)[(0, 1, 0), (3, 3, 2)], fft.rfftn(_matrix(4, 4, 4, scale=0.1)))


# --- shifts --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fun", [fft.fftshift, fft.ifftshift], ids=lambda f: f.__name__)
@pytest.mark.parametrize("d, kwargs", [(5, {}), (4, {}), (5, {"axes": 1})], ids=["odd", "even", "axes"])
def test_shift(fun, d, kwargs):
    check(lambda x: fun(x, **kwargs), _matrix(d, d, scale=0.1))
