"""Traced values as numpy code uses them (issue 36 item 13): the ``.any()`` / ``.all()`` methods with numpy's
signature, and a 0-d traced value written into a plain array raising our DetachError, not numpy's "setting an
array element with a sequence".  The oracle for the methods is numpy's own method on the same values.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import DetachError, grad, jvp, vmap

M = np.array([[0.0, 1.5], [2.0, -3.0], [0.0, 0.0]])

CALLS = {
    "no arguments": ((), {}),
    "axis": ((0,), {}),
    "axis keyword, keepdims": ((), {"axis": 1, "keepdims": True}),
    "tuple axis": (((0, 1),), {}),
    "where": ((), {"where": np.array([True, False])}),
    "axis and where": ((), {"axis": 0, "where": np.array([[True, False], [False, True], [True, True]])}),
}


@pytest.mark.parametrize("method", ["any", "all"])
@pytest.mark.parametrize("call", list(CALLS))
def test_any_and_all_methods_are_numpys(method, call):
    args, kwargs = CALLS[call]
    want = getattr(M, method)(*args, **kwargs)
    seen = {}

    def f(m):
        seen["got"] = getattr(m, method)(*args, **kwargs)
        seen["on_a_mask"] = getattr(m > 1.0, method)(*args, **kwargs)  # a comparison's plain mask
        return anp.sum(m ** 2)

    np.testing.assert_allclose(grad(f)(M), 2 * M)  # the gradient is untouched by the test
    np.testing.assert_array_equal(seen["got"], want)
    assert np.shape(seen["got"]) == np.shape(want)
    np.testing.assert_array_equal(seen["on_a_mask"], getattr(M > 1.0, method)(*args, **kwargs))
    jvp(f, M, np.ones_like(M))  # forward mode's dual values have the methods too
    np.testing.assert_array_equal(seen["got"], want)


def test_any_and_all_branch_a_python_if_inside_grad():
    """The use the methods exist for: a branch on the data, differentiated on the branch taken."""

    def loss(x):
        return anp.sum(x ** 2) if x.all() else anp.sum(anp.sin(x))  # x.all(): no entry is zero

    x, with_a_zero = np.array([0.5, 2.0]), np.array([0.0, 2.0])
    np.testing.assert_allclose(grad(loss)(x), 2 * x)
    np.testing.assert_allclose(grad(loss)(with_a_zero), np.cos(with_a_zero))
    assert autodiff.gradcheck(loss, x)


def test_any_with_an_axis_under_vmap_is_per_example():
    xs = np.array([[1.0, 0.0], [0.0, 0.0], [3.0, 4.0]])
    got = vmap(lambda x: x.reshape(1, 2).any(axis=1))(xs)
    np.testing.assert_array_equal(got, np.stack([x.reshape(1, 2).any(axis=1) for x in xs]))


def _store_into_a_plain_array(value_of_x):
    def f(x):
        a = np.zeros(3)
        a[0] = value_of_x(x)
        return anp.sum(x)

    return f


@pytest.mark.parametrize("piece", [
    lambda x: anp.sum(x),      # 0-d
    lambda x: x[0],            # 0-d, by indexing
    lambda x: x[:1],           # one element
])
@pytest.mark.parametrize("transform", [
    lambda f: grad(f)(np.array([1.0, 2.0])),
    lambda f: jvp(f, np.array([1.0, 2.0]), np.ones(2)),
    lambda f: vmap(f)(np.ones((2, 2))),
    lambda f: autodiff.hessian(f)(np.array([1.0, 2.0])),
    lambda f: grad(lambda x: anp.sum(grad(f)(x)))(np.array([1.0, 2.0])),
], ids=["grad", "jvp", "vmap", "hessian", "grad of grad"])
def test_a_traced_value_written_into_a_plain_array_raises_our_detach_error(piece, transform):
    with pytest.raises(DetachError, match=r"a\[i\] = x.*anp\.stack.*stop_gradient") as info:
        transform(_store_into_a_plain_array(piece))
    assert "setting an array element with a sequence" not in str(info.value)


def test_a_users_own_ragged_assignment_keeps_numpys_error():
    """Only numpy's wrapping of our error is undone: a list written into an element is the user's own mistake."""

    def f(x):
        a = np.zeros(3)
        a[0] = [1.0, 2.0]
        return anp.sum(x)

    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        grad(f)(np.ones(2))


def test_a_plain_value_written_into_a_plain_array_still_works():
    def f(x):
        a = np.zeros(2)
        a[0] = autodiff.stop_gradient(anp.sum(x))  # the documented way to keep a constant
        return anp.sum(x * a[0])

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad(f)(x), np.full(2, x.sum()))
