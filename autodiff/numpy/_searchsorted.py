"""``searchsorted`` under ``vmap``: where each value would go in a sorted 1-D array, per example.

Indices carry no derivative, so outside ``vmap`` it is numpy's (``_nondiff`` strips the arguments).  Under
``vmap`` it is a primitive whose ``batch`` counts the batch axes leading its arguments: one sorted array
shared by every example searches every example's values in one numpy call; a sorted array per example is
searched once per example (numpy has no stacked searchsorted), in plain numpy, with nothing to record.
"""

import numpy as np

from ..extend import defbatch, primitive
from ._batch_helpers import shape_of


def _searchsorted(a, v, sorter=None, side="left", batch=0):
    """numpy's ``searchsorted`` for each index of the ``batch`` leading axes of ``a``, ``v`` and ``sorter``."""
    if not batch:
        return np.searchsorted(a, v, side=side, sorter=sorter)
    out = np.empty(np.shape(v), np.intp)
    for i in np.ndindex(np.shape(a)[:batch]):
        out[i] = np.searchsorted(a[i], v[i], side=side, sorter=None if sorter is None else sorter[i])
    return out


searchsorted_p = primitive(_searchsorted, "searchsorted")


def _searchsorted_rule(level, args, bdims, kwargs):
    (a, v, sorter), batch = args, kwargs.get("batch", 0)
    if not batch and bdims[0] is None and bdims[2] is None:  # one sorted array: numpy takes v of any shape
        return searchsorted_p(a, v, sorter, **kwargs), 0
    leading = [x if b is not None or x is None else _along_batch(x, level.size) for x, b in zip(args, bdims)]
    return searchsorted_p(*leading, side=kwargs.get("side", "left"), batch=batch + 1), 0


def _along_batch(x, size):
    from ._broadcast import broadcast_to

    return broadcast_to(x, (size,) + shape_of(x))


defbatch(searchsorted_p, _searchsorted_rule)


def searchsorted(a, v, side="left", sorter=None):
    """numpy's ``searchsorted`` of values batched by ``vmap``: each example's indices, as a loop gives them.

    >>> import numpy as np
    >>> import autodiff
    >>> autodiff.vmap(lambda v: searchsorted(np.array([0.0, 1.0, 2.0]), v))(np.array([[0.5, 3.0], [-1.0, 1.0]]))
    array([[1, 3],
           [0, 1]])
    """
    if side not in ("left", "right"):
        raise ValueError(f"autodiff.numpy.searchsorted: side must be 'left' or 'right', got {side!r}")
    if len(shape_of(a)) != 1:
        raise ValueError(f"autodiff.numpy.searchsorted: a must be 1-D (one example's), got shape {shape_of(a)}")
    return searchsorted_p(a, v, sorter, side=side)
