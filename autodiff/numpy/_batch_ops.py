"""Batching rules of the shape, indexing, product and construction primitives (registered beside each).

Each is ``rule(level, args, bdims, kwargs) -> (out, 0)`` (see :mod:`autodiff._batch_rules`); the batch axis
leads every batched argument, and these move an example's axes (``axis``, ``shape``, an index) past it.
"""

import numpy as np

from .._batch_rules import loop
from .._batching import is_batched
from .._hooks import hooks, slot
from ._batch_helpers import align, example_shape, flat, resolved, shape_of, shift


def broadcast_to(x, shape):
    from . import _broadcast  # at call time: _broadcast registers rules made here

    return _broadcast.broadcast_to(x, shape)


def cast(x, dtype):
    from . import _broadcast  # at call time: _broadcast registers rules made here

    return _broadcast.cast(x, dtype)


def dtype_of(x):
    from . import _broadcast  # at call time: _broadcast registers rules made here

    return _broadcast.dtype_of(x)


def _front(a, bdim, size):
    """``a`` with a leading batch axis: broadcast along it when ``a`` is shared by every example."""
    return a if bdim is not None else broadcast_to(a, (size,) + shape_of(a))


def reshape_rule(level, args, bdims, kwargs):
    from ._shape import reshape

    x, shape = args[0], args[1] if len(args) > 1 else kwargs["shape"]
    order = args[2] if len(args) > 2 else kwargs.get("order", "C")
    if bdims[0] is None or order != "C":
        return loop(reshape, level, args, bdims, kwargs)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return reshape(x, (level.size,) + resolved(shape, example_shape(x, 0))), 0


def transpose_rule(level, args, bdims, kwargs):
    from ._shape import transpose

    x = args[0]
    axes = args[1] if len(args) > 1 else kwargs.get("axes")
    ndim = len(example_shape(x, 0))
    axes = tuple(range(ndim))[::-1] if axes is None else axes
    return transpose(x, (0,) + tuple(int(a) % ndim + 1 for a in axes)), 0


def broadcast_to_rule(level, args, bdims, kwargs):
    x, shape = args
    return broadcast_to(align(x, len(shape)), (level.size,) + tuple(shape)), 0


def sum_to_shape_rule(level, args, bdims, kwargs):
    from ._broadcast import sum_to_shape
    from ._reductions import sum

    g, shape = args
    lead = len(example_shape(g, 0)) - len(shape)
    if lead > 0:
        g = sum(g, axis=tuple(range(1, lead + 1)))
    return sum_to_shape(g, (level.size,) + tuple(shape)), 0


def _advanced(part):
    return not (part is None or part is Ellipsis or isinstance(part, (int, np.integer, slice)))


def _batchable_index(index):
    """Can ``(slice(None),) + index`` index the batch with the batch axis kept first?  Yes for basic indices and
    for one advanced part with no integer beside it (numpy would move the advanced axes first otherwise)."""
    parts = index if type(index) is tuple else (index,)
    advanced = [p for p in parts if _advanced(p)]
    if not advanced:
        return True
    return len(advanced) == 1 and not any(isinstance(p, (int, np.integer)) for p in parts)


def _batched_index(index):
    return (slice(None),) + (index if type(index) is tuple else (index,))


def getitem_rule(level, args, bdims, kwargs):
    from ._indexing import getitem

    x, index = args
    if bdims[1] is not None:
        return _gather(level, x, bdims[0], index)
    if not _batchable_index(index):
        return loop(getitem, level, args, bdims, kwargs)
    return getitem(x, _batched_index(index)), 0


def _gather(level, x, xdim, index):
    """``x[index]`` per example with a batched integer index: one advanced index over the batch and the first axis."""
    from ._indexing import getitem

    if dtype_of(index).kind not in "iu" or is_batched(index):  # an outer vmap's index too: one example at a time
        return loop(getitem, level, (x, index), (xdim, 0), {})
    x = _front(x, xdim, level.size)
    rows = np.arange(level.size).reshape((level.size,) + (1,) * (len(shape_of(index)) - 1))
    return getitem(x, (rows, index)), 0


def scatter_add_rule(level, args, bdims, kwargs):
    from ._indexing import scatter_add

    g, shape, dtype, index = args
    if any(b is not None for b in bdims[1:]) or not _batchable_index(index):
        return loop(scatter_add, level, args, bdims, kwargs)
    return scatter_add(g, (level.size,) + tuple(shape), dtype, _batched_index(index)), 0


def tuple_item_rule(level, args, bdims, kwargs):
    from ._indexing import tuple_item

    return tuple_item(*args), 0


def _joined(level, arrays, bdims):
    return [_front(a, b, level.size) for a, b in zip(arrays, bdims)]


def stack_rule(level, args, bdims, kwargs):
    from ._shape import _stack_p

    axis = kwargs.get("axis", 0)
    ndim = len(example_shape(args[0], bdims[0])) + 1
    return _stack_p(*_joined(level, args, bdims), axis=int(axis) % ndim + 1), 0


def concatenate_rule(level, args, bdims, kwargs):
    from ._shape import _concatenate_p

    axis = kwargs.get("axis", 0)
    ndim = len(example_shape(args[0], bdims[0]))
    return _concatenate_p(*_joined(level, args, bdims), axis=int(axis) % ndim + 1), 0


def pad_rule(level, args, bdims, kwargs):
    from ._shape import _pad_p

    x, pad_width = args[0], args[1]
    ndim = len(example_shape(x, 0))
    widths = np.broadcast_to(np.asarray(pad_width), (ndim, 2)).tolist()
    return _pad_p(x, [[0, 0]] + widths, *args[2:], **kwargs), 0


def roll_rule(level, args, bdims, kwargs):
    from ._shape import reshape, roll

    x, shift_by = args[0], args[1]
    axis = args[2] if len(args) > 2 else kwargs.get("axis")
    shape = example_shape(x, 0)
    if axis is None:
        return reshape(roll(flat(x, level), shift_by, 1), (level.size,) + shape), 0
    return roll(x, shift_by, shift(axis, len(shape))), 0


def diagonal_rule(level, args, bdims, kwargs):
    from ._linalg import diagonal

    x = args[0]
    offset, axis1, axis2 = _diagonal_args(args[1:], kwargs)
    ndim = len(example_shape(x, 0))
    return diagonal(x, offset, shift(axis1, ndim), shift(axis2, ndim)), 0


def _diagonal_args(rest, kwargs):
    names = ("offset", "axis1", "axis2")
    given = dict(zip(names, rest), **kwargs)
    return given.get("offset", 0), given.get("axis1", 0), given.get("axis2", 1)


def put_diagonal_rule(level, args, bdims, kwargs):
    from ._linalg import put_diagonal

    g, shape, dtype, offset, axis1, axis2 = args
    n = len(shape)
    return put_diagonal(g, (level.size,) + tuple(shape), dtype, offset, shift(axis1, n), shift(axis2, n)), 0


def matmul_rule(level, args, bdims, kwargs):
    """A matrix (or vector) shared by every example multiplies the batch folded into rows: one GEMM.  Two
    batched operands whose contraction has length one make a batched outer product, a broadcast multiply.
    Otherwise a batched vector becomes a one-row (or one-column) matrix, ranks are aligned, and numpy's own
    broadcasting over leading axes does the rest; the result is reshaped to one example's shape per example."""
    from ._linalg import matmul
    from ._shape import reshape

    (x, y), (bx, by) = args, bdims
    xs, ys = example_shape(x, bx), example_shape(y, by)
    out_shape = (level.size,) + _matmul_shape(xs, ys)
    if by is None and len(ys) <= 2:  # (B, ..., k) @ (k, m): rows of every example at once
        return reshape(matmul(reshape(x, (-1, xs[-1])), y), out_shape), 0
    if bx is None and len(xs) == 2:  # (m, k) @ (B, ..., k[, n]): the same, through the transposes
        return _shared_left(x, y, ys, out_shape), 0
    if bx is not None and by is not None and len(xs) == len(ys) == 2 and xs[1] == 1:
        return hooks.batched_outer(x, y), 0
    return reshape(_stacked_matmul(level, x, y, bx, by), out_shape), 0


def _shared_left(x, y, ys, out_shape):
    """``x @ y`` per example for a matrix ``x`` shared by every example: the examples' columns of ``y`` as the
    rows of one GEMM with ``xᵀ`` (a vector per example is one row), transposed back."""
    from ._linalg import matmul
    from ._shape import reshape, swapaxes, transpose

    if len(ys) == 1:  # (B, k) @ xᵀ is (B, m)
        return matmul(y, transpose(x))
    rows = swapaxes(y, -1, -2)  # (B, ..., n, k)
    product = matmul(reshape(rows, (-1, ys[-2])), transpose(x))  # (B·...·n, m)
    return swapaxes(reshape(product, out_shape[:-2] + (ys[-1], out_shape[-2])), -1, -2)


def _stacked_matmul(level, x, y, bx, by):
    """``x @ y`` with the batch one more leading axis of numpy's stacked matmul (vectors made matrices)."""
    from ._linalg import matmul
    from ._shape import reshape

    xs, ys = example_shape(x, bx), example_shape(y, by)
    if bx is not None and len(xs) == 1:
        x = reshape(x, (level.size, 1) + xs)
    if by is not None and len(ys) == 1:
        y = reshape(y, (level.size,) + ys + (1,))
    rank = max(len(xs), len(ys), 2)
    x = x if bx is None else align(x, rank)
    y = y if by is None else align(y, rank)
    return matmul(x, y)


def _batched_outer(x, y):
    """``x @ y`` for ``(B, n, 1)`` and ``(B, 1, m)``: nothing to sum, so the broadcast product ``(B, n, m)``
    (per-example weight gradients ``xᵀg`` are these).  :mod:`autodiff._accel.batching` replaces it."""
    from ._elementwise import multiply

    return multiply(x, y)


slot("batched_outer", _batched_outer, "vmap's batched outer products, per-example weight gradients (the "
     "accelerated twin writes them into a pooled buffer on two threads)")


def _matmul_shape(xs, ys):
    xm = (1,) + xs if len(xs) == 1 else xs
    ym = ys + (1,) if len(ys) == 1 else ys
    lead = np.broadcast_shapes(xm[:-2], ym[:-2])
    return lead + (() if len(xs) == 1 else xm[-2:-1]) + (() if len(ys) == 1 else ym[-1:])


def einsum_rule(level, args, bdims, kwargs):
    """A fresh letter for the batch axis, on every batched operand and on the output."""
    from ._linalg import _einsum_p, _parse

    subscripts, operands = args[0], args[1:]
    ins, out = _parse(subscripts, len(operands))
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in subscripts)
    ins = [letter + term if b is not None else term for term, b in zip(ins, bdims[1:])]
    return _einsum_p(",".join(ins) + "->" + letter + out, *operands), 0


def pack_rule(level, args, bdims, kwargs):
    from ._shape import _concatenate_p, reshape

    shape, dtype, leaves = args[0], args[1], args[2:]
    pieces = []
    for leaf, b in zip(leaves, bdims[2:]):
        leaf = _front(leaf, b, level.size)
        leaf = leaf if dtype_of(leaf) == dtype else cast(leaf, dtype)
        pieces.append(flat(leaf, level))
    return reshape(_concatenate_p(*pieces, axis=1), (level.size,) + tuple(shape)), 0


def split_flat_rule(level, args, bdims, kwargs):
    from ._indexing import getitem

    flat, sizes = args
    bounds = np.cumsum([0] + list(sizes))
    return tuple(getitem(flat, (slice(None), slice(int(lo), int(hi)))) for lo, hi in zip(bounds[:-1], bounds[1:])), 0


def permute_along_rule(level, args, bdims, kwargs):
    from ._sorting import permute_along

    (a, order, axis), (ba, bo, _) = args, bdims
    ndim = len(example_shape(a, ba) if ba is not None else example_shape(order, bo))
    order = order if bo is not None else broadcast_to(order, (level.size,) + shape_of(order))
    return permute_along(_front(a, ba, level.size), order, shift(axis, ndim)), 0


def solve_rule(level, args, bdims, kwargs):
    """``solve(a, b)``: a batched vector ``b`` becomes a one-column matrix; ranks aligned; numpy's stacking."""
    from ._shape import reshape
    from .linalg import solve

    (a, b), (ba, bb) = args, bdims
    bs = example_shape(b, bb)
    vector = bb is not None and len(bs) == 1
    if vector:
        b = reshape(b, (level.size,) + bs + (1,))
    rank = max(len(example_shape(a, ba)), len(bs) + vector)
    a = a if ba is None else align(a, rank)
    b = b if bb is None else align(b, rank)
    out = solve(a, b)
    return (reshape(out, shape_of(out)[:-1]) if vector else out), 0
