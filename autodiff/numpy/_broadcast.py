"""Broadcasting and casting primitives, ``unbroadcast`` for binary pullbacks and ``broadcast_as`` for
binary pushforwards.

``broadcast_to`` and ``sum_to_shape`` are each other's pullbacks, so every
binary op's pullback stays differentiable to any order.  All three are linear,
so each pushes a tangent forward through itself.
"""

import numpy as np

from .._batching import example_shape
from .._residuals import Like
from ..extend import Traced, defbatch, deflinear, defvjp, primitive
from ._batch_helpers import elementwise
from ._batch_ops import broadcast_to_rule, sum_to_shape_rule

shape_of = example_shape  # a plain or traced value's shape (a Python scalar's is ()); one example's under vmap


def dtype_of(x):
    """dtype of a plain or traced value; Python floats are float64."""
    while type(x) is Traced:
        x = x.value
    if type(x) is tuple:  # a primitive's several outputs (slogdet's), read as one array: numpy's promotion
        return np.result_type(*x)
    return x.dtype if type(x) is np.ndarray or type(x) is Like else np.result_type(x)


def _sum_to_shape(g, shape):
    g = np.asarray(g)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1
    )
    return np.add.reduce(g, axis=axes).reshape(shape) if axes else g.reshape(shape)  # np.sum, minus its wrappers


def _broadcast_to(x, shape):
    out = np.empty(shape, np.result_type(x))  # a fresh array: faster than a view here, and writable
    out[...] = x
    return out


sum_to_shape = primitive(_sum_to_shape, "sum_to_shape")
broadcast_to = primitive(_broadcast_to, "broadcast_to")
defvjp(sum_to_shape, lambda g, ans, x, shape: broadcast_to(g, shape_of(x)), reads=("",))  # x for its shape
defvjp(broadcast_to, lambda g, ans, x, shape: sum_to_shape(g, shape_of(x)), reads=("",))
deflinear(sum_to_shape)
defbatch(sum_to_shape, sum_to_shape_rule)
deflinear(broadcast_to)
defbatch(broadcast_to, broadcast_to_rule)


def _cast(x, dtype):
    x = np.asarray(x)
    return x.astype(dtype, copy=False) if dtype.kind == "c" or x.dtype.kind != "c" else x.real.astype(dtype)


cast = primitive(_cast, "cast")
defvjp(cast, lambda g, ans, x, dtype: cast(g, dtype_of(x)), reads=("",))  # x for its dtype
deflinear(cast)  # complex to real keeps the real part: R-linear too
defbatch(cast, elementwise(cast))


def as_constant(mask, dtype):
    """A mask or weight read off plain values, as an array of ``dtype``; under ``vmap`` it stays batched.

    >>> as_constant(True, np.dtype(np.float32))
    array(1., dtype=float32)
    """
    if type(mask) is Traced:  # batched by a vmap: one mask per example
        return cast(mask, dtype)
    return np.asarray(mask, dtype)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` and cast it to ``x``'s dtype."""
    kind = type(x)
    if type(g) is np.ndarray and (kind is np.ndarray or kind is Like) and g.shape == x.shape and g.dtype == x.dtype:
        return g  # a Like: what a tape entry keeps of an argument its pullback reads for shape and dtype
    return _fitted(g, x, sum_to_shape)


def broadcast_as(t, ans):
    """Broadcast the tangent ``t`` of an argument to the shape of the output ``ans`` and cast it to its dtype.

    >>> broadcast_as(np.float32(2.0), np.zeros(2))
    array([2., 2.])
    """
    if type(t) is np.ndarray and type(ans) is np.ndarray and t.shape == ans.shape and t.dtype == ans.dtype:
        return t
    return _fitted(t, ans, broadcast_to)


def _fitted(v, like, to_shape):
    """``v`` brought to ``like``'s shape by ``to_shape(v, shape)``, then cast to its dtype."""
    shape, dtype = shape_of(like), dtype_of(like)
    if shape_of(v) != shape:
        v = to_shape(v, shape)
    if dtype_of(v) != dtype:
        v = cast(v, dtype)
    return v
