"""numpy's keyword arguments: ``take``'s ``mode`` and ``ravel``'s ``order`` work as numpy's, to second order and
under ``vmap``; a keyword a primitive does not take is refused naming the public op, not a private function."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck
from autodiff.extend import defvjp, primitive

X = np.arange(12.0).reshape(3, 4) / 7.0
INDICES = np.array([-5, -1, 0, 2, 7, 13])


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_modes_equal_numpy_and_differentiate_to_second_order(mode, axis):
    np.testing.assert_array_equal(anp.take(X, INDICES, axis=axis, mode=mode), np.take(X, INDICES, axis=axis, mode=mode))
    assert gradcheck(lambda x: anp.take(x, INDICES, axis=axis, mode=mode) ** 2, X, order=2)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_modes_under_vmap_with_batched_indices_equal_a_loop(mode):
    ids = np.array([[-1, 9], [4, 2], [13, -7]])
    batched = autodiff.vmap(lambda i: anp.take(X, i, mode=mode))(ids)
    np.testing.assert_array_equal(batched, np.stack([np.take(X, i, mode=mode) for i in ids]))
    per_row = autodiff.vmap(lambda x: anp.take(x, [5, -6], mode=mode))(X)  # the size is one example's
    np.testing.assert_array_equal(per_row, np.stack([np.take(x, [5, -6], mode=mode) for x in X]))


def test_take_refuses_an_unknown_mode_by_name():
    with pytest.raises(ValueError, match=r"autodiff.numpy.take: mode='bogus'; pass 'raise', 'wrap' or 'clip'"):
        anp.take(X, [0], mode="bogus")


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_orders_equal_numpy_and_differentiate(order):
    np.testing.assert_array_equal(anp.ravel(X, order=order), np.ravel(X, order=order))
    weights = np.arange(12.0)
    assert gradcheck(lambda x: anp.ravel(x, order=order) * weights, X, order=2)


@pytest.mark.parametrize("call, words", [
    (lambda: anp.sum(X, where=X > 0.5), ("sum:", "where=", "axis, dtype, keepdims", "anp.where(mask, x, 0)")),
    (lambda: anp.max(X, initial=0.0), ("max:", "initial=", "anp.maximum(result, initial)")),
    (lambda: anp.cumsum(X, dtype=np.float32), ("cumsum:", "dtype=", "axis")),
    (lambda: autodiff.grad(lambda x: anp.sum(x, where=x > 0.5))(X), ("sum:", "where=")),
])
def test_a_keyword_an_op_does_not_take_is_refused_naming_the_op(call, words):
    """These named private functions (``_sum() got an unexpected keyword argument 'where'``)."""
    with pytest.raises(TypeError) as caught:
        call()
    assert all(w in str(caught.value) for w in words), str(caught.value)
    assert "_sum()" not in str(caught.value) and "forward()" not in str(caught.value)


def test_a_user_primitive_taking_any_keyword_is_left_alone():
    scaled = primitive(lambda x, **options: x * options.get("factor", 1.0), "scaled")
    defvjp(scaled, lambda g, ans, x, **options: g * options.get("factor", 1.0))
    assert autodiff.grad(lambda x: scaled(x, factor=3.0))(2.0) == 3.0


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_with_a_mode_from_an_empty_axis_says_so_as_numpy_does(mode):
    with pytest.raises(IndexError):
        np.take(np.ones(0), [1], mode=mode)
    with pytest.raises(IndexError, match=r"autodiff.numpy.take: mode=.* takes from an empty axis"):
        anp.take(np.ones(0), [1], mode=mode)


NUMPY_ORDER = [  # numpy-style positional calls: numpy's dtype or out where ours takes keepdims (or ddof)
    ("sum", (0, np.float32), "sum: keepdims must be True or False, got <class 'numpy.float32'>; numpy's sum"),
    ("sum", (0, "float32"), "sum: keepdims must be True or False, got 'float32'"),
    ("mean", (0, None), "mean: keepdims must be True or False, got None; numpy's mean takes dtype"),
    ("prod", (1, np.float64), "prod: keepdims .* numpy's prod takes dtype"),
    ("max", (0, None), "max: keepdims .* numpy's max takes out there: ours has no out="),
    ("min", (0, np.zeros(3)), "min: keepdims must be True or False, got array"),
    ("ptp", (0, None), "ptp: keepdims .* takes out"),
    ("var", (0, None), "var: ddof must be a number, got None; numpy's var takes dtype there"),
    ("std", (0, np.float64), "std: ddof must be a number"),
    ("nansum", (0, None, None), "nansum: keepdims .* numpy's nansum takes out"),
    ("nanprod", (0, None), "nanprod: keepdims"),
    ("nanmean", (0, np.float64), "nanmean: keepdims"),
    ("nanmax", (0, None), "nanmax: keepdims .* takes out"),
    ("nanmin", (0, None), "nanmin: keepdims"),
    ("nanvar", (0, np.float64), "nanvar: ddof must be a number"),
    ("nanstd", (0, None), "nanstd: ddof"),
    ("median", (0, None), "median: keepdims must be True or False, got None; numpy's median takes out"),
    ("median", (0, np.zeros(3)), "median: keepdims .* got array"),  # it answered keepdims=True before
]


@pytest.mark.parametrize(("name", "args", "words"), NUMPY_ORDER, ids=[f"{n}{a[1:]!r}" for n, a, _ in NUMPY_ORDER])
def test_numpys_positional_dtype_or_out_where_ours_reads_keepdims_is_refused_naming_the_fix(name, args, words):
    """numpy raised "'NoneType' object cannot be interpreted as an integer" here, naming neither the op nor the fix;
    ours names both, in eager code, under grad and under jit."""
    x = X + 1.0
    fn = getattr(anp, name)
    with pytest.raises(TypeError, match=f"autodiff.numpy.{words}") as raised:
        fn(x, *args)
    assert "by keyword" in str(raised.value)
    with pytest.raises(TypeError, match=f"autodiff.numpy.{words}"):
        autodiff.grad(lambda v: anp.sum(fn(v, *args)))(x)
    with pytest.raises(TypeError, match=f"autodiff.numpy.{words}"):
        autodiff.jit(lambda v: fn(v, *args))(x)
    # the same call with what follows axis by keyword, as numpy's, answers as numpy does
    keywords = {"keepdims": True} if "keepdims" in words else {"ddof": 1}
    np.testing.assert_allclose(fn(x, args[0], **keywords), getattr(np, name)(x, args[0], **keywords), rtol=1e-12)


@pytest.mark.parametrize("name, q", [("quantile", 0.3), ("percentile", 30.0)])
@pytest.mark.parametrize("out", [None, np.empty(3)], ids=["None", "array"])
def test_numpys_positional_out_where_quantile_reads_method_is_refused_naming_the_fix(name, q, out):
    """numpy's quantile takes out fourth, ours method: it said "method=None; only 'linear' is supported"."""
    x, fn = X + 1.0, getattr(anp, name)
    for call in (lambda: fn(x, q, 0, out), lambda: autodiff.grad(lambda v: anp.sum(fn(v, q, 0, out)))(x),
                 lambda: autodiff.jit(lambda v: fn(v, q, 0, out))(x)):
        with pytest.raises(TypeError, match=f"autodiff.numpy.{name}: method must be a string, got .*; numpy's "
                                            f"{name} takes out there: ours has no out="):
            call()
    np.testing.assert_allclose(fn(x, q, 0, method="linear"), getattr(np, name)(x, q, 0, method="linear"),
                               rtol=1e-12)


@pytest.mark.parametrize("name, args", [("cumsum", (0, np.float32)), ("cumprod", (0, None)),
                                        ("sum", (0, False, None, None))])
def test_more_positional_arguments_than_a_primitive_takes_are_refused_naming_it(name, args):
    """Python's own error named the private function (``_cumsum() takes from 1 to 2 positional arguments``)."""
    x, fn = X + 1.0, getattr(anp, name)
    for call in (lambda: fn(x, *args), lambda: autodiff.grad(lambda v: anp.sum(fn(v, *args)))(x),
                 lambda: autodiff.jit(lambda v: fn(v, *args))(x), lambda: autodiff.vmap(lambda v: fn(v, *args))(x)):
        with pytest.raises(TypeError, match=rf"^{name}: takes at most \d arguments by position \(\w+, .*\), got "
                                            rf"{len(args) + 1}; pass the others by keyword"):
            call()
