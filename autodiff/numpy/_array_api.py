"""numpy 2's array-API spellings of ops we have: ``acos`` for ``arccos``, ``permute_dims`` for ``transpose``,
``vecdot``, ``matvec``, ``vecmat``, ``matrix_transpose``, ``cumulative_sum`` and ``cumulative_prod``.

Each is a composition of our primitives, so it differentiates, pushes forward and batches through theirs.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda x: vecdot(x, x))(np.array([1.0, 2.0]))
array([2., 4.])
"""

import numpy as np

from ._arraylike import as_array
from ._binary import arctan2
from ._broadcast import dtype_of, shape_of
from ._complex import conj
from ._construction import astype
from ._elementwise import multiply, power
from ._indexing import getitem
from ._linalg import matmul
from ._reductions import cumprod, cumsum, sum
from ._shape import concatenate, swapaxes, transpose
from ._transcendental import arccos, arccosh, arcsin, arcsinh, arctan, arctanh

acos, acosh, asin, asinh, atan, atanh, atan2, pow = arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2, power


def permute_dims(a, axes):
    """``a`` with its axes in the order ``axes`` (``transpose``).

    >>> permute_dims(np.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(as_array(a), tuple(axes))


def matrix_transpose(x):
    """Each matrix of a stack transposed: the last two axes swapped.

    >>> matrix_transpose(np.ones((5, 2, 3))).shape
    (5, 3, 2)
    """
    x = as_array(x)
    if len(shape_of(x)) < 2:
        raise ValueError(f"autodiff.numpy.matrix_transpose: needs at least two axes, got shape {shape_of(x)}")
    return swapaxes(x, -1, -2)


def _conj(x):
    return conj(x) if dtype_of(x).kind == "c" else x


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product along ``axis`` of broadcast stacks of vectors, the first conjugated (numpy's ``vecdot``).

    >>> vecdot(np.ones((2, 3)), np.arange(3.0))
    array([3., 3.])
    """
    return sum(multiply(_conj(as_array(x1)), as_array(x2)), axis=axis)


def matvec(x1, x2, /):
    """Matrices times vectors, over broadcast stacks: ``(..., m, n)`` with ``(..., n)`` gives ``(..., m)``.

    >>> matvec(np.eye(2), np.array([1.0, 2.0]))
    array([1., 2.])
    """
    x2 = as_array(x2)
    product = matmul(as_array(x1), getitem(x2, (Ellipsis, slice(None), None)))
    return getitem(product, (Ellipsis, 0))


def vecmat(x1, x2, /):
    """Conjugated vectors times matrices, over broadcast stacks: ``(..., n)`` with ``(..., n, m)`` gives
    ``(..., m)``.

    >>> vecmat(np.array([1.0, 2.0]), np.eye(2))
    array([1., 2.])
    """
    x1 = _conj(as_array(x1))
    product = matmul(getitem(x1, (Ellipsis, None, slice(None))), as_array(x2))
    return getitem(product, (Ellipsis, 0, slice(None)))


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """numpy's ``cumulative_sum``: the running sum along ``axis`` (required beyond 1-D), with the empty sum
    first when ``include_initial``.

    >>> cumulative_sum(np.array([1.0, 2.0, 3.0]), include_initial=True)
    array([0., 1., 3., 6.])
    """
    return _cumulative(cumsum, 0, "cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """numpy's ``cumulative_prod``: the running product along ``axis`` (required beyond 1-D), with the empty
    product first when ``include_initial``.

    >>> cumulative_prod(np.array([1.0, 2.0, 3.0]), include_initial=True)
    array([1., 1., 2., 6.])
    """
    return _cumulative(cumprod, 1, "cumulative_prod", x, axis, dtype, include_initial)


def _cumulative(running, initial, name, x, axis, dtype, include_initial):
    x = as_array(x)
    ndim = len(shape_of(x))
    if axis is None and ndim > 1:
        raise ValueError(f"autodiff.numpy.{name}: axis= is required for an array of {ndim} dimensions")
    axis = 0 if axis is None else axis
    if ndim == 0:
        x = getitem(x, None)
    out = running(x if dtype is None else astype(x, dtype), axis=axis)
    if not include_initial:
        return out
    shape = list(shape_of(out))
    shape[axis] = 1
    return concatenate([np.full(shape, initial, dtype_of(out)), out], axis=axis)
