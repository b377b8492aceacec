"""Adding and reordering axes: ``atleast_1d``, ``atleast_2d``, ``atleast_3d`` (reshapes) and
``rollaxis`` (a transpose), so their pullbacks are those of ``reshape`` and ``transpose``.
"""

import numpy as np

from ..extend import Traced
from ._arraylike import as_array
from ._broadcast import shape_of
from ._shape import reshape, transpose


def _one_or_tuple(f, arys):
    out = tuple(f(a if type(a) is Traced else np.asanyarray(a)) for a in arys)
    return out[0] if len(out) == 1 else out


def _shape_1d(shape):
    return shape if len(shape) >= 1 else (1,)


def _shape_2d(shape):
    return shape if len(shape) >= 2 else (1,) * (2 - len(shape)) + shape


def _shape_3d(shape):
    if len(shape) >= 3:
        return shape
    return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]


def _to(shape_fn):
    def view(a):
        shape = shape_of(a)
        return a if shape_fn(shape) == shape else reshape(a, shape_fn(shape))

    return view


def atleast_1d(*arys):
    """Each input viewed with at least one axis (a scalar becomes shape ``(1,)``); one array for
    one input, else a tuple.

    >>> atleast_1d(2.0)
    array([2.])
    """
    return _one_or_tuple(_to(_shape_1d), arys)


def atleast_2d(*arys):
    """Each input viewed with at least two axes: ``(n,)`` becomes ``(1, n)``.

    >>> import numpy as np
    >>> atleast_2d(np.arange(2.0)).shape
    (1, 2)
    """
    return _one_or_tuple(_to(_shape_2d), arys)


def atleast_3d(*arys):
    """Each input viewed with at least three axes: ``(n,)`` becomes ``(1, n, 1)``, ``(m, n)``
    becomes ``(m, n, 1)``.

    >>> import numpy as np
    >>> atleast_3d(np.ones((2, 3))).shape
    (2, 3, 1)
    """
    return _one_or_tuple(_to(_shape_3d), arys)


def rollaxis(a, axis, start=0):
    """Move ``axis`` to sit before position ``start`` (numpy's older ``moveaxis``).

    >>> import numpy as np
    >>> rollaxis(np.ones((3, 4, 5)), 2).shape
    (5, 3, 4)
    """
    a = as_array(a)
    ndim = len(shape_of(a))
    if not -ndim <= axis < ndim or not -ndim <= start <= ndim:
        raise np.exceptions.AxisError(
            f"autodiff.numpy.rollaxis: axis {axis} and start {start} must lie in [-{ndim}, {ndim}) "
            f"and [-{ndim}, {ndim}] for an array of {ndim} dimensions"
        )
    axis, start = axis % ndim, start + ndim if start < 0 else start
    order = [i for i in range(ndim) if i != axis]
    order.insert(start - 1 if axis < start else start, axis)
    return transpose(a, tuple(order))
