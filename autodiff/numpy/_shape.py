"""Shape ops: they move values around, so their pullbacks move cotangents back."""

import numpy as np

from ..extend import ZeroTangent, defbatch, defjvp, defjvp_joint, deflinear, defvjp, defvjp_joint, primitive
from ._batch_ops import concatenate_rule, pad_rule, reshape_rule, roll_rule, stack_rule, transpose_rule
from ._broadcast import dtype_of, shape_of


def _reshape(x, shape, order="C"):
    if type(x) is np.ndarray:
        return x.reshape(shape, order=order)
    return np.reshape(x, shape, order=order)


reshape = primitive(_reshape, "reshape")
defvjp(reshape, lambda g, ans, x, shape, order="C": reshape(g, shape_of(x), order=order), reads=("order",))
deflinear(reshape)
defbatch(reshape, reshape_rule)


def _transpose(x, axes=None):
    return np.transpose(x, axes)


transpose = primitive(_transpose, "transpose")
defvjp(transpose, lambda g, ans, x, axes=None: transpose(g, _inverse(axes, len(shape_of(x)))), reads=("axes",))
deflinear(transpose)
defbatch(transpose, transpose_rule)


def _inverse(axes, ndim):
    if axes is None:
        return None
    return tuple(np.argsort([a % ndim for a in axes]))


def swapaxes(x, axis1, axis2):
    """Swap two axes (a transpose, so it needs no rule of its own)."""
    axes = list(range(len(shape_of(x))))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return transpose(x, tuple(axes))


def expand_dims(x, axis):
    """Insert size-1 axes (a reshape)."""
    return reshape(x, np.expand_dims(np.empty(shape_of(x), dtype=bool), axis).shape)


def squeeze(x, axis=None):
    """Remove size-1 axes (a reshape)."""
    return reshape(x, np.squeeze(np.empty(shape_of(x), dtype=bool), axis).shape)


def ravel(x, order="C"):
    """Flatten to 1-D (a reshape); ``order="F"`` reads the first axis fastest (the reversed axes, flattened).

    >>> ravel(np.arange(6).reshape(2, 3), order="F")
    array([0, 3, 1, 4, 2, 5])
    """
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"autodiff.numpy.ravel: order={order!r}; pass 'C' (rows first) or 'F' (columns first)")
    if order == "F":  # 'A' and 'K' follow memory, which for the fresh arrays a derivative makes is C's order
        x = transpose(x)
    return reshape(x, (-1,))


def _stack(*arrays, axis=0):
    return np.stack(arrays, axis=axis)


_stack_p = primitive(_stack, "stack")


def _stack_vjp(g, ans, *arrays, axis=0):
    from ._broadcast import unbroadcast
    from ._indexing import getitem

    where = (slice(None),) * (axis % len(shape_of(ans)))
    # unbroadcast casts each piece to its array's dtype: a real array stacked with a complex one gets a real cotangent
    return [unbroadcast(getitem(g, where + (i,)), a) for i, a in enumerate(arrays)]


defvjp_joint(_stack_p, _stack_vjp)
defjvp_joint(_stack_p, lambda ts, ans, *arrays, axis=0: _stack_p(*_zeros_filled(ts, arrays), axis=axis))
defbatch(_stack_p, stack_rule)


def _zeros_filled(tangents, arrays):
    """The tangents of a join's arrays, zeros (shaped and typed like the array) where none flows."""
    return [np.zeros(shape_of(a), dtype_of(a)) if type(t) is ZeroTangent else t for t, a in zip(tangents, arrays)]


def stack(arrays, axis=0):
    """Join a sequence of same-shaped arrays along a new axis."""
    return _stack_p(*arrays, axis=axis)


def _concatenate(*arrays, axis=0):
    return np.concatenate(arrays, axis=axis)


_concatenate_p = primitive(_concatenate, "concatenate")


def _concatenate_vjp(g, ans, *arrays, axis=0):
    from ._broadcast import unbroadcast
    from ._indexing import getitem

    ndim = len(shape_of(ans))
    lead = (slice(None),) * (axis % ndim)
    bounds = np.cumsum([0] + [shape_of(a)[axis] for a in arrays])
    pieces = [getitem(g, lead + (slice(int(lo), int(hi)),)) for lo, hi in zip(bounds[:-1], bounds[1:])]
    return [unbroadcast(p, a) for p, a in zip(pieces, arrays)]  # each in its array's dtype (real stays real)


defvjp_joint(_concatenate_p, _concatenate_vjp)
defjvp_joint(_concatenate_p, lambda ts, ans, *arrays, axis=0: _concatenate_p(*_zeros_filled(ts, arrays), axis=axis))
defbatch(_concatenate_p, concatenate_rule)


def concatenate(arrays, axis=0):
    """Join a sequence of arrays along an existing axis; ``axis=None`` ravels them first, as numpy does
    (so the primitive, its pullback and its batch rule only ever see an integer axis).

    >>> import numpy as np
    >>> concatenate([np.ones((2, 2)), np.zeros(1)], axis=None)
    array([1., 1., 1., 1., 0.])
    """
    if axis is None:
        return _concatenate_p(*[ravel(a) for a in arrays], axis=0)
    return _concatenate_p(*arrays, axis=axis)


def flip(x, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when ``None``); an indexing view."""
    from ._indexing import getitem

    ndim = len(shape_of(x))
    axes = range(ndim) if axis is None else [a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))]
    index = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim))
    return getitem(x, index)


def moveaxis(x, source, destination):
    """Move axes to new positions (a transpose)."""
    return transpose(x, tuple(_moved_order(len(shape_of(x)), source, destination)))


def _moved_order(ndim, source, destination):
    src = [s % ndim for s in np.atleast_1d(source)]
    dst = [d % ndim for d in np.atleast_1d(destination)]
    rest = [a for a in range(ndim) if a not in src]
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    fill = iter(rest)
    return [o if o is not None else next(fill) for o in order]


def split(x, indices_or_sections, axis=0):
    """Split into a list of sub-arrays (slices of ``x``)."""
    from ._indexing import getitem

    n = shape_of(x)[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(f"autodiff.numpy.split: {n} does not split into {indices_or_sections} parts")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0, *indices_or_sections, n]
    lead = (slice(None),) * (axis % len(shape_of(x)))
    return [getitem(x, lead + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _roll(x, shift, axis=None):
    return np.roll(x, shift, axis=axis)


roll = primitive(_roll, "roll")
defvjp(roll, lambda g, ans, x, shift, axis=None: roll(g, _negate(shift), axis))
deflinear(roll)
defbatch(roll, roll_rule)


def _negate(shift):
    return tuple(-s for s in shift) if isinstance(shift, tuple) else -shift


def tile(x, reps):
    """Repeat the whole array ``reps`` times per axis (a reshape and a broadcast)."""
    from ._broadcast import broadcast_to

    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = shape_of(x)
    d = max(len(shape), len(reps))
    shape, reps = (1,) * (d - len(shape)) + shape, (1,) * (d - len(reps)) + reps
    spread = reshape(x, tuple(v for n in shape for v in (1, n)))
    big = broadcast_to(spread, tuple(v for r, n in zip(reps, shape) for v in (r, n)))
    return reshape(big, tuple(r * n for r, n in zip(reps, shape)))


def repeat(x, repeats, axis=None):
    """Repeat each element ``repeats`` times along ``axis`` (an integer index: it scatter-adds back)."""
    from ._indexing import getitem

    if axis is None:
        x, axis = ravel(x), 0
    n = shape_of(x)[axis]
    index = np.repeat(np.arange(n), repeats)
    return getitem(x, (slice(None),) * (axis % len(shape_of(x))) + (index,))


def _pad(x, pad_width, constant_values=0):
    return np.pad(x, pad_width, mode="constant", constant_values=constant_values)


_pad_p = primitive(_pad, "pad")


def _unpad(g, ans, x, pad_width, constant_values=0):
    from ._indexing import getitem

    widths = np.broadcast_to(np.asarray(pad_width), (len(shape_of(x)), 2))
    index = tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, shape_of(x)))
    return getitem(g, index)


defvjp(_pad_p, _unpad)
defjvp(_pad_p, lambda t, ans, x, pad_width, constant_values=0: _pad_p(t, pad_width))  # the fill is a constant
defbatch(_pad_p, pad_rule)


def pad(x, pad_width, mode="constant", constant_values=0):
    """Pad with a constant (the only mode with a pullback here)."""
    if mode != "constant":
        raise NotImplementedError(f"autodiff.numpy.pad: mode={mode!r} is not supported; use mode='constant'")
    return _pad_p(x, pad_width, constant_values=constant_values)
