"""Scatter-add (issue 37): ``anp.add_at(a, indices, values)``, numpy's ``np.add.at`` returning the sum, and
``anp.add.at``, numpy's in place for plain arrays.

Oracles: numpy's ``np.add.at`` for values (every kind of index, dtypes, broadcasting); finite differences at
orders 1 and 2 with forward mode against reverse mode; torch's ``index_add`` and ``scatter_add`` for values and
gradients; vmap (over ``a``, ``indices`` and ``values``) against a loop.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import DetachError
from tests.derivative_checks import check_derivatives, check_vmap
from tests.oracle import needs_torch, torch

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 3))

INDEX_CASES = [  # (indices, shape of values): repeats, negatives, tuples, slices, masks, broadcasting
    (np.array([0, 2, 0, 0]), (4, 3)),
    (np.array([-1, 3, 1]), (3, 3)),
    ((np.array([0, 0, 3]), np.array([1, 1, 2])), (3,)),
    ((np.array([[0], [0]]), np.array([1, 2])), (2, 2)),
    ((slice(None), np.array([2, 2, 0])), (4, 3)),
    ((np.array([1, 1]), slice(0, 2)), (2, 2)),
    (np.array([True, False, True, True]), (3, 3)),
    (2, (3,)),
    ((Ellipsis, 1), (4,)),
    (np.array([[0, 1], [1, 1]]), (2, 2, 3)),
    (np.array([0, 0, 1]), ()),  # a scalar value broadcast over the selection
    (np.array([0, 0, 1]), (3,)),  # a row broadcast over the selected rows
]


@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_values_match_numpys_add_at(case):
    indices, vshape = INDEX_CASES[case]
    v = RNG.standard_normal(vshape)
    expected = A.copy()
    np.add.at(expected, indices, v)
    before = A.copy()
    got = anp.add_at(A, indices, v)
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-15)  # the values summed first, then a: an ulp
    np.testing.assert_array_equal(A, before)  # a new array: a is left as it was


@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_differentiable_in_a_and_values_to_second_order(case):
    indices, vshape = INDEX_CASES[case]
    v = RNG.standard_normal(vshape)
    check_derivatives(lambda a, v: anp.add_at(a, indices, v) ** 2, A, v)


@pytest.mark.parametrize("a_dtype, v, expected_dtype", [
    (np.float32, np.array([1.5, 2.5]), np.float32), (np.complex128, np.array([1.0, 2.0]), np.complex128),
    (np.int64, np.array([1, 2]), np.int64), (np.float64, 3, np.float64),
])
def test_the_result_has_as_dtype_as_numpy_adds_in_place(a_dtype, v, expected_dtype):
    a = np.ones(3, a_dtype)
    expected = a.copy()
    np.add.at(expected, [0, 0], v)
    got = anp.add_at(a, [0, 0], v)
    assert got.dtype == expected.dtype == expected_dtype
    np.testing.assert_allclose(got, expected, rtol=1e-7)


def test_refuses_what_numpy_refuses_naming_add_at():
    with pytest.raises(TypeError, match=r"autodiff\.numpy\.add_at: values of dtype float64 cannot be added into .* "
                                        r"int64"):
        anp.add_at(np.zeros(3, int), [0], 1.5)
    with pytest.raises(IndexError, match=r"autodiff\.numpy\.add_at: index 5 is out of bounds"):
        anp.add_at(np.zeros(3), [5], 1.0)
    with pytest.raises(IndexError, match=r"add_at: index 5 is out of bounds for axis 0 with size 3"):
        autodiff.vmap(lambda i: anp.add_at(np.zeros(3), i, 1.0))(np.array([[0], [5]]))
    with pytest.raises(IndexError, match=r"add_at: under vmap, a batched index must be integer arrays"):
        autodiff.vmap(lambda i: anp.add_at(np.zeros((3, 3)), (slice(None), i), 1.0))(np.array([[0], [1]]))


def test_numpys_in_place_form_for_plain_arrays():
    a, b = A.copy(), A.copy()
    assert anp.add.at(a, [0, 0, 3], 1.0) is None
    np.add.at(b, [0, 0, 3], 1.0)
    np.testing.assert_array_equal(a, b)


def test_the_in_place_forms_refuse_traced_values_naming_add_at():
    with pytest.raises(TypeError, match=r"add\.at\(a, indices, values\) adds into `a` in place.*anp\.add_at"):
        autodiff.grad(lambda v: anp.add.at(np.zeros(3), [0], v))(1.0)
    with pytest.raises(TypeError, match=r"add\.at\(a, indices, values\) adds into `a` in place.*anp\.add_at"):
        autodiff.grad(lambda a: anp.add.at(a, [0], 1.0))(np.zeros(3))
    with pytest.raises(DetachError, match=r"numpy\.add\.at\(a, indices, values\).*anp\.add_at"):
        autodiff.grad(lambda v: np.add.at(np.zeros(3), [0], v))(np.ones(1))


@needs_torch
def test_matches_torch_index_add_values_and_gradients():
    idx = np.array([0, 2, 0, 3, 3, 3])
    v, g = RNG.standard_normal((6, 3)), RNG.standard_normal((4, 3))
    ours_value, pullback = autodiff.vjp(lambda a, v: anp.add_at(a, idx, v), A, v)
    ta, tv = torch.tensor(A, requires_grad=True), torch.tensor(v, requires_grad=True)
    theirs = torch.index_add(ta, 0, torch.tensor(idx), tv)
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(ours_value, theirs.detach().numpy(), rtol=1e-14)
    for ours, t in zip(pullback(g), (ta, tv)):
        np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-14)


@needs_torch
def test_matches_torch_scatter_add_along_an_axis():
    index = np.array([[0, 0, 2], [1, 1, 1], [2, 0, 2], [0, 0, 0]])
    src, g = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    rows = np.arange(4)[:, None]
    ours_value, pullback = autodiff.vjp(lambda a, s: anp.add_at(a, (rows, index), s), A, src)
    ta, ts = torch.tensor(A, requires_grad=True), torch.tensor(src, requires_grad=True)
    theirs = torch.scatter_add(ta, 1, torch.tensor(index), ts)
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(ours_value, theirs.detach().numpy(), rtol=1e-14)
    for ours, t in zip(pullback(g), (ta, ts)):
        np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-14)


IDX = np.array([[0, 0, 3], [2, 1, 2], [3, 3, 3]])  # one index array per example
VALUES = RNG.standard_normal((3, 3, 3))
AS = RNG.standard_normal((3, 4, 3))


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, None, 0), (None, 0, None), (0, 0, 0), (None, 0, 0)])
def test_vmap_over_a_indices_and_values_matches_a_loop(in_axes):
    def f(a, i, v):
        return anp.add_at(a, i, v) ** 2

    args = [AS if in_axes[0] is not None else A, IDX if in_axes[1] is not None else IDX[0],
            VALUES if in_axes[2] is not None else VALUES[0]]
    check_vmap(f, *args, in_axes=in_axes)


def test_vmap_over_a_tuple_of_batched_index_arrays():
    rows, cols = np.array([[0, 0], [3, 1]]), np.array([[2, 2], [0, 1]])
    v = RNG.standard_normal((2, 2))
    check_vmap(lambda r, c, v: anp.add_at(A, (r, c), v) ** 2, rows, cols, v)


def test_second_order_under_vmap_matches_a_loop():
    def hessian_diagonal(v, i):
        f = lambda v: anp.sum(anp.sin(anp.add_at(A, i, v)))  # noqa: E731
        return autodiff.hvp(f, v, np.ones_like(v))

    batched = autodiff.vmap(hessian_diagonal)(VALUES, IDX)
    looped = np.stack([hessian_diagonal(VALUES[k], IDX[k]) for k in range(3)])
    np.testing.assert_allclose(batched, looped, rtol=1e-12)


def test_bincount_matches_numpy_and_differentiates_in_the_weights():
    x, w = np.array([0, 3, 3, 1, 3]), RNG.standard_normal(5)
    np.testing.assert_array_equal(anp.bincount(x), np.bincount(x))
    np.testing.assert_allclose(anp.bincount(x, w, minlength=6), np.bincount(x, w, minlength=6), rtol=1e-15)
    check_derivatives(lambda w: anp.bincount(x, w) ** 2, w)
    with pytest.raises(ValueError, match=r"autodiff\.numpy\.bincount: x must hold non-negative integers"):
        anp.bincount(np.array([-1, 2]))
