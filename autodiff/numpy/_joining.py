"""Joining arrays: ``concatenate``, ``stack`` and their family, as numpy spells them.

Each reads its pieces as numpy does (each one an array-like, traced values inside lists included: see
:func:`~autodiff.numpy._arraylike.as_array`), gives them the dimensions numpy gives them, and joins them with
one primitive, ``concatenate`` or ``stack`` (in ``_shape``), whose pullback cuts the cotangent back into the
pieces.  ``dtype=`` and ``casting=`` are numpy's; ``out=`` writes into an existing array, which a traced value
cannot, so it is refused when a piece is traced.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda x: (hstack([x, [x * 2.0, 1.0]]) ** 2).sum())(1.0)
10.0
"""

import numpy as np

from ..extend import Traced
from ._arraylike import as_array
from ._broadcast import dtype_of, shape_of
from ._construction import astype
from ._dimensions import atleast_1d, atleast_2d, atleast_3d
from ._indexing import getitem
from ._shape import _concatenate_p, _stack_p, ravel, reshape, transpose


def _pieces(arrays, name, dtype=None, casting="same_kind"):
    """The pieces of a join as arrays, cast to ``dtype`` under numpy's ``casting`` rule when one is given."""
    if not _is_sequence(arrays):
        raise TypeError(f"autodiff.numpy.{name}: expected a sequence of arrays (a list or tuple), "
                        f"got {type(arrays).__name__}; wrap a single array in a list: {name}([x])")
    pieces = [as_array(a) for a in arrays]
    if dtype is None:
        return pieces
    dtype = np.dtype(dtype)
    for a in pieces:
        if not np.can_cast(dtype_of(a), dtype, casting):
            raise TypeError(f"autodiff.numpy.{name}: cannot cast a piece of dtype {dtype_of(a)} to {dtype} under "
                            f"casting={casting!r}, as numpy would not; pass casting='unsafe', or cast it first")
    return [astype(a, dtype) for a in pieces]


def _is_sequence(arrays):
    if isinstance(arrays, (np.ndarray, Traced)):
        return len(shape_of(arrays)) > 0  # numpy joins an array's rows
    return hasattr(arrays, "__iter__")


def _refuse_out(name, out, pieces, join):
    """numpy's join into ``out`` when no piece is traced; a clear refusal when one is."""
    if any(type(a) is Traced for a in pieces):
        raise TypeError(f"autodiff.numpy.{name}(..., out=...) would write traced values into an existing array in "
                        f"place, which cannot be differentiated; drop out= and use the array it returns")
    return join(out)


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join a sequence of arrays along an existing axis; ``axis=None`` ravels them first, as numpy does
    (so the primitive, its pullback and its batch rule only ever see an integer axis).

    >>> concatenate([np.ones((2, 2)), np.zeros(1)], axis=None)
    array([1., 1., 1., 1., 0.])
    """
    pieces = _pieces(arrays, "concatenate", dtype, casting)
    if out is not None:
        return _refuse_out("concatenate", out, pieces, lambda out: np.concatenate(pieces, axis, out=out))
    if axis is None:
        return _concatenate_p(*[ravel(a) for a in pieces], axis=0)
    return _concatenate_p(*pieces, axis=axis)


concat = concatenate  # numpy 2's name for it (the array API's)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join a sequence of same-shaped arrays along a new axis.

    >>> stack([[1.0, 2.0], np.zeros(2)], axis=1)
    array([[1., 0.],
           [2., 0.]])
    """
    pieces = _pieces(arrays, "stack", dtype, casting)
    if out is not None:
        return _refuse_out("stack", out, pieces, lambda out: np.stack(pieces, axis, out=out))
    return _stack_p(*pieces, axis=axis)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack horizontally: along axis 1, or axis 0 when the pieces are 1-D (scalars become 1-D).

    >>> hstack([1.0, np.arange(2.0)])
    array([1., 0., 1.])
    """
    pieces = [atleast_1d(a) for a in _pieces(tup, "hstack", dtype, casting)]
    return concatenate(pieces, axis=0 if pieces and len(shape_of(pieces[0])) == 1 else 1)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack vertically: 1-D pieces become rows.

    >>> vstack([np.ones(2), [2.0, 3.0]], dtype=np.float32)
    array([[1., 1.],
           [2., 3.]], dtype=float32)
    """
    return concatenate([atleast_2d(a) for a in _pieces(tup, "vstack", dtype, casting)], axis=0)


def dstack(tup):
    """Stack along the third axis: ``(n,)`` pieces become ``(1, n, 1)``, ``(m, n)`` ones ``(m, n, 1)``.

    >>> dstack([np.ones(2), np.zeros(2)]).shape
    (1, 2, 2)
    """
    return concatenate([atleast_3d(a) for a in _pieces(tup, "dstack")], axis=2)


def _as_column(a):
    shape = shape_of(a)
    if len(shape) >= 2:
        return a
    return transpose(reshape(a, (1,) * (2 - len(shape)) + shape))


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays are stacked as they are).

    >>> column_stack([np.arange(2.0), np.ones(2)])
    array([[0., 1.],
           [1., 1.]])
    """
    return concatenate([_as_column(a) for a in _pieces(tup, "column_stack")], axis=1)


def append(arr, values, axis=None):
    """``values`` appended to the end of ``arr`` along ``axis`` (both flattened when ``None``).

    >>> append(np.ones((1, 2)), [[3.0, 4.0]], axis=0)
    array([[1., 1.],
           [3., 4.]])
    """
    arr, values = as_array(arr), as_array(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def unstack(x, /, *, axis=0):
    """The arrays along ``axis``, as a tuple: ``stack``'s inverse.

    >>> unstack(np.arange(4.0).reshape(2, 2), axis=1)
    (array([0., 2.]), array([1., 3.]))
    """
    x = as_array(x)
    lead = (slice(None),) * (axis % len(shape_of(x)))
    return tuple(getitem(x, lead + (i,)) for i in range(shape_of(x)[axis]))


def block(arrays):
    """An array assembled from nested lists of blocks, as ``numpy.block``: the innermost lists are joined along
    the last axis, the next along the one before, and so on; every block first gets as many axes as the result.

    >>> block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), 5.0]])
    array([[1., 0., 0.],
           [0., 1., 0.],
           [1., 1., 5.]])
    """
    depth, blocks = _block_layout(arrays)
    ndim = max([depth] + [len(shape_of(b)) for b in blocks])
    return _assemble(arrays, depth, iter(_at_least(b, ndim) for b in blocks))


def _block_layout(arrays):
    """The depth of the nested lists (the same for every block, as numpy requires) and the blocks, in order."""
    depths, blocks, stack = [], [], [(arrays, "")]
    while stack:
        node, where = stack.pop()
        if type(node) is tuple:
            raise TypeError(f"autodiff.numpy.block: arrays{where} is a tuple; only lists arrange blocks, as in numpy "
                            "(make it a list, or wrap a tuple meant as one array in anp.array)")
        if type(node) is list:
            if not node:
                raise ValueError(f"autodiff.numpy.block: the list at arrays{where} is empty; every list needs a block")
            stack.extend((item, f"{where}[{k}]") for k, item in reversed(list(enumerate(node))))
        else:
            depths.append((where.count("["), where))
            blocks.append(as_array(node))
    first = depths[0][0]
    for d, where in depths:
        if d != first:
            raise ValueError(f"autodiff.numpy.block: list depths are mismatched; the first block is at depth {first}, "
                             f"but arrays{where} is at depth {d}")
    return first, blocks


def _at_least(a, ndim):
    shape = shape_of(a)
    return a if len(shape) >= ndim else reshape(a, (1,) * (ndim - len(shape)) + shape)


def _assemble(node, depth, blocks, level=0):
    if level == depth:
        return next(blocks)
    return concatenate([_assemble(item, depth, blocks, level + 1) for item in node], axis=level - depth)
