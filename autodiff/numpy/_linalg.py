"""Products: matmul and dot."""

import numpy as np

from ..extend import defvjp, primitive
from ._broadcast import shape_of, unbroadcast
from ._elementwise import multiply
from ._shape import reshape, swapaxes

matmul = primitive(np.matmul, "matmul")


def _matmul_vjp_x(g, ans, x, y):
    if len(shape_of(y)) == 1:  # (..., n) @ (n,) -> (...)
        return unbroadcast(multiply(_append_axis(g), y), x)
    if len(shape_of(x)) == 1:  # (n,) @ (..., n, m) -> (..., m)
        return unbroadcast(_drop_last(matmul(y, _append_axis(g))), x)
    return unbroadcast(matmul(g, swapaxes(y, -1, -2)), x)


def _matmul_vjp_y(g, ans, x, y):
    if len(shape_of(y)) == 1:  # (..., n) @ (n,): x^T g
        return unbroadcast(multiply(x, _append_axis(g)), y)
    if len(shape_of(x)) == 1:  # (n,) @ (..., n, m): outer(x, g)
        return unbroadcast(multiply(_append_axis(x), _insert_axis(g)), y)
    return unbroadcast(matmul(swapaxes(x, -1, -2), g), y)


def _append_axis(a):
    return reshape(a, shape_of(a) + (1,))


def _insert_axis(a):
    s = shape_of(a)
    return reshape(a, s[:-1] + (1, s[-1]))


def _drop_last(a):
    return reshape(a, shape_of(a)[:-1])


defvjp(matmul, _matmul_vjp_x, _matmul_vjp_y)


def dot(x, y):
    """``numpy.dot`` for scalars, vectors and matrices (matmul or multiply underneath)."""
    nx, ny = len(shape_of(x)), len(shape_of(y))
    if nx == 0 or ny == 0:
        return multiply(x, y)
    if nx <= 2 and ny <= 2:
        return matmul(x, y)
    raise NotImplementedError(
        f"autodiff.numpy.dot: arrays of {nx} and {ny} dimensions are not supported; "
        "use autodiff.numpy.matmul for stacks of matrices"
    )
