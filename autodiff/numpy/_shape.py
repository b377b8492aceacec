"""Shape ops: they move values around, so their pullbacks move cotangents back."""

import numpy as np

from ..extend import defvjp, defvjp_joint, primitive
from ._broadcast import shape_of


def _reshape(x, shape, order="C"):
    if type(x) is np.ndarray:
        return x.reshape(shape, order=order)
    return np.reshape(x, shape, order=order)


reshape = primitive(_reshape, "reshape")
defvjp(reshape, lambda g, ans, x, shape, order="C": reshape(g, shape_of(x), order=order))


def _transpose(x, axes=None):
    return np.transpose(x, axes)


transpose = primitive(_transpose, "transpose")
defvjp(transpose, lambda g, ans, x, axes=None: transpose(g, _inverse(axes, len(shape_of(x)))))


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


def ravel(x):
    """Flatten to 1-D (a reshape)."""
    return reshape(x, (-1,))


def _stack(*arrays, axis=0):
    return np.stack(arrays, axis=axis)


_stack_p = primitive(_stack, "stack")


def _stack_vjp(g, ans, *arrays, axis=0):
    from ._indexing import getitem

    where = (slice(None),) * (axis % len(shape_of(ans)))
    return [getitem(g, where + (i,)) for i in range(len(arrays))]


defvjp_joint(_stack_p, _stack_vjp)


def stack(arrays, axis=0):
    """Join a sequence of same-shaped arrays along a new axis."""
    return _stack_p(*arrays, axis=axis)


def _concatenate(*arrays, axis=0):
    return np.concatenate(arrays, axis=axis)


_concatenate_p = primitive(_concatenate, "concatenate")


def _concatenate_vjp(g, ans, *arrays, axis=0):
    from ._indexing import getitem

    ndim = len(shape_of(ans))
    lead = (slice(None),) * (axis % ndim)
    bounds = np.cumsum([0] + [shape_of(a)[axis] for a in arrays])
    return [getitem(g, lead + (slice(int(lo), int(hi)),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


defvjp_joint(_concatenate_p, _concatenate_vjp)


def concatenate(arrays, axis=0):
    """Join a sequence of arrays along an existing axis."""
    return _concatenate_p(*arrays, axis=axis)
