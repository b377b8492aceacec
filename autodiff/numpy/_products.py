"""Vector and Kronecker products.  ``cross`` is written with ``multiply`` and ``subtract`` in numpy's own
order, so values match numpy's and the pullbacks come from those ops; ``kron`` is one rank-1 einsum (a
matmul) laid out by a reshape, so its pullbacks are GEMVs.
"""

import string

import numpy as np

from ..extend import Traced
from ._arraylike import as_array
from ._broadcast import cast, dtype_of, shape_of
from ._elementwise import multiply, negative, subtract
from ._linalg import einsum
from ._shape import moveaxis, reshape, stack

_LABELS = string.ascii_letters


def _components(v, axis, name):
    ndim = len(shape_of(v))
    if ndim < 1:
        raise ValueError("autodiff.numpy.cross: at least one array has zero dimension")
    v = moveaxis(v, axis, -1)
    if shape_of(v)[-1] not in (2, 3):
        raise ValueError(f"autodiff.numpy.cross: {name} must hold vectors of 2 or 3 components "
                         f"along its axis {axis}, got {shape_of(v)[-1]}")
    return [v[..., i] for i in range(shape_of(v)[-1])]


def _common(v, dtype):
    if type(v) is not Traced:
        return np.asarray(v).astype(dtype)
    return v if dtype_of(v) == dtype else cast(v, dtype)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or the z-component for 2-vectors) along the given axes.

    >>> import numpy as np
    >>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = as_array(a), as_array(b)
    dtype = np.promote_types(dtype_of(a), dtype_of(b))
    u = _components(_common(a, dtype), axisa, "a")
    v = _components(_common(b, dtype), axisb, "b")
    if len(u) == 2 and len(v) == 2:
        return subtract(multiply(u[0], v[1]), multiply(u[1], v[0]))
    last = subtract(multiply(u[0], v[1]), multiply(u[1], v[0]))
    if len(u) == 2:
        parts = [multiply(u[1], v[2]), negative(multiply(u[0], v[2])), last]
    elif len(v) == 2:
        parts = [negative(multiply(u[2], v[1])), multiply(u[2], v[0]), last]
    else:
        parts = [subtract(multiply(u[1], v[2]), multiply(u[2], v[1])),
                 subtract(multiply(u[2], v[0]), multiply(u[0], v[2])), last]
    return stack(parts, axis=axisc)  # every part is a product of a's and b's: one broadcast shape


def kron(a, b):
    """The Kronecker product: blocks ``a[i, j] * b`` laid out in ``a``'s pattern (any dimensions).

    Every ``a[i] * b[k]`` pair is one rank-1 product (the einsum ``'ij,kl->ikjl'``, a matmul
    underneath), so each pullback is a GEMV of the cotangent against the other operand.

    >>> import numpy as np
    >>> kron(np.array([1.0, 2.0]), np.array([1.0, 10.0]))
    array([ 1., 10.,  2., 20.])
    """
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    nd = max(len(sa), len(sb))
    if 2 * nd > len(_LABELS):
        raise ValueError(f"autodiff.numpy.kron: at most {len(_LABELS) // 2} dimensions, got {nd}")
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    ta, tb = _LABELS[:nd], _LABELS[nd:2 * nd]
    spread = einsum(f"{ta},{tb}->{''.join(i + k for i, k in zip(ta, tb))}", reshape(a, sa), reshape(b, sb))
    return reshape(spread, tuple(m * n for m, n in zip(sa, sb)))
