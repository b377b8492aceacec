"""Flips and quarter turns: ``flipud``, ``fliplr`` and ``rot90``, built from ``flip`` and
``transpose``, so their pullbacks flip and turn the cotangent back.
"""


from ._arraylike import as_array
from ._broadcast import shape_of
from ._shape import flip, transpose


def _needs(name, m, ndim):
    if len(shape_of(m)) < ndim:
        raise ValueError(f"autodiff.numpy.{name}: the input must be >= {ndim}-d, got shape {shape_of(m)}")


def flipud(m):
    """Reverse the order of rows (axis 0).

    >>> import numpy as np
    >>> flipud(np.arange(3.0))
    array([2., 1., 0.])
    """
    m = as_array(m)
    _needs("flipud", m, 1)
    return flip(m, 0)


def fliplr(m):
    """Reverse the order of columns (axis 1), for arrays of at least 2 dimensions.

    >>> import numpy as np
    >>> fliplr(np.array([[1.0, 2.0]]))
    array([[2., 1.]])
    """
    m = as_array(m)
    _needs("fliplr", m, 2)
    return flip(m, 1)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first towards the second.

    >>> import numpy as np
    >>> rot90(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[2., 4.],
           [1., 3.]])
    """
    m = as_array(m)
    ndim = len(shape_of(m))
    first, second = _plane(axes, ndim)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return transpose(flip(m, second), tuple(order))
    return flip(transpose(m, tuple(order)), second)


def _plane(axes, ndim):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"autodiff.numpy.rot90: axes must name 2 axes, got {axes}")
    if not all(-ndim <= a < ndim for a in axes):
        raise ValueError(f"autodiff.numpy.rot90: axes {axes} out of range for an array of {ndim} dimensions")
    first, second = axes[0] % ndim, axes[1] % ndim
    if first == second:
        raise ValueError(f"autodiff.numpy.rot90: the two axes must differ, got {axes}")
    return first, second
