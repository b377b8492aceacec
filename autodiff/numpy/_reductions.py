"""Reductions along axes; each pullback broadcasts the cotangent back."""

import numpy as np

from .._hooks import slot
from ..extend import defbatch, defjvp, deflinear, defvjp, is_inexact, plain_value, value_of
from ._arraylike import ArrayLikeFirst  # numpy's reductions take lists and tuples, traced values inside too
from ._batch_helpers import differentiated, over_example_axes, reduction
from ._broadcast import broadcast_to, dtype_of, shape_of
from ._construction import from_nested
from ._elementwise import divide, multiply
from ._kinks import root
from ._numpy_order import ddof_given, keepdims_given


def _normalise_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim if ndim else a for a in axes)


def keepdims_shape(shape, axis):
    """``shape`` with the reduced axes kept as size 1."""
    axes = _normalise_axis(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_reduced(g, x, axis, keepdims):
    """Broadcast a reduction's cotangent ``g`` back to the shape of ``x``."""
    from ._shape import reshape

    shape = shape_of(x)
    if not keepdims and axis is not None:
        g = reshape(g, keepdims_shape(shape, axis))
    return broadcast_to(g, shape)


def _sum(x, axis=None, keepdims=False, dtype=None):
    return np.sum(x, axis=axis, keepdims=keepdims_given("sum", "dtype", keepdims), dtype=dtype)


def _magnitudes(x):
    """``|x|`` in float64, flattened: what the model-wide reductions accumulate."""
    return np.abs(np.asarray(x)).astype(np.float64, copy=False).ravel()


def _sumsq64(x):
    m = _magnitudes(x)
    return float(np.dot(m, m))


def _abssum64(x):
    return float(np.sum(_magnitudes(x)))


slot("sumsq64", _sumsq64, "the sum of |x|² over a whole array, accumulated in float64 (sumsq, norm; the "
     "accelerated twin runs a numba kernel)")
slot("abssum64", _abssum64, "the sum of |x| over a whole array, accumulated in float64 (abssum; the accelerated "
     "twin runs a numba kernel)")


sum = ArrayLikeFirst(_sum, "sum")  # noqa: A001 - mirrors numpy's name
defvjp(sum, lambda g, ans, x, axis=None, keepdims=False, dtype=None: expand_reduced(g, x, axis, keepdims),
       reads=("axis keepdims",))  # x for its shape
deflinear(sum)
defbatch(sum, reduction(sum))


def mean(x, axis=None, keepdims=False, dtype=None):
    """Arithmetic mean, as ``sum / count`` (so its derivative comes for free)."""
    x = from_nested(x)
    shape = shape_of(x)
    count = int(np.prod([shape[a] for a in _normalise_axis(axis, len(shape))]))
    total = sum(x, axis=axis, keepdims=keepdims_given("mean", "dtype", keepdims), dtype=dtype)
    return divide(total, np.asarray(count, dtype=dtype or _float_dtype(x)))


def _float_dtype(x):
    dt = dtype_of(x)
    return dt if is_inexact(dt) else np.dtype(np.float64)


def _extreme(np_fun, name):
    def forward(x, axis=None, keepdims=False):
        return np_fun(x, axis=axis, keepdims=keepdims_given(name, "out", keepdims))

    prim = ArrayLikeFirst(forward, name)

    def vjp(g, ans, x, axis=None, keepdims=False):
        return _shared(expand_reduced(g, x, axis, keepdims), _ties_share(ans, x, axis, keepdims))

    def jvp(t, ans, x, axis=None, keepdims=False):  # the transpose: the tied elements' mean tangent
        return sum(_shared(t, _ties_share(ans, x, axis, keepdims)), axis=axis, keepdims=keepdims)

    defvjp(prim, vjp)
    defjvp(prim, jvp)
    return prim


def _shared(g, share):
    """``g * share``, exactly 0 off the extreme: a NaN in ``g`` (a norm's second derivative at its kink, design.md
    section 11) stays off the elements that were not chosen, whose true derivative is 0."""
    from ._elementwise import where

    return where(share > 0, multiply(g, share), 0.0)


def _ties_share(ans, x, axis, keepdims):
    """A constant weight per element of ``x``: ``1/k`` at the ``k`` elements equal to the extreme, 0 elsewhere.

    Every element equal to the extreme shares the derivative evenly, as in JAX and PyTorch.
    """
    v, a = value_of(x), value_of(ans)
    hit = v == (a if keepdims or axis is None else np.expand_dims(a, _normalise_axis(axis, v.ndim)))
    return (hit / hit.sum(axis=axis, keepdims=True)).astype(dtype_of(x))


max = amax = _extreme(np.max, "max")  # noqa: A001
defbatch(max, reduction(max))
min = amin = _extreme(np.min, "min")  # noqa: A001
defbatch(min, reduction(min))


def _prod(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims_given("prod", "dtype", keepdims))


prod = ArrayLikeFirst(_prod, "prod")


def _prod_vjp(g, ans, x, axis=None, keepdims=False):
    v = value_of(x)
    g = expand_reduced(g, x, axis, keepdims)
    if np.all(plain_value(v) != 0):  # every example's (the fast path holds for each)
        return multiply(g, divide(expand_reduced(ans, x, axis, keepdims), x))
    if differentiated(x) or differentiated(g):  # batched by vmap alone is first order, per example
        raise NotImplementedError(
            "autodiff.numpy.prod: higher derivatives at inputs containing zeros are not supported; "
            "the first derivative is exact"
        )
    return g * over_example_axes(_product_of_others, v, axis)


def _product_of_others(v, axis):
    """For each element, the product of the others along ``axis`` (exact when some are zero): the reduced
    axes (all of them for ``None``, several for a tuple) moved last and flattened into one."""
    v = np.asarray(v)  # a Python float too
    axes = tuple(range(v.ndim)) if axis is None else tuple(a % v.ndim for a in np.atleast_1d(axis))
    last = tuple(range(v.ndim - len(axes), v.ndim))
    work = np.moveaxis(v, axes, last)
    kept = work.shape[:v.ndim - len(axes)]
    work = work.reshape(kept + (-1,))
    ones = np.ones(kept + (1,), v.dtype)
    left = np.cumprod(np.concatenate([ones, work[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, work[..., :0:-1]], -1), -1)[..., ::-1]
    others = (left * right).reshape(kept + tuple(v.shape[a] for a in axes))
    return np.moveaxis(others, last, axes)


defvjp(prod, _prod_vjp)


def _prod_jvp(t, ans, x, axis=None, keepdims=False):
    v = value_of(x)
    if np.all(plain_value(v) != 0):  # d prod = prod * sum(t / x), for every example
        return multiply(ans, sum(divide(t, x), axis=axis, keepdims=keepdims))
    if differentiated(x):
        raise NotImplementedError(
            "autodiff.numpy.prod: higher derivatives at inputs containing zeros are not supported; "
            "the first derivative is exact"
        )
    return sum(multiply(t, over_example_axes(_product_of_others, v, axis)), axis=axis, keepdims=keepdims)


defjvp(prod, _prod_jvp)
defbatch(prod, reduction(prod))


def var(x, axis=None, ddof=0, keepdims=False):
    """Variance (real, ``mean(|x - mean(x)|**2)`` for complex ``x``), composed from differentiable ops."""
    x = from_nested(x)
    from ._elementwise import subtract

    ddof, keepdims = ddof_given("var", "dtype", ddof), keepdims_given("var", "out", keepdims)
    count = _count(shape_of(x), axis)
    centred = subtract(x, mean(x, axis=axis, keepdims=True))
    total = sum(abs_squared(centred), axis=axis, keepdims=keepdims)
    real_dtype = np.finfo(_float_dtype(x)).dtype
    return divide(total, np.asarray(count - ddof if count > ddof else 0, dtype=real_dtype))


def abs_squared(x):
    """``|x|**2`` as ``square(x)`` (``real(x * conj(x))`` for complex): smooth at 0, unlike ``abs(x)**2``."""
    from ._complex import conj, real
    from ._elementwise import square

    return real(multiply(x, conj(x))) if dtype_of(x).kind == "c" else square(x)


def std(x, axis=None, ddof=0, keepdims=False):
    """Standard deviation: ``sqrt(var)``.  Where the variance is 0 (a constant slice) the gradient is 0 and
    every higher derivative NaN, the convention of a norm at 0 (:mod:`._kinks`): ``std(x) ** 2`` there gets
    a NaN Hessian, not a wrong finite one.

    >>> float(std(np.array([1.0, 3.0]))), float(std(np.array([1.0, 3.0]), ddof=1) ** 2)
    (1.0, 2.0)
    """
    x = from_nested(x)
    spread = var(x, axis=axis, ddof=ddof_given("std", "dtype", ddof), keepdims=keepdims_given("std", "out", keepdims))
    if _count(shape_of(x), axis) == 1:  # a slice of one value: the variance is identically 0, no kink to pass
        return spread
    return root(spread)


def _count(shape, axis):
    """How many values each slice over ``axis`` reduces."""
    return int(np.prod([shape[a] for a in _normalise_axis(axis, len(shape))]))


def _cumsum(x, axis=None):
    return np.cumsum(x, axis=axis)


cumsum = ArrayLikeFirst(_cumsum, "cumsum")


def _cumsum_vjp(g, ans, x, axis=None):
    from ._shape import flip, reshape

    if axis is None:
        return reshape(flip(cumsum(flip(g, 0)), 0), shape_of(x))
    return flip(cumsum(flip(g, axis), axis=axis), axis)


defvjp(cumsum, _cumsum_vjp)
deflinear(cumsum)
defbatch(cumsum, reduction(cumsum, flatten_none=True))


def _cumprod(x, axis=None):
    return np.cumprod(x, axis=axis)


cumprod = ArrayLikeFirst(_cumprod, "cumprod")


def _refuse_zeros(x):
    if np.any(plain_value(x) == 0):
        raise NotImplementedError(
            "autodiff.numpy.cumprod: the derivative at inputs containing zeros is not supported"
        )


def _cumprod_vjp(g, ans, x, axis=None):
    from ._shape import flip, reshape

    _refuse_zeros(x)
    if axis is None:  # numpy flattens first
        return reshape(_cumprod_vjp(g, ans, reshape(x, (-1,)), 0), shape_of(x))
    # y_k = prod_{j<=k} x_j, so dL/dx_i = sum_{k>=i} g_k y_k / x_i
    return divide(flip(cumsum(flip(multiply(g, ans), axis), axis=axis), axis), x)


defvjp(cumprod, _cumprod_vjp)


def _cumprod_jvp(t, ans, x, axis=None):
    _refuse_zeros(x)
    # y_k = prod_{j<=k} x_j, so dy_k = y_k * sum_{j<=k} t_j / x_j (axis=None flattens both alike)
    return multiply(ans, cumsum(divide(t, x), axis=axis))


defjvp(cumprod, _cumprod_jvp)
defbatch(cumprod, reduction(cumprod, flatten_none=True))
