"""Indexing: basic slices, integer and boolean arrays.

The pullback scatter-adds, so repeated indices accumulate; scatter-add's own
pullback is indexing again.
"""

import math

import numpy as np

from ..extend import Traced, ZeroTangent, defbatch, defjvp, deflinear, defvjp, primitive
from ._batch_ops import getitem_rule, scatter_add_rule, tuple_item_rule
from ._broadcast import dtype_of, shape_of


def _getitem(x, index):
    return x[index]


getitem = primitive(_getitem, "getitem")


def _scatter_add(g, shape, dtype, index):
    out = np.zeros(shape, dtype)
    if _is_basic(index):
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def _is_basic(index):
    parts = index if type(index) is tuple else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice)) for p in parts)


scatter_add = primitive(_scatter_add, "scatter_add")
defvjp(getitem, lambda g, ans, x, index: scatter_add(g, shape_of(x), dtype_of(x), index), reads=("index",))
defvjp(scatter_add, lambda g, ans, h, shape, dtype, index: getitem(g, index))
deflinear(getitem)
defbatch(getitem, getitem_rule)
deflinear(scatter_add)
defbatch(scatter_add, scatter_add_rule)


def _tuple_item(t, i):
    return t[i]


tuple_item = primitive(_tuple_item, "tuple_item")


def _tuple_item_vjp(g, ans, t, i):
    n = len(t)
    return tuple(g if k == i % n else ZeroTangent() for k in range(n))


defvjp(tuple_item, _tuple_item_vjp)
defjvp(tuple_item, lambda t, ans, tup, i: t[i])  # a tuple's tangent is the tuple of its parts' tangents
defbatch(tuple_item, tuple_item_rule)


def take(x, indices, axis=None, mode="raise"):
    """Elements at integer ``indices`` along ``axis`` (of the flattened array when ``None``);
    repeated indices accumulate in the pullback.  ``mode`` is numpy's: ``"raise"`` refuses an index out of
    range, ``"wrap"`` wraps it around, ``"clip"`` takes the nearest end (a negative index too).

    >>> take(np.array([10.0, 20.0, 30.0]), [-1, 5], mode="clip")
    array([10., 30.])
    """
    from ._shape import ravel

    if mode != "raise":
        indices = _moded(indices, math.prod(shape_of(x)) if axis is None else shape_of(x)[axis], mode)
    if type(indices) is Traced:  # batched by vmap: getitem gathers each example's along the first axis
        return _take_batched(x, indices, axis)
    indices = np.asarray(indices)
    if axis is None:
        return getitem(ravel(x), indices)
    return getitem(x, (slice(None),) * (axis % len(shape_of(x))) + (indices,))


def _moded(indices, n, mode):
    """``indices`` brought into ``[0, n)`` by numpy's ``mode`` (batched indices stay batched: ``%`` and ``clip``
    are elementwise)."""
    from ._binary import clip

    batched = type(indices) is Traced
    if n == 0 and np.size(indices):
        raise IndexError(f"autodiff.numpy.take: mode={mode!r} takes from an empty axis; there is nothing to "
                         "wrap or clip to, as numpy says too")
    if mode == "wrap":
        return indices % n if batched else np.asarray(indices) % n
    if mode == "clip":
        return clip(indices, 0, n - 1) if batched else np.clip(np.asarray(indices), 0, n - 1)
    raise ValueError(f"autodiff.numpy.take: mode={mode!r}; pass 'raise', 'wrap' or 'clip'")


def _take_batched(x, indices, axis):
    """``take`` with indices batched by ``vmap``: a whole-index gather along axis 0, its axes moved back."""
    from ._shape import moveaxis, ravel

    if axis is None:
        return getitem(ravel(x), indices)
    axis, k = axis % len(shape_of(x)), len(shape_of(indices))
    picked = getitem(moveaxis(x, axis, 0), indices)  # indices' axes, then x's other axes
    return moveaxis(picked, list(range(k)), list(range(axis, axis + k))) if axis else picked
