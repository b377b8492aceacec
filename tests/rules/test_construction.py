"""anp.array / anp.asarray of nested lists mixing traced values and constants (issue 13).

Oracles: PyTorch (``torch.stack`` of the same entries) for values and
gradients, ``gradcheck`` at order 2; the op table checks generated shapes.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck
from tests.oracle import needs_torch, torch


def _torch_grads(f, *arrays):
    """Gradients in the engine's convention (the conjugate of torch's for complex inputs)."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    f(*ts).backward()
    return [t.grad.numpy().conj() if np.iscomplexobj(a) else t.grad.numpy() for a, t in zip(arrays, ts)]


def mixed(x, y, lib):
    """``[[x0, 2y, 3], (x1 y, 1, y)]``, a sine and weights: every leaf kind in one nested list."""
    if lib is anp:
        a = anp.array([[x[0], y * 2.0, 3.0], (x[1] * y, 1.0, y)])
    else:
        three, one = torch.tensor(3.0, dtype=y.dtype), torch.tensor(1.0, dtype=y.dtype)
        a = torch.stack([torch.stack([x[0], y * 2.0, three]), torch.stack([x[1] * y, one, y])])
    weights = np.arange(6.0).reshape(2, 3)
    return (lib.sin(a) * (weights if lib is anp else torch.tensor(weights))).sum()


def test_constants_give_plain_numpy_arrays():
    for obj in ([1.0, 2.0], [[1, 2], [3, 4]], [np.ones(2), [3.0, 4.0]]):
        out = anp.array(obj)
        assert type(out) is np.ndarray and out.dtype == np.array(obj).dtype
        np.testing.assert_array_equal(out, np.array(obj))
        assert type(anp.asarray(obj)) is np.ndarray


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_dtype_does_not_depend_on_tracing(dtype):
    """Python scalars are weak whether or not a leaf is traced (numpy's own np.array would widen here)."""
    x = np.array(1.5, dtype)
    plain = anp.array([x, 2.5])
    traced, _ = autodiff.vjp(lambda t: anp.array([t, 2.5]), x)
    assert type(plain) is np.ndarray and plain.dtype == np.result_type(traced) == dtype


@needs_torch
def test_mixed_list_matches_torch():
    x, y = np.array([0.3, -1.2]), np.float64(0.7)
    ours = autodiff.grad(lambda x, y: mixed(x, y, anp), argnums=(0, 1))(x, y)
    theirs = _torch_grads(lambda x, y: mixed(x, y, torch), x, np.array(0.7))
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1])
    assert gradcheck(lambda x, y: mixed(x, y, anp), x, y, order=2)


def test_values_match_numpy():
    x, y = np.array([0.3, -1.2]), 0.7
    out = autodiff.vjp(lambda x: anp.array([[x[0], y * 2.0, 3.0], (x[1] * y, 1.0, y)]), x)[0]
    np.testing.assert_array_equal(out, np.array([[0.3, 1.4, 3.0], (-1.2 * 0.7, 1.0, 0.7)]))


@needs_torch
def test_rows_of_traced_arrays_and_scalars():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, -0.5])

    def f(x, y, lib):
        if lib is anp:
            a = anp.array([x, [y[0], 2.0, y[1] * x[0]]])
        else:
            a = torch.stack([x, torch.stack([y[0], torch.tensor(2.0, dtype=x.dtype), y[1] * x[0]])])
        return (a ** 3).sum()

    ours = autodiff.grad(lambda x, y: f(x, y, anp), argnums=(0, 1))(x, y)
    for o, t in zip(ours, _torch_grads(lambda x, y: f(x, y, torch), x, y)):
        np.testing.assert_allclose(o, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_kept(dtype):
    x = np.array([0.5, 2.0], dtype)
    out, pullback = autodiff.vjp(lambda x: anp.array([x, x * 3.0, [1.0, 2.0]]), x)
    assert out.dtype == dtype and out.shape == (3, 2)
    (g,) = pullback(np.ones((3, 2), dtype))
    assert g.dtype == dtype
    np.testing.assert_array_equal(g, np.full(2, 4.0, dtype))


def test_explicit_dtype_casts_back():
    x = np.array([0.5, 2.0], np.float32)
    out, pullback = autodiff.vjp(lambda x: anp.array([x, x], dtype=np.float64), x)
    assert out.dtype == np.float64
    assert pullback(np.ones((2, 2)))[0].dtype == np.float32


@needs_torch
def test_complex_and_real_leaves_against_torch():
    """A real leaf of a complex array gets a real gradient (the real part), a complex leaf the conjugate of torch's."""
    z, r = np.array(0.4 + 1.1j), np.array(-0.8)
    c = np.array([1.0 - 2.0j, 0.5 + 0.3j])

    def f(z, r, lib):
        a = anp.array([z, r * 2.0]) if lib is anp else torch.stack([z, (r * 2.0).to(z.dtype)])
        cc = c if lib is anp else torch.tensor(c)
        return lib.real(lib.sum(a * a * cc)) if lib is anp else (a * a * cc).sum().real

    gz, gr = autodiff.grad(lambda z, r: f(z, r, anp), argnums=(0, 1))(z, r)
    tz, tr = _torch_grads(lambda z, r: f(z, r, torch), z, r)
    assert np.result_type(gr).kind == "f"
    np.testing.assert_allclose(gz, tz)
    np.testing.assert_allclose(gr, tr)


def test_second_order_and_nesting():
    """d/dx [x * d/dy sum([x y, y^2])] at y = 1 is d/dx [x (x + 2)] = 2x + 2; the inner list holds the outer x."""
    def outer(x):
        inner = autodiff.grad(lambda y: anp.sum(anp.array([x * y, y * y])))(1.0)
        return x * inner

    assert autodiff.grad(outer)(1.5) == pytest.approx(5.0)
    assert gradcheck(outer, 1.5, order=2)


def test_long_list_of_scalars():
    """More leaves than numpy's argument limit for result_type, each its own traced scalar."""
    x = np.linspace(-1.0, 1.0, 150)
    g = autodiff.grad(lambda x: anp.sum(anp.array([x[i] * float(i) for i in range(150)]) ** 2))(x)
    np.testing.assert_allclose(g, 2.0 * x * np.arange(150.0) ** 2)


def test_asarray_of_a_traced_value_is_that_value():
    seen = []
    autodiff.grad(lambda x: seen.append(anp.asarray(x) is x) or anp.sum(x))(np.ones(2))
    assert seen == [True]


def test_ndmin():
    out = autodiff.vjp(lambda x: anp.array([x, 2.0], ndmin=3), 1.0)[0]
    assert out.shape == (1, 1, 2)


def test_ragged_list_raises_naming_array():
    with pytest.raises(ValueError, match=r"autodiff\.numpy\.array: the nested sequence is ragged"):
        autodiff.grad(lambda x: anp.sum(anp.array([x, [1.0, 2.0]])))(np.ones(3))


@needs_torch
def test_reductions_take_lists_against_torch():
    x, y = np.array(0.3), np.array(-1.4)

    def f(x, y, lib):
        if lib is anp:
            spread = anp.std([x * 2.0, y, 1.0]) + anp.var((x, y * y))
            return anp.mean([x, y, 3.0]) + spread + anp.linalg.norm([x, y, 2.0])
        c = [torch.tensor(v, dtype=x.dtype) for v in (3.0, 1.0, 2.0)]
        spread = torch.stack([x * 2.0, y, c[1]]).std(unbiased=False) + torch.stack([x, y * y]).var(unbiased=False)
        return torch.stack([x, y, c[0]]).mean() + spread + torch.linalg.norm(torch.stack([x, y, c[2]]))

    ours = autodiff.grad(lambda x, y: f(x, y, anp), argnums=(0, 1))(x, y)
    for o, t in zip(ours, _torch_grads(lambda x, y: f(x, y, torch), x, y)):
        np.testing.assert_allclose(o, t)
    assert gradcheck(lambda x, y: f(x, y, anp), x, y, order=2)
