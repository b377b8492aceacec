"""Mutation safety: an array a pullback will read cannot be changed in place before the backward pass."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp


def test_mutating_a_saved_constant_inside_the_function_raises():
    c = np.array([1.0, 2.0])

    def f(x):
        y = anp.sum(x * c)  # the pullback of x * c reads c
        c[0] = 100.0
        return y

    with pytest.raises(ValueError, match="read-only"):
        autodiff.grad(f)(np.array([3.0, 4.0]))
    assert c.flags.writeable and c[0] == 1.0  # given back, unchanged


def test_mutating_an_input_between_forward_and_backward_raises():
    x = np.array([0.5, 1.0])
    out, pullback = autodiff.vjp(lambda x: anp.sin(x) * x, x)
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 3.0
    with pytest.raises(ValueError, match="read-only"):
        out[0] = 3.0  # the output is read by some pullbacks too
    expected = autodiff.vjp(lambda x: anp.sin(x) * x, x.copy())[1](np.ones(2))[0]
    np.testing.assert_allclose(pullback(np.ones(2))[0], expected)
    del pullback
    x[0] = 3.0  # writable again once the pullback is gone


def test_views_protect_their_base():
    base = np.arange(6.0)
    view = base[1:4]
    out, pullback = autodiff.vjp(lambda v: anp.sum(v * v), view)
    with pytest.raises(ValueError, match="read-only"):
        base[2] = 7.0
    del pullback
    base[2] = 7.0
    view[0] = 1.0


def test_user_arrays_are_writable_after_grad():
    w, b, data = np.ones((3, 2)), np.zeros(2), np.arange(6.0).reshape(2, 3)
    model = {"w": w, "b": b}
    autodiff.grad(lambda m: anp.sum(anp.tanh(data @ m["w"] + m["b"]) ** 2))(model)
    autodiff.hessian(lambda v: anp.sum(v ** 3 * data[0]))(np.ones(3))
    for a in (w, b, data):
        assert a.flags.writeable


def test_nested_grads_give_every_array_back():
    x, c = np.array([0.3, 0.7]), np.array([2.0, 3.0])
    view = c[:]
    autodiff.grad(lambda x: anp.sum(autodiff.grad(lambda y: anp.sum(y * view * x))(x) * c))(x)
    assert x.flags.writeable and c.flags.writeable and view.flags.writeable


def test_failed_forward_gives_arrays_back():
    c = np.ones(2)
    with pytest.raises(ZeroDivisionError):
        autodiff.grad(lambda x: anp.sum(x * c) + 1 / 0)(np.ones(2))
    assert c.flags.writeable
