"""Array-like inputs: numpy functions take lists, tuples and scalars wherever they take arrays.

A list or tuple may hold traced values (``anp.sum([x, y])``, ``anp.diff((a, b, c))``): it becomes one array
through :func:`autodiff.numpy.array`, which differentiates through them, and whose dtype is the same whether
or not they are traced.

>>> as_array([[1.0, 2.0]]).shape
(1, 2)
"""

import numpy as np

from ..extend import Primitive, Traced


def as_array(x):
    """A traced value as it is; a list or tuple as :func:`autodiff.numpy.array` reads it (traced values inside
    included); anything else as numpy's ``asanyarray`` sees it."""
    if type(x) is Traced:
        return x
    if type(x) in (list, tuple):
        from ._construction import array

        return array(x)
    return np.asanyarray(x)


class ArrayLikeFirst(Primitive):
    """A primitive whose first argument numpy reads as an array: a list or tuple there becomes one array first
    (through :func:`as_array`), so traced values inside it are differentiated rather than refused.

    The rules and the batching rule see only the array, as for any primitive.

    >>> double_sum = ArrayLikeFirst(lambda x: np.sum(x) * 2.0, "double_sum")
    >>> double_sum([1.0, 2.0])
    np.float64(6.0)
    """

    def __call__(self, x, *args, **kwargs):
        if type(x) in (list, tuple):
            x = as_array(x)
        return Primitive.__call__(self, x, *args, **kwargs)
