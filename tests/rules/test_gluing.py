"""Arrays glued from traced pieces (issue 37, and issue 36 item 13): lists and tuples of traced values given to
reductions, joins, ``append`` and ``linalg.norm``; ``anp.r_`` / ``anp.c_``; ``block``; casts to integers.

Oracles: numpy on the same plain values (values and dtypes), finite differences at orders 1 and 2 with
forward mode checked against reverse mode (``derivative_checks``), torch on the same entries, and vmap
against a loop.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import DetachError
from tests.derivative_checks import check_derivatives, check_vmap
from tests.oracle import needs_torch, torch

X, Y = np.array([0.7, -1.3]), np.array([1.1, 0.4])

LIST_REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "cumsum", "cumprod", "mean", "std", "var"]


def _reduce(name, lib):
    return getattr(lib, name) if name != "norm" else lib.linalg.norm


@pytest.mark.parametrize("name", LIST_REDUCTIONS + ["norm"])
def test_reductions_take_a_list_holding_traced_values(name):
    """``anp.sum([x, y])`` raised a DetachError (issue 36 item 13) while ``anp.mean`` of the same list worked."""
    def f(x, y):
        return _reduce(name, anp)([x[0], 2.0 * y[1], (x[1] * y[0]), 3.0])

    plain = _reduce(name, np)([X[0], 2.0 * Y[1], X[1] * Y[0], 3.0])
    np.testing.assert_allclose(f(X, Y), plain, rtol=1e-13)
    check_derivatives(f, X, Y)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "mean", "cumsum"])
def test_reductions_of_a_tuple_of_arrays_along_an_axis(name):
    def f(x, y):
        return _reduce(name, anp)((x, y * y), axis=0)

    np.testing.assert_allclose(f(X, Y), _reduce(name, np)((X, Y * Y), axis=0), rtol=1e-13)
    check_derivatives(f, X, Y)
    check_vmap(f, np.stack([X, Y, X + Y]), np.stack([Y, X, X - Y]))


@needs_torch
@pytest.mark.parametrize("name, theirs", [("sum", torch.sum), ("prod", torch.prod), ("max", torch.max),
                                          ("cumsum", lambda t: torch.cumsum(t, 0))])
def test_list_reductions_match_torch(name, theirs):
    ours = autodiff.grad(lambda x: anp.sum(_reduce(name, anp)([x[0], x[1] ** 2, 3.0])))(X)
    t = torch.tensor(X, requires_grad=True)
    theirs(torch.stack([t[0], t[1] ** 2, torch.tensor(3.0, dtype=t.dtype)])).sum().backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-13)


@pytest.mark.parametrize("name", ["sum", "mean", "max"])
def test_a_list_reduction_has_the_same_dtype_traced_or_not(name):
    """A float32 value and a Python float in a list: the result's dtype never depends on tracing."""
    x = np.float32(1.5)
    plain = _reduce(name, anp)([x, 2.0])
    traced, _ = autodiff.vjp(lambda t: _reduce(name, anp)([t, 2.0]), x)
    assert np.result_type(plain) == np.result_type(traced) == np.float32


def test_append_of_lists_holding_traced_values():
    def f(x, b):
        return anp.append([x[0], x[1] * 2.0, 1.0], [b[0], b[1] ** 2])

    np.testing.assert_array_equal(f(X, Y), np.append([X[0], X[1] * 2.0, 1.0], [Y[0], Y[1] ** 2]))
    check_derivatives(f, X, Y)


def test_append_as_autograd_tests_it():
    """autograd's test_simple_append_list and test_simple_append_arr: a list or an array, and a float."""
    check_derivatives(anp.append, np.array([1.0, 2.0, 3.0]), 4.0)
    assert autodiff.gradcheck(lambda b: anp.append([1.0, 2.0, 3.0], b), 4.0, order=2)


JOINS = {  # name: (function of x and y holding traced values in lists, numpy's on the same values)
    "concatenate": lambda lib, x, y: lib.concatenate([[x[0], 2.0], y, [x[1] * y[0]]]),
    "stack": lambda lib, x, y: lib.stack([[x[0], 2.0], y, (x[1], y[0] * x[0])], axis=1),
    "hstack": lambda lib, x, y: lib.hstack([x[0], [2.0, y[1]], y]),
    "vstack": lambda lib, x, y: lib.vstack([[x[0], 2.0], y]),
    "dstack": lambda lib, x, y: lib.dstack([[x[0], 2.0], y]),
    "column_stack": lambda lib, x, y: lib.column_stack([[x[0], 2.0], y]),
    "block": lambda lib, x, y: lib.block([[np.eye(2), np.stack([y, x]).T if lib is np else lib.stack([y, x]).T],
                                          [np.ones((1, 2)), np.array([[x[0] * y[1], 5.0]])
                                           if lib is np else lib.array([[x[0] * y[1], 5.0]])]]),
}


@pytest.mark.parametrize("name", list(JOINS))
def test_joins_take_pieces_holding_traced_values(name):
    def f(x, y):
        return JOINS[name](anp, x, y)

    expected = JOINS[name](np, X, Y)
    got = f(X, Y)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    check_derivatives(f, X, Y)
    check_vmap(f, np.stack([X, Y]), np.stack([Y, X]))


@pytest.mark.parametrize("name", ["concatenate", "stack", "hstack", "vstack"])
def test_joins_take_numpy_2s_dtype_and_casting(name):
    """``vstack(..., dtype=)`` as numpy 2 passes it raised a TypeError."""
    pieces = [np.ones(2), np.arange(2.0)]
    expected = getattr(np, name)(pieces, dtype=np.float32)
    got = getattr(anp, name)(pieces, dtype=np.float32)
    assert got.dtype == expected.dtype == np.float32 and np.array_equal(got, expected)
    traced, pullback = autodiff.vjp(lambda x: getattr(anp, name)([x, pieces[1]], dtype=np.float32), X)
    assert traced.dtype == np.float32
    assert pullback(np.ones(traced.shape, np.float32))[0].dtype == np.float64  # cast back to x's dtype
    with pytest.raises(TypeError, match=rf"autodiff.numpy.{name}: cannot cast .* float64 to int64 .*same_kind"):
        getattr(anp, name)(pieces, dtype=np.int64)


def test_out_is_numpys_for_plain_pieces_and_refused_for_traced_ones():
    out = np.empty(4)
    assert anp.concatenate([np.ones(2), np.zeros(2)], out=out) is out
    with pytest.raises(TypeError, match=r"concatenate\(\.\.\., out=\.\.\.\) would write traced values"):
        autodiff.grad(lambda x: anp.concatenate([x, x], out=np.empty(4)).sum())(X)


@pytest.mark.parametrize("layout, error, words", [
    (([1.0], [2.0]), TypeError, "arrays is a tuple"),
    ([[1.0], 2.0], ValueError, "depths are mismatched"),
    ([[1.0], []], ValueError, "arrays[1] is empty"),
])
def test_block_refuses_what_numpy_refuses(layout, error, words):
    with pytest.raises(error):
        np.block(layout)
    with pytest.raises(error, match=r"autodiff\.numpy\.block: .*" + words.replace("[", r"\[").replace("]", r"\]")):
        anp.block(layout)


@pytest.mark.parametrize("layout", [
    [1.0, 2.0], [[1.0, 2.0], [3.0, 4.0]], [np.ones((2, 2)), np.zeros((2, 1))], [[np.ones(3)], [np.zeros(3)]],
    [[[np.ones(1)]]], [[np.eye(2), np.zeros((2, 3))], [np.ones((1, 4)), 7.0]], [np.ones((2, 1, 3)), np.ones(2)],
])
def test_block_matches_numpy_on_plain_layouts(layout):
    try:
        expected = np.block(layout)
    except ValueError:
        with pytest.raises(ValueError):
            anp.block(layout)
        return
    got = anp.block(layout)
    assert got.shape == expected.shape and got.dtype == expected.dtype and np.array_equal(got, expected)


# autograd's tests of np.r_ and np.c_ (tests/test_numpy.py), written again: each piece traced or constant
A, C = np.random.default_rng(1).standard_normal((3, 2)), np.random.default_rng(2).standard_normal((3, 2))
C10 = np.random.default_rng(3).standard_normal(10)
AUTOGRAD_INDEX_TRICKS = {
    "r_basic": (lambda x: anp.r_[x], A),
    "r_double": (lambda x: anp.r_[x, x], A),
    "r_no_relation": (lambda x: anp.r_[C] + 0.0 * x, A),
    "r_node_and_const": (lambda x: anp.r_[x, C], A),
    "r_mixed": (lambda x: anp.r_[x, C, x], A),
    "r_slicing": (lambda x: anp.r_[x, C10, 1:10], np.random.default_rng(4).standard_normal(10)),
    "c_": (lambda x: anp.c_[x, C, x], A),
}


@pytest.mark.parametrize("name", list(AUTOGRAD_INDEX_TRICKS))
def test_index_tricks_as_autograd_tests_them(name):
    f, x = AUTOGRAD_INDEX_TRICKS[name]
    np.testing.assert_array_equal(f(x), eval("lambda x: " + {  # numpy's own on the plain value
        "r_basic": "np.r_[x]", "r_double": "np.r_[x, x]", "r_no_relation": "np.r_[C] + 0.0 * x",
        "r_node_and_const": "np.r_[x, C]", "r_mixed": "np.r_[x, C, x]", "r_slicing": "np.r_[x, C10, 1:10]",
        "c_": "np.c_[x, C, x]"}[name])(x))
    check_derivatives(f, x)


V = np.array([1.5, -2.0, 0.5])
M = np.arange(6.0).reshape(2, 3)
INDEX_EXPRESSIONS = [  # keys for r_ and c_ alike: numpy's reading of each must be ours
    lambda m, v: m[v, v], lambda m, v: m[v, 1:4], lambda m, v: m[v, 0:1:3j, 2.0], lambda m, v: m["0,2", v, v],
    lambda m, v: m["1,2,0", v, v], lambda m, v: m["-1", M, M], lambda m, v: m[np.float32(1), 2.0],
    lambda m, v: m[np.ones(2, np.float32), 2.0], lambda m, v: m[1, 2, v], lambda m, v: m["0,3,-1", v],
    lambda m, v: m["0,3,1", v, v], lambda m, v: m["0,3,0", M, M], lambda m, v: m[0:3, v], lambda m, v: m[M, M],
    lambda m, v: m[v.astype(np.float32), 1], lambda m, v: m[[1, 2], v, (3.0, 4.0)],
]


@pytest.mark.parametrize("name", ["r_", "c_"])
@pytest.mark.parametrize("case", range(len(INDEX_EXPRESSIONS)))
def test_index_tricks_read_keys_as_numpy_does(name, case):
    key = INDEX_EXPRESSIONS[case]
    try:
        expected = key(getattr(np, name), V)
    except ValueError:
        with pytest.raises(ValueError):
            key(getattr(anp, name), V)
        return
    got = key(getattr(anp, name), V)
    assert got.shape == expected.shape and got.dtype == expected.dtype and np.array_equal(got, expected)
    traced = lambda v: key(getattr(anp, name), v)  # noqa: E731
    check_derivatives(traced, V)
    check_vmap(traced, np.stack([V, 2 * V]))


def test_an_imaginary_step_is_a_linspace_differentiable_in_its_ends():
    f = lambda a, b: anp.r_[a:b:5j] ** 2  # noqa: E731
    np.testing.assert_array_equal(f(0.0, 2.0), np.r_[0.0:2.0:5j] ** 2)
    check_derivatives(f, 0.5, 2.0)


def test_index_tricks_refuse_what_they_cannot_differentiate():
    with pytest.raises(TypeError, match=r"autodiff\.numpy\.r_: a slice with a real step is a numpy\.arange"):
        autodiff.grad(lambda b: anp.r_[0.0:b].sum())(3.0)
    with pytest.raises(NotImplementedError, match=r"'r' builds an np\.matrix"):
        anp.r_["r", V, V]
    with pytest.raises(ValueError, match=r"unknown directive 'a,b'"):
        anp.r_["a,b", V]


def test_numpys_own_r_names_ours():
    with pytest.raises(DetachError, match=r"np\.r_\[\.\.\.\] and np\.c_\[\.\.\.\] cannot see traced values.*anp\.r_"):
        autodiff.grad(lambda x: np.r_[x, x].sum())(X)


def _autograd_cast_to_int(w):
    """autograd's test_cast_to_int: a traced column read back as integer indices with np.int64."""
    new_w, new_inds = w[:, :-1], np.int64(w[:, -1])
    assert type(new_inds) is np.ndarray and new_inds.dtype == np.int64
    return new_w[new_inds].sum()


def test_cast_to_int_as_autograd_tests_it():
    w = np.random.default_rng(5).standard_normal((5, 10))
    w[:, -1] = [0.5, 3.5, 1.5, 4.5, -0.5]  # away from the steps, where finite differences would jump
    check_derivatives(_autograd_cast_to_int, w)


@pytest.mark.parametrize("cast", [lambda w: w.astype(int), lambda w: anp.astype(w, np.int32),
                                  lambda w: anp.array([w[0], w[1]], dtype=int), lambda w: anp.asarray(w, bool),
                                  lambda w: np.asarray(w, np.int64)])
def test_a_cast_to_an_integer_dtype_is_plain_and_carries_no_derivative(cast):
    """``w.astype(int)`` stayed traced and pulled the cotangent back as if it were the identity (gradient 1)."""
    def f(w):
        out = cast(w)
        assert type(out) is np.ndarray and out.dtype.kind in "biu"
        return anp.sum(w * 0.0) + anp.sum(out * 1.0)

    np.testing.assert_array_equal(autodiff.grad(f)(X), np.zeros(2))


def test_an_integer_cast_stays_batched_under_vmap():
    w = np.array([[1.5, -2.5], [0.2, 7.9]])
    np.testing.assert_array_equal(autodiff.vmap(lambda v: v.astype(int))(w), w.astype(int))
    np.testing.assert_array_equal(autodiff.vmap(lambda v: anp.astype(v, np.int8) * 2)(w), w.astype(np.int8) * 2)
    with pytest.raises(DetachError, match=r"batched by vmap.*np\.int64\(x\).*x\.astype\(np\.int64\)"):
        autodiff.vmap(lambda v: np.int64(v))(w)


def test_a_float_cast_is_still_differentiable():
    g = autodiff.grad(lambda w: anp.sum(anp.astype(w, np.float32) * 2.0))(X)
    assert g.dtype == np.float64 and np.array_equal(g, [2.0, 2.0])
    check_derivatives(lambda w: w.astype(np.complex128) * 1j, X)
