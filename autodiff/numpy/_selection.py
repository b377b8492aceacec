"""Choosing elements by condition: ``where`` in all its forms, and ``select`` (a chain of ``where``).

Conditions are constants (masks carry no derivative); each chosen value's
cotangent goes back to the array it came from.
"""

import numpy as np

from .._traced import value_of as strip_all
from ..extend import Traced, value_of
from . import _elementwise
from ._broadcast import broadcast_to, cast, dtype_of, shape_of


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y`` (both broadcast); with ``condition`` alone,
    the indices of its nonzero entries, as ``nonzero`` gives them (integers: no derivative).

    numpy takes ``x`` and ``y`` by position only; here they may also be named.

    >>> import autodiff, numpy as np
    >>> autodiff.grad(lambda v: where(v > 0, v, 0.0).sum())(np.array([-1.0, 2.0]))
    array([0., 1.])
    >>> where(np.array([0.0, 3.0]))
    (array([1]),)
    """
    if x is None and y is None:
        return np.nonzero(value_of(condition))
    if x is None or y is None:
        raise ValueError("autodiff.numpy.where: either both or neither of x and y should be given")
    return _elementwise.where(value_of(condition), x, y)


def _plain(v):
    """What numpy's select converts a choice to: Python scalars stay weakly typed (read for its dtype)."""
    v = strip_all(v)
    return v if type(v) in (int, float, complex) else np.asarray(v)


def select(condlist, choicelist, default=0):
    """The element of the first ``choicelist[i]`` whose ``condlist[i]`` holds, else ``default``.

    >>> import numpy as np
    >>> x = np.arange(4.0)
    >>> select([x < 1, x > 2], [x, x ** 2], default=-1.0)
    array([ 0., -1., -1.,  9.])
    """
    if len(condlist) != len(choicelist):
        raise ValueError("autodiff.numpy.select: condlist and choicelist must have the same length, "
                         f"got {len(condlist)} and {len(choicelist)}")
    if len(condlist) == 0:
        raise ValueError("autodiff.numpy.select: an empty condition list is not possible")
    conds = [value_of(c) if type(c) is Traced else np.asarray(c) for c in condlist]  # batched under vmap
    for i, c in enumerate(conds):
        if dtype_of(c) != np.dtype(bool):
            raise TypeError(f"autodiff.numpy.select: condlist[{i}] must be a boolean array, got dtype {dtype_of(c)}")
    dtype = np.result_type(*[_plain(v) for v in (*choicelist, default)])
    shape = np.broadcast_shapes(*[shape_of(c) for c in conds], *[shape_of(v) for v in (*choicelist, default)])
    result = _filled(default, shape, dtype)
    for cond, choice in zip(reversed(conds), reversed(choicelist)):
        result = _elementwise.where(cond, _as(choice, dtype), result)
    return result


def _filled(default, shape, dtype):
    if type(default) is not Traced:
        return np.full(shape, default, dtype)
    return broadcast_to(_as(default, dtype), shape)


def _as(v, dtype):
    return v if type(v) is not Traced or dtype_of(v) == dtype else cast(v, dtype)
