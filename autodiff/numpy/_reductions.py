"""Reductions along axes; each pullback broadcasts the cotangent back."""

import numpy as np

from ..extend import defvjp, primitive
from ._broadcast import broadcast_to, dtype_of, shape_of
from ._elementwise import divide


def _normalise_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim if ndim else a for a in axes)


def keepdims_shape(shape, axis):
    """``shape`` with the reduced axes kept as size 1."""
    axes = _normalise_axis(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_reduced(g, x, axis, keepdims):
    """Broadcast a reduction's cotangent ``g`` back to the shape of ``x``."""
    from ._shape import reshape

    shape = shape_of(x)
    if not keepdims and axis is not None:
        g = reshape(g, keepdims_shape(shape, axis))
    return broadcast_to(g, shape)


def _sum(x, axis=None, keepdims=False, dtype=None):
    if type(x) is np.ndarray:  # the method skips numpy's dispatch layers: ~1 µs less per call
        return x.sum(axis=axis, keepdims=keepdims, dtype=dtype)
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)


sum = primitive(_sum, "sum")  # noqa: A001 - mirrors numpy's name
defvjp(sum, lambda g, ans, x, axis=None, keepdims=False, dtype=None: expand_reduced(g, x, axis, keepdims))


def mean(x, axis=None, keepdims=False, dtype=None):
    """Arithmetic mean, as ``sum / count`` (so its derivative comes for free)."""
    shape = shape_of(x)
    count = int(np.prod([shape[a] for a in _normalise_axis(axis, len(shape))]))
    total = sum(x, axis=axis, keepdims=keepdims, dtype=dtype)
    return divide(total, np.asarray(count, dtype=dtype or _float_dtype(x)))


def _float_dtype(x):
    dt = dtype_of(x)
    return dt if dt.kind in "fc" else np.dtype(np.float64)
