"""autodiff.numpy.fft (issue 37): every function × norm × n (shorter, equal, longer) × axis/axes/s × real/complex
input, against four oracles.

- numpy: values and dtypes, float64 and float32 (numpy 2 keeps float32 as complex64);
- finite differences: ``gradcheck`` at orders 1 and 2 (complex inputs under the engine's convention, the
  pairing ``Re(sum(u * v))``, docs/complex.md), JVPs against central differences and against the VJP, and
  forward over reverse (``hvp``) and forward over forward against differences of the gradient and of the loss;
- torch.fft: the gradient of the same real loss (ours is ``conj`` of torch's ``.grad`` for a complex input);
- a loop over examples: ``vmap`` of the transform, of its gradient and of its ``hvp``, with no fallback loop.
"""

import itertools
import warnings

import numpy as np
import pytest

import autodiff.numpy as anp
from autodiff import grad, gradcheck, hvp, jvp, vjp, vmap
from autodiff.extend import BatchingWarning
from tests.oracle import needs_torch, torch

NORMS = [None, "backward", "ortho", "forward"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}  # numpy refuses complex input to these
ONE_AXIS, ONE_AXIS_SHAPE = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"], (5, 6)
N_AXES, N_AXES_SHAPE = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"], (4, 5, 6)
# s and axes as numpy reads them: the function's default, a subset, sizes shorter and longer, axes out of
# order with -1 (the whole axis), one axis repeated (transformed twice), one axis only
AXES_AND_SIZES = [{}, {"axes": (0, 2)}, {"s": (3, 8), "axes": (0, 2)}, {"s": (7, -1), "axes": (2, 1)},
                  {"s": (3, 7), "axes": (1, 1)}, {"axes": (-1,)}]


class Case:
    """One call: ``anp.fft.<name>(x, **kwargs)`` at an input of ``shape``, real or complex."""

    def __init__(self, name, kwargs, complex_input, shape):
        self.name, self.kwargs, self.complex, self.shape = name, kwargs, complex_input, shape

    def ours(self, x):
        return getattr(anp.fft, self.name)(x, **self.kwargs)

    def numpy(self, x):
        return getattr(np.fft, self.name)(x, **self.kwargs)

    def input(self, dtype=np.float64, seed=0, batch=()):
        r = np.random.default_rng(seed)
        x = r.standard_normal(batch + self.shape)
        if self.complex:
            x = x + 1j * r.standard_normal(batch + self.shape)
        return x.astype(np.result_type(dtype, x.dtype))

    def __repr__(self):
        given = "-".join(f"{k}={v}" for k, v in self.kwargs.items())
        return f"{self.name}-{given}-{'complex' if self.complex else 'real'}"


def _kinds(name):
    return [False] if name in REAL_ONLY else [False, True]


def _one_axis_cases():
    for name, axis in itertools.product(ONE_AXIS, (-1, 0)):
        m = ONE_AXIS_SHAPE[axis]
        # n: the default, shorter, longer, and long enough that irfft/hfft pad the spectrum too
        for n, norm, complex_input in itertools.product((None, m - 2, m + 3, 2 * m + 1), NORMS, _kinds(name)):
            yield Case(name, {"n": n, "axis": axis, "norm": norm}, complex_input, ONE_AXIS_SHAPE)


def _n_axes_cases():
    for name, given, norm in itertools.product(N_AXES, AXES_AND_SIZES, NORMS):
        for complex_input in _kinds(name):
            yield Case(name, dict(given, norm=norm), complex_input, N_AXES_SHAPE)


def _shift_cases():
    for name, axes, shape in itertools.product(("fftshift", "ifftshift"), (None, 0, 1, (0, 1), (1, 0)),
                                               ((4, 5), (5, 4))):
        for complex_input in (False, True):
            yield Case(name, {"axes": axes}, complex_input, shape)


CASES = [*_one_axis_cases(), *_n_axes_cases(), *_shift_cases()]
ids = [repr(c) for c in CASES]


def _weights(shape, complex_output, seed=1):
    r = np.random.default_rng(seed)
    w = r.standard_normal(shape)
    return w + 1j * r.standard_normal(shape) if complex_output else w


def _loss(case, lib=anp):
    """A real loss of the transform, quadratic and linear parts (``lib`` is anp or torch)."""
    def loss(x):
        y = case.ours(x) if lib is anp else _torch_call(case, x)
        complex_output = (y.dtype.is_complex if lib is torch else np.iscomplexobj(y))
        w = _weights(tuple(y.shape), complex_output)
        w = torch.tensor(w) if lib is torch else w
        return lib.sum(lib.abs(y) ** 2 * 0.5) + lib.real(lib.sum(y * w))
    return loss


# --- values ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_values_and_dtypes_are_numpys(case, dtype):
    x = case.input(dtype)
    expected = case.numpy(x)
    got = case.ours(x)
    assert got.dtype == expected.dtype  # float32 in, complex64 (or float32) out, as numpy 2
    np.testing.assert_array_equal(got, expected)
    got_traced, _ = vjp(case.ours, x)  # the same value when traced
    np.testing.assert_array_equal(got_traced, expected)


# --- derivatives against finite differences -------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=ids)
def test_gradcheck_orders_1_and_2(case):
    x = case.input()
    assert gradcheck(case.ours, x, order=1)
    assert gradcheck(case.ours, x, order=2)
    assert gradcheck(_loss(case), x, order=2)  # a real loss through the transform, second order


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_float32_stays_single_precision(case):
    x32 = case.input(np.float32)
    y, pullback = vjp(case.ours, x32)
    (g32,) = pullback(_weights(y.shape, np.iscomplexobj(y)).astype(y.dtype))
    (g64,) = vjp(case.ours, x32.astype(np.result_type(x32, np.float64)))[1](_weights(y.shape, np.iscomplexobj(y)))
    assert g32.dtype == x32.dtype
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-4 * np.abs(g64).max())
    _, t32 = jvp(case.ours, (x32,), (case.input(np.float32, seed=2),))
    assert t32.dtype == y.dtype
    assert gradcheck(case.ours, x32, order=2)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_jvp_matches_finite_differences_and_the_vjp(case):
    x, v, eps = case.input(), case.input(seed=2), 1e-6
    y, t = jvp(case.ours, (x,), (v,))
    fd = (case.numpy(x + eps * v) - case.numpy(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-7)
    u = _weights(y.shape, np.iscomplexobj(y), seed=3)
    (ct,) = vjp(case.ours, x)[1](u)
    np.testing.assert_allclose(np.real(np.sum(u * t)), np.real(np.sum(ct * v)), rtol=1e-10)  # <u, Jv> = <J^T u, v>


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_second_order_forward_mode(case):
    """Forward over reverse (``hvp``) against differences of the gradient; forward over forward against the
    second difference of the loss (exact up to rounding: the loss is quadratic)."""
    loss, x, v = _loss(case), case.input(), case.input(seed=2)
    (h,) = hvp(loss, (x,), (v,))
    eps = 1e-6
    fd = (grad(loss)(x + eps * v) - grad(loss)(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-6)
    second = jvp(lambda x: jvp(loss, (x,), (v,))[1], (x,), (v,))[1]
    e = 1e-3
    assert np.isclose(second, (loss(x + e * v) - 2 * loss(x) + loss(x - e * v)) / e ** 2, rtol=1e-5)


# --- torch.fft --------------------------------------------------------------------------------------------------

def _torch_call(case, x):
    kwargs = dict(case.kwargs)
    if "axis" in kwargs:
        kwargs["dim"] = kwargs.pop("axis")
    if "axes" in kwargs:
        kwargs["dim"] = kwargs.pop("axes")
    if kwargs.get("s") is not None:  # numpy's -1: the whole axis, said explicitly (torch reads it otherwise)
        kwargs["s"] = tuple(x.shape[a] if n == -1 else n for n, a in zip(kwargs["s"], kwargs["dim"]))
    return getattr(torch.fft, case.name)(x, **kwargs)


def _distinct_axes(case):
    axes = np.atleast_1d(case.kwargs.get("axes") or ())
    return len(set(axes.tolist())) == len(axes)


TORCH_CASES = [c for c in CASES if _distinct_axes(c)]


@needs_torch
@pytest.mark.parametrize("case", TORCH_CASES, ids=[repr(c) for c in TORCH_CASES])  # torch refuses a repeated dim
def test_gradient_of_a_real_loss_matches_torch(case):
    x = case.input()
    xt = torch.tensor(x, requires_grad=True)
    expected = _torch_call(case, xt).detach().resolve_conj().numpy()
    np.testing.assert_allclose(case.ours(x), expected, rtol=1e-10, atol=1e-12)
    lt = _loss(case, torch)(xt)
    lt.backward()
    ours = grad(_loss(case))(x)
    assert ours.dtype == x.dtype
    torch_grad = xt.grad.resolve_conj().numpy()
    np.testing.assert_allclose(ours, np.conj(torch_grad), rtol=1e-10, atol=1e-10)  # conj: docs/complex.md


# --- vmap --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=ids)
def test_vmap_is_a_loop_over_examples(case):
    xs, vs = case.input(batch=(3,)), case.input(seed=2, batch=(3,))
    loss = _loss(case)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)  # the rules fold the batch: no per-example loop
        values = vmap(case.ours)(xs)
        grads = vmap(grad(loss))(xs)
        hvps = vmap(lambda x, v: hvp(loss, (x,), (v,))[0])(xs, vs)
        through = grad(lambda xs: anp.sum(vmap(loss)(xs)))(xs)  # reverse mode through the batched rules
    np.testing.assert_allclose(values, np.stack([case.numpy(x) for x in xs]), rtol=1e-12, atol=1e-12)
    expected = np.stack([grad(loss)(x) for x in xs])
    np.testing.assert_allclose(grads, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(through, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(hvps, np.stack([hvp(loss, (x,), (v,))[0] for x, v in zip(xs, vs)]), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "ihfft"])
def test_vmap_over_a_later_axis(name):
    """The batch axis elsewhere than first: vmap moves it, and the transform's axis still counts in one example."""
    x = np.random.default_rng(0).standard_normal((4, 3, 6))
    f = lambda x: getattr(anp.fft, name)(x, n=5, axis=0)  # noqa: E731
    expected = np.stack([getattr(np.fft, name)(x[:, b], n=5, axis=0) for b in range(3)])
    np.testing.assert_allclose(vmap(f, in_axes=1)(x), expected, rtol=1e-12, atol=1e-12)


# --- numpy's own functions, and the rest of the surface ----------------------------------------------------------

ROUTED = [n for n in np.fft.__all__ if n not in ("fftfreq", "rfftfreq")]


@pytest.mark.parametrize("name", ROUTED)
def test_numpy_fft_on_a_traced_value_comes_here(name):
    """``np.fft.<name>(traced)`` (numpy's own function) differentiates as ``anp.fft.<name>``: it used to refuse."""
    x = np.random.default_rng(0).standard_normal((4, 6))
    theirs = lambda x: anp.sum(anp.abs(getattr(np.fft, name)(x)) ** 2)  # noqa: E731
    ours = lambda x: anp.sum(anp.abs(getattr(anp.fft, name)(x)) ** 2)  # noqa: E731
    np.testing.assert_array_equal(grad(theirs)(x), grad(ours)(x))
    assert gradcheck(theirs, x, order=2)


def test_fftfreq_and_rfftfreq_are_numpys_constants():
    """Sample frequencies are constants: a spectral derivative penalty, ``sum |2 pi i f fft(x)|^2``, against torch."""
    x = np.random.default_rng(0).standard_normal(8)
    np.testing.assert_array_equal(anp.fft.fftfreq(8, 0.1), np.fft.fftfreq(8, 0.1))
    np.testing.assert_array_equal(anp.fft.rfftfreq(8, 0.1), np.fft.rfftfreq(8, 0.1))
    penalty = lambda x: anp.sum(anp.abs(2j * np.pi * anp.fft.rfftfreq(8) * anp.fft.rfft(x)) ** 2)  # noqa: E731
    assert gradcheck(penalty, x, order=1)
    # The zero frequency puts abs at its kink, whose second derivative is NaN (design.md 11), so the
    # second order is checked on the smooth spelling of the same penalty, |d|^2 = Re(d conj(d)).
    def smooth(x):
        d = 2j * np.pi * anp.fft.rfftfreq(8) * anp.fft.rfft(x)
        return anp.sum(anp.real(d * anp.conj(d)))
    np.testing.assert_allclose(smooth(x), penalty(x), rtol=1e-12)
    assert gradcheck(smooth, x, order=2)
    if torch is not None:
        xt = torch.tensor(x, requires_grad=True)
        k = torch.fft.rfftfreq(8, dtype=torch.float64)
        torch.sum(torch.abs(2j * np.pi * k * torch.fft.rfft(xt)) ** 2).backward()
        np.testing.assert_allclose(grad(penalty)(x), xt.grad.numpy(), rtol=1e-10)


def test_a_spectral_derivative_to_second_order():
    """d/dt of a periodic signal by irfft(i k rfft(x)), the kind of step spectral methods take, twice."""
    n = 16
    t = np.arange(n) * 2 * np.pi / n
    k = anp.fft.rfftfreq(n, 1.0 / n)
    derivative = lambda x: anp.fft.irfft(1j * k * anp.fft.rfft(x), n)  # noqa: E731
    np.testing.assert_allclose(derivative(np.sin(3 * t)), 3 * np.cos(3 * t), atol=1e-12)
    energy = lambda x: anp.sum(derivative(x) ** 2 * (1 + x ** 2))  # noqa: E731
    assert gradcheck(energy, np.sin(t) + 0.3 * np.cos(2 * t), order=2)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfft2"])
def test_out_is_refused_naming_the_function(name):
    x = np.ones((4, 4))
    with pytest.raises(TypeError, match=rf"autodiff\.numpy\.fft\.{name}: out= .* use the returned array"):
        grad(lambda x: anp.sum(anp.abs(getattr(np.fft, name)(x, out=np.empty((4, 4), complex)))))(x)


def test_bad_arguments_get_numpys_errors_or_clear_ones():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="Invalid norm value"):
        grad(lambda x: anp.sum(anp.abs(anp.fft.fft(x, norm="unitary"))))(x)
    with pytest.raises(ValueError, match=r"autodiff\.numpy\.fft\.hfft: invalid norm 'unitary'"):
        anp.fft.hfft(x, norm="unitary")
    with pytest.raises(np.exceptions.AxisError):
        anp.fft.rfft(x, axis=2)
    with pytest.raises(TypeError, match="rfft"):  # numpy's: rfft takes real input only
        grad(lambda z: anp.sum(anp.abs(anp.fft.rfft(z))))(x + 1j)
    with pytest.raises(ValueError, match=r"autodiff\.numpy\.fft\.fftn: s has 1 sizes but axes has 2 axes"):
        anp.fft.fftn(x, s=(3,), axes=(0, 1))
    with pytest.raises(TypeError, match=r"autodiff\.numpy\.fft\.rfft2: axes must be a sequence .* write axes=\(0,\)"):
        anp.fft.rfft2(x, axes=0)  # numpy's: 'int' object is not iterable
    np.testing.assert_array_equal(anp.fft.fftn(x, s=[4], axes=np.array([1])), np.fft.fftn(x, s=[4], axes=np.array([1])))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        anp.fft.fft(x, n=0)


def test_s_without_axes_warns_as_numpy_and_computes_the_same():
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    with pytest.warns(DeprecationWarning, match="axes"):
        expected = np.fft.fftn(x, s=(3, 6))
    with pytest.warns(DeprecationWarning, match=r"autodiff\.numpy\.fft\.fftn: `axes` should not be None"):
        np.testing.assert_array_equal(anp.fft.fftn(x, s=(3, 6)), expected)
    with pytest.warns(DeprecationWarning, match="None"):  # a None size: the one-axis default (irfft's 2 (m - 1))
        expected = np.fft.irfftn(x, s=(None, None), axes=(0, 2))
    with pytest.warns(DeprecationWarning, match=r"autodiff\.numpy\.fft\.irfftn: None in `s` is deprecated"):
        np.testing.assert_array_equal(anp.fft.irfftn(x, s=(None, None), axes=(0, 2)), expected)


def test_grad_of_a_complex_input_is_the_convention():
    """For a real loss of a complex input, ``grad`` is ``dL/dx - i dL/dy`` (docs/complex.md), so the first-order
    change along ``v`` is ``Re(grad * v)``: checked by hand-free finite differences along a complex direction."""
    r = np.random.default_rng(0)
    z, v = r.standard_normal(6) + 1j * r.standard_normal(6), r.standard_normal(6) + 1j * r.standard_normal(6)
    loss = lambda z: anp.sum(anp.abs(anp.fft.fft(z, norm="ortho")) ** 3)  # noqa: E731
    eps = 1e-6
    fd = (loss(z + eps * v) - loss(z - eps * v)) / (2 * eps)
    assert np.isclose(np.real(np.sum(grad(loss)(z) * v)), fd, rtol=1e-7)
