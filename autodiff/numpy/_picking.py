"""Picking elements by position: ``take_along_axis``, ``delete``, ``compress``, ``extract``, ``resize``,
``trim_zeros``, ``diagflat``, ``choose`` and ``sort_complex``.

Each reads its positions off plain integers or masks (which carry no derivative) and gathers with ``getitem``,
whose pullback scatter-adds: an element picked twice gets both cotangents.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda a: take_along_axis(a, np.array([[1, 1]]), axis=1).sum())(np.ones((1, 3)))
array([[0., 2., 0.]])
"""

import math

import numpy as np

from ..extend import Traced, value_of
from ._arraylike import as_array
from ._broadcast import dtype_of, shape_of
from ._construction import astype
from ._grids import broadcast_arrays
from ._indexing import getitem, take
from ._joining import stack
from ._linalg import diag
from ._scatter import flat_positions
from ._shape import ravel, reshape
from ._sorting import sort


def take_along_axis(arr, indices, axis=-1):
    """The elements at ``indices`` along ``axis``, matched on every other axis (numpy's ``take_along_axis``;
    the flattened array when ``axis`` is ``None``).  ``indices`` may be batched by ``vmap``.

    >>> take_along_axis(np.array([[10.0, 20.0], [30.0, 40.0]]), np.array([[1], [0]]), axis=1)
    array([[20.],
           [30.]])
    """
    arr = as_array(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    shape, indices = shape_of(arr), value_of(indices)
    if len(shape_of(indices)) != len(shape):
        raise ValueError(f"autodiff.numpy.take_along_axis: indices of shape {shape_of(indices)} need as many axes "
                         f"as arr's shape {shape}, as in numpy")
    axis %= len(shape)
    grid = [np.arange(n).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1)) for k, n in enumerate(shape)]
    grid[axis] = indices
    return getitem(ravel(arr), flat_positions(shape, tuple(grid), "take_along_axis"))


def _plain_positions(name, obj):
    positions = value_of(obj)
    if type(positions) is Traced:
        raise NotImplementedError(f"autodiff.numpy.{name}: the positions are batched by vmap, so each example would "
                                  "keep a different number of elements; use a mask (anp.where) instead")
    return positions


def delete(arr, obj, axis=None):
    """``arr`` without the entries at ``obj`` (integers, a slice or a mask) along ``axis`` (of the flattened
    array when ``None``).

    >>> delete(np.arange(4.0), [0, 2])
    array([1., 3.])
    """
    arr = as_array(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    keep = np.delete(np.arange(shape_of(arr)[axis]), _plain_positions("delete", obj))
    return take(arr, keep, axis=axis)


def compress(condition, a, axis=None):
    """The slices of ``a`` along ``axis`` (of the flattened array when ``None``) where ``condition`` holds.

    >>> compress([False, True], np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    array([[3., 4.]])
    """
    a = as_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    keep = np.flatnonzero(np.asarray(_plain_positions("compress", condition)))
    if keep.size and keep[-1] >= shape_of(a)[axis]:
        raise IndexError(f"autodiff.numpy.compress: condition selects index {keep[-1]}, out of bounds for an axis "
                         f"of size {shape_of(a)[axis]}")
    return take(a, keep, axis=axis)


def extract(condition, arr):
    """The elements of ``arr`` where ``condition`` holds, flattened (``ravel(arr)[ravel(condition)]``).

    >>> extract(np.array([[True, False], [False, True]]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([1., 4.])
    """
    keep = np.flatnonzero(np.asarray(_plain_positions("extract", condition)))
    return getitem(ravel(as_array(arr)), keep)


def resize(a, new_shape):
    """``a`` read over and over in flat order until it fills ``new_shape`` (numpy's ``np.resize``).

    >>> resize(np.array([1.0, 2.0, 3.0]), (2, 2))
    array([[1., 2.],
           [3., 1.]])
    """
    a = ravel(as_array(a))
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    size, total = shape_of(a)[0], math.prod(new_shape)
    if size == 0 or total == 0:
        return np.zeros(new_shape, np.result_type(value_of(a)))
    return reshape(getitem(a, np.arange(total) % size), new_shape)


def trim_zeros(filt, trim="fb"):
    """``filt`` (1-D) without its leading (``'f'``) and trailing (``'b'``) zeros.

    >>> trim_zeros(np.array([0.0, 1.0, 0.0, 2.0, 0.0]))
    array([1., 0., 2.])
    """
    filt = as_array(filt)
    nonzero = np.flatnonzero(np.asarray(_plain_positions("trim_zeros", filt)))
    front, back = "f" in trim.lower(), "b" in trim.lower()
    if not nonzero.size:
        return getitem(filt, slice(0, 0 if front or back else None))
    start, stop = nonzero[0] if front else 0, nonzero[-1] + 1 if back else shape_of(filt)[0]
    return getitem(filt, slice(int(start), int(stop)))


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal.

    >>> diagflat(np.array([[1.0, 2.0]]))
    array([[1., 0.],
           [0., 2.]])
    """
    return diag(ravel(as_array(v)), k)


def choose(a, choices, mode="raise"):
    """``choices[a[i]][i]`` for every position ``i`` (``a`` and every choice broadcast together): numpy's
    ``choose``, differentiable in the choices.

    >>> choose(np.array([1, 0]), [np.array([1.0, 2.0]), np.array([10.0, 20.0])])
    array([10.,  2.])
    """
    index = np.asarray(_plain_positions("choose", a))
    n = len(choices)
    if mode == "wrap":
        index = index % n
    elif mode == "clip":
        index = np.clip(index, 0, n - 1)
    elif mode != "raise" or np.any((index < 0) | (index >= n)):
        raise ValueError(f"autodiff.numpy.choose: mode={mode!r} with indices outside [0, {n}); pass mode='raise' "
                         "with indices in range, 'wrap' or 'clip'")
    stacked = stack(broadcast_arrays(*choices, index)[:-1])
    return take_along_axis(stacked, np.broadcast_to(index, shape_of(stacked)[1:])[None], axis=0)[0]


def sort_complex(a):
    """``a`` sorted by real part, then imaginary part, as a complex array.

    >>> sort_complex(np.array([2.0, 1.0]))
    array([1.+0.j, 2.+0.j])
    """
    out = sort(as_array(a))
    if dtype_of(out).kind == "c":
        return out
    small = dtype_of(out).char in "bhBH"  # numpy's rule: small integers to complex64, longdouble kept, else 128
    return astype(out, np.complex64 if small else np.clongdouble if dtype_of(out).char == "g" else np.complex128)
