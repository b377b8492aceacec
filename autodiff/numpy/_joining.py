"""Joining arrays: ``column_stack`` and ``append``, both a ``concatenate`` after a reshape."""

from ._broadcast import shape_of
from ._shape import concatenate, ravel, reshape, transpose


def _as_column(a):
    shape = shape_of(a)
    if len(shape) >= 2:
        return a
    return transpose(reshape(a, (1,) * (2 - len(shape)) + shape))


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays are stacked as they are).

    >>> import numpy as np
    >>> column_stack([np.arange(2.0), np.ones(2)])
    array([[0., 1.],
           [1., 1.]])
    """
    return concatenate([_as_column(a) for a in tup], axis=1)


def append(arr, values, axis=None):
    """``values`` appended to the end of ``arr`` along ``axis`` (both flattened when ``None``).

    >>> import numpy as np
    >>> append(np.ones((1, 2)), [[3.0, 4.0]], axis=0)
    array([[1., 1.],
           [3., 4.]])
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)
