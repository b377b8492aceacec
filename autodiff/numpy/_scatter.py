"""Scatter-add: ``add_at(a, indices, values)``, numpy's ``np.add.at`` as a function that returns the sum.

``np.add.at(a, indices, values)`` adds ``values`` into ``a[indices]`` in place, and an index that appears
twice adds twice (``a[indices] += values`` would add once).  A traced value cannot be changed in place, so the
differentiable form returns a new array and leaves ``a`` alone, as JAX's ``a.at[indices].add(values)`` does;
``anp.add.at`` keeps numpy's in-place meaning for plain arrays and refuses traced ones, naming ``add_at``.

Every element ``a[indices]`` selects has a flat position in ``a``; the sum is ``a`` plus one primitive,
``scatter_flat``, which adds each value at its position.  Its pullback gathers the cotangent at the positions
(a ``getitem``, whose own pullback scatter-adds again), so ``add_at`` is differentiable in ``a`` and ``values``
to any order, and under ``vmap`` the positions of a batched index are offset per example into one scatter.

>>> import numpy as np
>>> import autodiff
>>> add_at(np.zeros(3), [0, 0, 2], np.array([1.0, 2.0, 3.0]))
array([3., 0., 3.])
>>> autodiff.grad(lambda v: (add_at(np.zeros(3), [0, 0, 2], v) ** 2).sum())(np.array([1.0, 2.0, 3.0]))
array([6., 6., 6.])
"""

import math

import numpy as np

from ..extend import Traced, defbatch, deflinear, defvjp, plain_value, primitive, value_of
from ._arraylike import as_array
from ._broadcast import broadcast_to, dtype_of, shape_of
from ._construction import astype
from ._elementwise import add, multiply
from ._indexing import getitem
from ._remainder import remainder
from ._shape import ravel, reshape


def _scatter_flat(values, positions, size):
    out = np.zeros(size, np.result_type(values))
    np.add.at(out, positions, values)
    return out


scatter_flat = primitive(_scatter_flat, "scatter_flat")
defvjp(scatter_flat, lambda g, ans, values, positions, size: getitem(g, positions), None)
deflinear(scatter_flat)  # linear in the values; the positions are integers


def _scatter_flat_rule(level, args, bdims, kwargs):
    """One scatter for the whole batch: example ``b``'s positions move by ``b * size`` into a flat array of
    ``B * size``, which is then cut into the examples' rows."""
    values, positions, size = args
    batch = level.size
    values, positions = (a if b is not None else broadcast_to(a, (batch,) + shape_of(a))
                         for a, b in zip((values, positions), bdims[:2]))
    offsets = (np.arange(batch) * size).reshape((batch,) + (1,) * (len(shape_of(positions)) - 1))
    return reshape(scatter_flat(values, positions + offsets, batch * size), (batch, size)), 0


defbatch(scatter_flat, _scatter_flat_rule)


def flat_positions(shape, indices, name):
    """The flat position in an array of ``shape`` of each element that ``[indices]`` selects, shaped as the
    selection.  Plain indices are read by numpy (any index numpy takes); indices batched by ``vmap`` must be
    integers, one per leading axis (the trailing axes taken whole), and stay batched."""
    parts = tuple(value_of(p) for p in (indices if type(indices) is tuple else (indices,)))
    if not any(type(p) is Traced for p in parts):
        try:
            return np.arange(math.prod(shape)).reshape(shape)[parts if type(indices) is tuple else parts[0]]
        except IndexError as error:
            raise IndexError(f"autodiff.numpy.{name}: {error}") from None
    return _batched_positions(shape, parts, name)


def _batched_positions(shape, parts, name):
    if len(parts) > len(shape) or not all(_is_integer(p) for p in parts):
        raise IndexError(f"autodiff.numpy.{name}: under vmap, a batched index must be integer arrays, at most one "
                         f"per axis of the array (shape {shape}), with no slices, masks or newaxis among them")
    flat = None  # row-major: each axis's position scaled by the sizes after it
    for axis, (part, n) in enumerate(zip(parts, shape)):
        _check_bounds(part, n, axis, name)
        position = remainder(part, n) if n else part  # a negative index counts from the end
        flat = position if flat is None else add(multiply(flat, n), position)
    rest = shape[len(parts):]
    if not rest:
        return flat
    within = np.arange(math.prod(rest)).reshape(rest)
    return add(multiply(reshape(flat, shape_of(flat) + (1,) * len(rest)), math.prod(rest)), within)


def _is_integer(part):
    if isinstance(part, (int, np.integer)):
        return True
    return isinstance(part, (np.ndarray, Traced)) and dtype_of(part).kind in "iu"


def _check_bounds(part, n, axis, name):
    v = np.asarray(plain_value(part))
    bad = v[(v < -n) | (v >= n)]
    if bad.size:
        raise IndexError(f"autodiff.numpy.{name}: index {bad.flat[0]} is out of bounds for axis {axis} with size {n}")


def add_at(a, indices, values):
    """``a`` with ``values`` added at ``a[indices]``, a new array (``a`` is left as it is); an index repeated
    adds each of its values, as numpy's ``np.add.at`` does in place.

    ``indices`` is any index numpy takes (an integer array, a tuple of them, slices...); ``values`` broadcasts
    to the shape of ``a[indices]`` and is cast to ``a``'s dtype under numpy's ``same_kind`` rule.  The result
    has ``a``'s shape and dtype.  Differentiable in ``a`` and ``values`` (the indices are integers) to any
    order; under ``vmap`` any of the three may be batched (a batched index: integer arrays only).  JAX writes
    it ``a.at[indices].add(values)``; torch's ``index_add`` and ``scatter_add`` are this along one axis.

    >>> import autodiff
    >>> autodiff.grad(lambda a: add_at(a, (np.array([0, 0]), 1), 5.0).sum())(np.ones((2, 2)))
    array([[1., 1.],
           [1., 1.]])
    """
    a, values = as_array(a), as_array(values)
    shape, dtype = shape_of(a), dtype_of(a)
    if not np.can_cast(dtype_of(values), dtype, "same_kind"):
        raise TypeError(f"autodiff.numpy.add_at: values of dtype {dtype_of(values)} cannot be added into an array "
                        f"of dtype {dtype} (numpy's same_kind rule, as np.add.at); cast one of them first")
    positions = flat_positions(shape, indices, "add_at")
    values = astype(values, dtype) if dtype_of(values) != dtype else values
    if shape_of(values) != shape_of(positions):
        values = broadcast_to(values, shape_of(positions))
    return reshape(add(ravel(a), scatter_flat(values, positions, math.prod(shape))), shape)


def add_at_in_place(a, indices, values):
    """numpy's ``np.add.at``: add ``values`` into ``a[indices]`` in place (repeated indices accumulate),
    returning ``None``.  Plain arrays only: a traced value cannot be changed in place, so with one among the
    arguments it raises, naming :func:`add_at`, the form that returns the sum.

    >>> a = np.zeros(2)
    >>> add_at_in_place(a, [1, 1], 1.0)
    >>> a
    array([0., 2.])
    """
    if any(type(x) is Traced for x in (a, values, *(indices if type(indices) is tuple else (indices,)))):
        raise TypeError(
            "autodiff.numpy.add.at(a, indices, values) adds into `a` in place, as numpy's does, and a traced value "
            "can neither be changed in place nor be added into a plain array without losing its derivative. Write "
            "`a = anp.add_at(a, indices, values)`, which returns the sum as a new array (JAX's "
            "a.at[indices].add(values))"
        )
    np.add.at(a, indices, values)


def bincount(x, weights=None, minlength=0):
    """numpy's ``bincount``: how many times each non-negative integer occurs in ``x``, or with ``weights`` the
    sum of the weights at each (differentiable in ``weights``: an :func:`add_at`).  Under ``vmap`` every
    example's result has the length the largest example needs (pass ``minlength`` to fix it).

    >>> import autodiff
    >>> autodiff.grad(lambda w: bincount(np.array([0, 2, 2]), w)[2])(np.array([1.0, 2.0, 3.0]))
    array([0., 1., 1.])
    """
    v = np.asarray(plain_value(x))
    if v.size and v.min() < 0 or v.dtype.kind not in "iub":
        raise ValueError(f"autodiff.numpy.bincount: x must hold non-negative integers, got dtype {v.dtype}"
                         + (f" and {v.min()}" if v.size and v.dtype.kind in "iu" else ""))
    length = max(int(minlength), int(v.max()) + 1 if v.size else 0)
    if weights is None:
        return add_at(np.zeros(length, np.intp), value_of(x), 1)
    return add_at(np.zeros(length), value_of(x), astype(as_array(weights), np.float64))
