"""``autodiff.numpy.linalg``: differentiable linear algebra (norm for now; more to come).

>>> import math

import numpy as np
>>> import autodiff
>>> autodiff.grad(norm)(np.array([3.0, 4.0]))
array([0.6, 0.8])
"""

import math

import numpy as np

from .._kernels import reduce
from ..extend import defvjp, primitive, value_of
from ._broadcast import dtype_of
from ._elementwise import divide, multiply, where


def _norm_value(x):
    dtype = np.result_type(x)
    value = math.sqrt(reduce("sumsq", np.abs(x) if dtype.kind == "c" else x))  # float64 accumulation
    return (dtype if dtype.kind == "f" else np.dtype(np.float64)).type(value)


_norm = primitive(_norm_value, "norm")


def _norm_vjp(g, ans, x):
    safe = where(np.equal(value_of(ans), 0), 1, ans)  # the zero vector: subgradient 0, not nan
    return multiply(g, divide(x, safe))


defvjp(_norm, _norm_vjp)


def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm of a vector, or the Frobenius norm of an array (``ord=None``, ``axis=None``).

    Accumulates in float64; a float32 input gives a float32 norm.  Other
    ``ord``/``axis`` values arrive with the numpy-coverage issue.
    """
    if ord not in (None, 2, "fro") or axis is not None or keepdims:
        raise NotImplementedError(
            f"autodiff.numpy.linalg.norm: ord={ord!r}, axis={axis!r}, keepdims={keepdims!r} is not "
            "supported yet; use ord=None over the whole array, or write it as "
            "anp.sqrt(anp.sum(x * x, axis))"
        )
    if dtype_of(x).kind not in "fc":
        raise TypeError(f"autodiff.numpy.linalg.norm: expected a float array, got dtype {dtype_of(x)}")
    return _norm(x)
