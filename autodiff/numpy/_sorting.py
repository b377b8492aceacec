"""``sort`` and ``partition``: a gather through the sorting permutation.

The permutation (``argsort``, ``argpartition``) is a constant, so the
value is ``take_along_axis(a, permutation)`` and the pullback gathers the
cotangent through the inverse permutation.  Where values tie, the order
numpy's argsort picks decides which input receives which cotangent.
"""

import numpy as np

from ..extend import defbatch, deflinear, defvjp, primitive, value_of
from ._arraylike import as_array
from ._batch_helpers import per_example
from ._batch_ops import permute_along_rule
from ._broadcast import shape_of
from ._shape import ravel


def _permute_along(a, order, axis):
    return np.take_along_axis(a, order, axis)


permute_along = primitive(_permute_along, "permute_along")
defvjp(permute_along, lambda g, ans, a, order, axis: permute_along(g, np.argsort(order, axis=axis), axis))
deflinear(permute_along)  # the permutation is a constant
defbatch(permute_along, permute_along_rule)
permute_along.__doc__ = """``a`` reordered along ``axis`` by the permutation ``order``; the pullback applies the
inverse permutation (a gather again, so it nests and never scatter-adds)."""


def _flat(a, axis):
    a = as_array(a)
    return (ravel(a), -1) if axis is None else (a, axis)


def _no_order(name, order):
    if order is not None:
        raise NotImplementedError(f"autodiff.numpy.{name}: order= sorts structured arrays, which carry no "
                                  "gradient; sort a float array instead")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """A sorted copy of ``a`` along ``axis`` (the flattened array when ``None``).

    >>> import autodiff, numpy as np
    >>> autodiff.grad(lambda x: sort(x)[0])(np.array([3.0, 1.0, 2.0]))  # the minimum's position
    array([0., 1., 0.])
    """
    _no_order("sort", order)
    a, axis = _flat(a, axis)
    if len(shape_of(a)) == 0:
        raise np.exceptions.AxisError("autodiff.numpy.sort: cannot sort a 0-d array along an axis; use axis=None")
    return permute_along(a, np.argsort(value_of(a), axis=axis, kind=kind, stable=stable), axis)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the ``kth`` element(s) in sorted position along ``axis``, smaller ones
    before and larger ones after (each side in no particular order).

    >>> import numpy as np
    >>> partition(np.array([3.0, 1.0, 2.0, 0.0]), 1)[1]
    np.float64(1.0)
    """
    _no_order("partition", order)
    a, axis = _flat(a, axis)
    return permute_along(a, per_example(lambda v, ax: np.argpartition(v, kth, axis=ax, kind=kind), a, axis), axis)
