"""Grids and series built from arrays that may be traced: ``meshgrid``, ``broadcast_arrays``, ``logspace``,
``geomspace``, ``trapezoid``, ``ediff1d`` and ``interp``.

All are compositions of our ops (reshapes and broadcasts, ``linspace``, powers, slices), so each is
differentiable in every array it is given, to any order, and batches under ``vmap`` through their rules.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda b: trapezoid(linspace(0.0, b, 5) ** 2, dx=b / 4))(1.0)  # 22 b^3 / 64: about b^3 / 3
1.03125
"""

import numpy as np

from .._batching import is_batched
from ..extend import plain_value, value_of
from ._arraylike import as_array
from ._batch_helpers import per_example
from ._broadcast import broadcast_to, dtype_of, shape_of
from ._construction import astype
from ._elementwise import add, divide, exp, log, multiply, power, subtract, where
from ._elementwise import sign as _sign
from ._indexing import getitem, take
from ._joining import concatenate
from ._ranges import linspace
from ._reductions import sum
from ._shape import ravel, reshape


def broadcast_arrays(*args):
    """Every argument broadcast to their common shape, as a tuple.

    >>> [a.shape for a in broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    [(2, 3), (2, 3)]
    """
    arrays = [as_array(a) for a in args]
    shape = np.broadcast_shapes(*[shape_of(a) for a in arrays])
    return tuple(a if shape_of(a) == shape else broadcast_to(a, shape) for a in arrays)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors, numpy's ``meshgrid`` (``'xy'`` swaps the first two axes).

    >>> [g.shape for g in meshgrid(np.arange(3.0), np.arange(2.0))]
    [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"autodiff.numpy.meshgrid: indexing={indexing!r}; pass 'xy' or 'ij'")
    ndim = len(xi)
    shapes = [[1] * ndim for _ in xi]
    for i, shape in enumerate(shapes):
        shape[i] = -1
    if indexing == "xy" and ndim > 1:
        shapes[0][:2], shapes[1][:2] = [1, -1], [-1, 1]
    grids = [reshape(ravel(as_array(x)), tuple(shape)) for x, shape in zip(xi, shapes)]
    return tuple(grids) if sparse else broadcast_arrays(*grids)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``: differentiable in ``start``, ``stop`` and ``base``.

    >>> logspace(0.0, 2.0, 3)
    array([  1.,  10., 100.])
    """
    out = power(base, linspace(start, stop, num, endpoint=endpoint, axis=axis))
    return out if dtype is None else astype(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """A geometric sequence from ``start`` to ``stop`` (real, nonzero, of one sign): ``exp`` of a ``linspace``
    of their logarithms, with their sign.

    >>> geomspace(1.0, 1000.0, 4)
    array([   1.,   10.,  100., 1000.])
    """
    s, t = np.asarray(plain_value(start)), np.asarray(plain_value(stop))
    if np.iscomplexobj(s) or np.iscomplexobj(t) or np.any(s * t <= 0):
        raise NotImplementedError("autodiff.numpy.geomspace: start and stop must be real, nonzero and of one sign "
                                  "(numpy's complex sequences are not supported)")
    sign = _sign(value_of(start))  # a constant (batched under vmap)
    logs = linspace(log(multiply(start, sign)), log(multiply(stop, sign)), num, endpoint=endpoint, axis=axis)
    out = multiply(exp(logs), sign)
    return out if dtype is None else astype(out, dtype)


def _along(a, axis, part):
    return getitem(a, (slice(None),) * (axis % len(shape_of(a))) + (part,))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x`` (1-D, or shaped as
    ``y``) or spaced ``dx`` apart; differentiable in ``y``, ``x`` and ``dx``.

    >>> trapezoid(np.array([0.0, 1.0, 4.0]), x=np.array([0.0, 1.0, 3.0]))
    np.float64(5.5)
    """
    y = as_array(y)
    ndim = len(shape_of(y))
    if x is None:
        d = dx
    else:
        x = as_array(x)
        d = subtract(_along(x, -1, slice(1, None)), _along(x, -1, slice(None, -1))) if len(shape_of(x)) == 1 \
            else subtract(_along(x, axis, slice(1, None)), _along(x, axis, slice(None, -1)))
        if len(shape_of(x)) == 1 and ndim > 1:
            d = reshape(d, tuple(-1 if k == axis % ndim else 1 for k in range(ndim)))
    pairs = add(_along(y, axis, slice(1, None)), _along(y, axis, slice(None, -1)))
    return sum(divide(multiply(d, pairs), 2.0), axis=axis)


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences between consecutive elements of the flattened ``ary``, with ``to_begin`` before them
    and ``to_end`` after.

    >>> ediff1d(np.array([1.0, 4.0, 9.0]), to_begin=0.0)
    array([0., 3., 5.])
    """
    flat = ravel(as_array(ary))
    pieces = [subtract(getitem(flat, slice(1, None)), getitem(flat, slice(None, -1)))]
    if to_begin is not None:
        pieces.insert(0, ravel(astype(as_array(to_begin), dtype_of(flat))))
    if to_end is not None:
        pieces.append(ravel(astype(as_array(to_end), dtype_of(flat))))
    return concatenate(pieces)


def interp(x, xp, fp, left=None, right=None, period=None):
    """The piecewise-linear interpolant through ``(xp, fp)`` at ``x`` (``xp`` increasing), numpy's ``interp``;
    ``left`` and ``right`` beyond the ends (``fp``'s end values by default).  Differentiable in ``x`` (the
    slope of its piece), ``xp``, ``fp``, ``left`` and ``right``; at a sample point ``x`` takes the piece to
    its right, as numpy's value does.

    >>> import autodiff
    >>> autodiff.grad(lambda x: interp(x, np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])))(2.0)
    0.5
    """
    if period is not None:
        raise NotImplementedError("autodiff.numpy.interp: period= is not supported; wrap x into one period first")
    xp, fp = as_array(xp), as_array(fp)
    n = shape_of(xp)[0]
    if is_batched(value_of(xp)):
        raise NotImplementedError("autodiff.numpy.interp: xp batched by vmap is not supported; batch x and fp")
    grid = plain_value(xp)  # read for searchsorted: a jit tracing xp notes it
    piece = per_example(lambda v: np.clip(np.searchsorted(grid, v, "right") - 1, 0, max(n - 2, 0)), x)
    x0, x1, f0, f1 = (take(a, piece + k) for a in (xp, fp) for k in (0, min(1, n - 1)))
    slope = divide(subtract(f1, f0), subtract(x1, x0)) if n > 1 else 0.0
    inside = add(f0, multiply(slope, subtract(x, x0)))
    v = value_of(x)
    below = where(v < value_of(getitem(xp, 0)), getitem(fp, 0) if left is None else left, inside)
    out = where(v > value_of(getitem(xp, -1)), getitem(fp, -1) if right is None else right, below)
    return astype(out, np.complex128 if dtype_of(out).kind == "c" else np.float64)  # numpy's, whatever fp's
