"""Lower and upper triangles: ``tril`` and ``triu`` keep one side of a diagonal.

Each is ``where`` with a constant mask, so the pullback keeps the same
triangle of the cotangent and nests with no rule of its own.  As in numpy, the
mask applies to the last two axes, and a 1-D input is broadcast to a square.
"""

import numpy as np

from ._arraylike import as_array
from ._broadcast import dtype_of, shape_of
from ._elementwise import where


def _masked(m, mask):
    if len(shape_of(m)) == 0:
        raise ValueError("autodiff.numpy.tril/triu: the input must have at least 1 dimension, got a scalar")
    return where(mask, m, np.zeros(1, dtype_of(m)))


def tril(m, k=0):
    """The lower triangle of ``m`` (on and below diagonal ``k``), zeros above.

    >>> import numpy as np
    >>> tril(np.ones((2, 3)))
    array([[1., 0., 0.],
           [1., 1., 0.]])
    """
    m = as_array(m)
    return _masked(m, np.tri(*shape_of(m)[-2:], k=k, dtype=bool))


def triu(m, k=0):
    """The upper triangle of ``m`` (on and above diagonal ``k``), zeros below.

    >>> import numpy as np
    >>> triu(np.ones((2, 3)), k=1)
    array([[0., 1., 1.],
           [0., 0., 1.]])
    """
    m = as_array(m)
    return _masked(m, ~np.tri(*shape_of(m)[-2:], k=k - 1, dtype=bool))
