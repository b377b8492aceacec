"""Finite differences of an array: ``diff`` (n-th forward differences) and ``gradient``
(central differences inside, one-sided at the edges).

Both are slices combined with ``subtract``, ``multiply`` and ``divide`` in
numpy's own order, so values match numpy's and no rule is needed.  The
sample spacings of ``gradient`` are constants.
"""

import numpy as np

from ..extend import Traced, value_of
from ._arraylike import as_array
from ._broadcast import broadcast_to, cast, dtype_of, shape_of
from ._elementwise import add, divide, multiply, subtract
from ._indexing import getitem
from ._shape import concatenate, expand_dims

_ABSENT = object()


def _along(ndim, axis, index):
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _end_piece(v, shape, axis):
    if type(v) is not Traced:
        v = np.asanyarray(v)
    if len(shape_of(v)) > 0:
        return v
    return broadcast_to(v, shape[:axis] + (1,) + shape[axis + 1:])


def diff(a, n=1, axis=-1, prepend=_ABSENT, append=_ABSENT):
    """The ``n``-th discrete difference ``a[i+1] - a[i]`` along ``axis``, after joining
    ``prepend`` and ``append`` (scalars are broadcast to one slice).

    >>> import numpy as np
    >>> diff(np.array([1.0, 4.0, 9.0, 16.0]), n=2)
    array([2., 2.])
    """
    if n < 0:
        raise ValueError(f"autodiff.numpy.diff: the order n must be non-negative, got {n}")
    if n == 0:
        return a
    a = as_array(a)
    shape = shape_of(a)
    if len(shape) == 0:
        raise ValueError("autodiff.numpy.diff: the input must be at least one dimensional, got a scalar")
    axis = _axis(axis, len(shape), "diff")
    pieces = [_end_piece(v, shape, axis) for v in (prepend, a, append) if v is not _ABSENT]
    if len(pieces) > 1:
        a = concatenate(pieces, axis=axis)
    if dtype_of(a).kind == "b":
        return np.diff(value_of(a), n, axis)  # booleans differ or not: numpy's not_equal, no derivative
    later, earlier = _along(len(shape), axis, slice(1, None)), _along(len(shape), axis, slice(None, -1))
    for _ in range(n):
        a = subtract(getitem(a, later), getitem(a, earlier))
    return a


def _axis(axis, ndim, name):
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"autodiff.numpy.{name}: axis {axis} is out of bounds for {ndim} dimensions")
    return axis % ndim


def gradient(f, *varargs, axis=None, edge_order=1):
    """The derivative of sampled ``f`` along each axis: central differences inside, one-sided
    differences of order ``edge_order`` (1 or 2) at the edges.  ``varargs`` gives the spacing:
    one scalar for all axes, or one scalar or coordinate array per axis (constants).

    One array for one axis, else a tuple with one array per axis.

    >>> import numpy as np
    >>> gradient(np.array([1.0, 2.0, 4.0, 7.0]))
    array([1. , 1.5, 2.5, 3. ])
    """
    f = as_array(f)
    shape = shape_of(f)
    axes = tuple(range(len(shape))) if axis is None else tuple(np.atleast_1d(axis))
    axes = tuple(_axis(int(ax), len(shape), "gradient") for ax in axes)
    if edge_order not in (1, 2):
        raise ValueError(f"autodiff.numpy.gradient: edge_order must be 1 or 2, got {edge_order}")
    if dtype_of(f).kind in "biu":
        f = cast(f, np.dtype(np.float64))
    outs = [_gradient_along(f, ax, dx, edge_order) for ax, dx in zip(axes, _spacings(varargs, shape, axes))]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _spacings(varargs, shape, axes):
    if any(type(v) is Traced for v in varargs):
        raise TypeError("autodiff.numpy.gradient: the spacings are constants here; differentiate "
                        "with respect to f, or write the differences out with diff")
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return list(varargs) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"autodiff.numpy.gradient: give one spacing for all axes or one per axis "
                        f"({len(axes)}), got {len(varargs)}")
    return [_spacing(d, shape[ax]) for d, ax in zip(varargs, axes)]


def _spacing(distances, n):
    """A scalar step, or the steps between coordinates (a scalar again when they are all equal)."""
    if np.ndim(distances) == 0:
        return distances  # as given: a Python float stays weakly typed, as in numpy
    distances = np.asanyarray(distances)
    if distances.ndim != 1 or len(distances) != n:
        raise ValueError(f"autodiff.numpy.gradient: coordinates must be 1-D of length {n}, "
                         f"got shape {distances.shape}")
    if np.issubdtype(distances.dtype, np.integer):
        distances = distances.astype(np.float64)
    steps = np.diff(distances)
    return steps[0] if (steps == steps[0]).all() else steps


def _gradient_along(f, axis, dx, edge_order):
    shape = shape_of(f)
    if shape[axis] < edge_order + 1:
        raise ValueError(f"autodiff.numpy.gradient: axis {axis} has {shape[axis]} samples, but "
                         f"edge_order={edge_order} needs at least {edge_order + 1}")

    def at(index):
        return getitem(f, _along(len(shape), axis, index))

    edges = _first_order_edges if edge_order == 1 else _second_order_edges
    first, last = edges(at, dx)
    pieces = [expand_dims(first, axis), _interior(at, dx, axis, len(shape)), expand_dims(last, axis)]
    out = concatenate(pieces, axis=axis)
    return out if dtype_of(out) == dtype_of(f) else cast(out, dtype_of(f))


def _interior(at, dx, axis, ndim):
    if np.ndim(dx) == 0:
        return divide(subtract(at(slice(2, None)), at(slice(None, -2))), 2.0 * dx)
    dx1, dx2 = dx[0:-1], dx[1:]
    a = -(dx2) / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    along_axis = [-1 if i == axis else 1 for i in range(ndim)]
    a, b, c = (w.reshape(along_axis) for w in (a, b, c))
    return _combine(a, at(slice(None, -2)), b, at(slice(1, -1)), c, at(slice(2, None)))


def _combine(a, fa, b, fb, c, fc):
    return add(add(multiply(a, fa), multiply(b, fb)), multiply(c, fc))


def _first_order_edges(at, dx):
    first = dx if np.ndim(dx) == 0 else dx[0]
    last = dx if np.ndim(dx) == 0 else dx[-1]
    return divide(subtract(at(1), at(0)), first), divide(subtract(at(-1), at(-2)), last)


def _second_order_edges(at, dx):
    if np.ndim(dx) == 0:
        head, tail = (-1.5 / dx, 2.0 / dx, -0.5 / dx), (0.5 / dx, -2.0 / dx, 1.5 / dx)
    else:
        d1, d2 = dx[0], dx[1]
        head = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2), -d1 / (d2 * (d1 + d2)))
        d1, d2 = dx[-2], dx[-1]
        tail = ((d2) / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2.0 * d2 + d1) / (d2 * (d1 + d2)))
    return (_combine(head[0], at(0), head[1], at(1), head[2], at(2)),
            _combine(tail[0], at(-3), tail[1], at(-2), tail[2], at(-1)))
