"""A differentiable numpy namespace: ``import autodiff.numpy as anp``.

Each op is a primitive with its pullback beside it (or a composition of
primitives), so ``grad`` of code written against ``anp`` works to any order.
Plain ``numpy`` functions called on traced values are routed here by name.

>>> import numpy as np
>>> import autodiff
>>> import autodiff.numpy as anp
>>> autodiff.grad(lambda x: anp.sum(anp.sin(x) ** 2))(np.zeros(3))
array([0., 0., 0.])
"""

import numpy as np

from .. import _ops
from . import _batch_named, _indexing, _interop, _methods, linalg  # noqa: F401  (_batch_named registers rules)
from ._angles import angle, deg2rad, degrees, rad2deg, radians
from ._binary import arctan2, clip, fmax, fmin, hypot, logaddexp, maximum, minimum
from ._broadcast import broadcast_to, cast
from ._cleanup import nan_to_num, real_if_close
from ._complex import conj, conjugate, imag, real
from ._construction import array, asarray, full, full_like
from ._differences import diff, gradient
from ._dimensions import atleast_1d, atleast_2d, atleast_3d, rollaxis
from ._elementwise import (
    abs,
    absolute,
    add,
    cbrt,
    cos,
    divide,
    exp,
    log,
    multiply,
    negative,
    power,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tanh,
    true_divide,
)
from ._indexing import getitem, take
from ._joining import append, column_stack
from ._linalg import diag, diagonal, dot, einsum, inner, matmul, outer, tensordot, trace, vdot
from ._named import abssum, maxabs, scaled, sumsq
from ._nondiff import NONDIFF
from ._products import cross, kron
from ._ranges import linspace
from ._real_functions import fabs, logaddexp2
from ._reductions import amax, amin, cumprod, cumsum, max, mean, min, prod, std, sum, var
from ._remainder import mod, remainder
from ._rotations import fliplr, flipud, rot90
from ._selection import select, where
from ._shape import (
    concatenate,
    expand_dims,
    flip,
    hstack,
    moveaxis,
    pad,
    ravel,
    repeat,
    reshape,
    roll,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    vstack,
)
from ._sinc import sinc
from ._sorting import partition, sort
from ._splitting import array_split, dsplit, hsplit, vsplit
from ._transcendental import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    cosh,
    exp2,
    expm1,
    log1p,
    log2,
    log10,
    sinh,
    tan,
)
from ._triangles import tril, triu


def astype(x, dtype):
    """``x`` cast to ``dtype`` (the cotangent is cast back to ``x``'s dtype)."""
    return cast(x, np.dtype(dtype))


def reciprocal(x):
    """``1 / x``."""
    return divide(1.0, x)


__all__ = [
    # elementwise
    "abs", "absolute", "add", "subtract", "multiply", "divide", "true_divide", "power", "negative",
    "sign", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "cbrt", "square",
    "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "maximum", "minimum", "fmax", "fmin", "clip", "where",
    "logaddexp", "hypot", "real", "imag", "conj", "conjugate", "astype",
    # reductions
    "sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "cumsum", "cumprod",
    "sumsq", "abssum", "maxabs", "scaled",
    # linear algebra
    "dot", "vdot", "inner", "outer", "matmul", "tensordot", "einsum", "trace", "diag", "diagonal",
    # shape
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
    "concatenate", "stack", "hstack", "vstack", "split", "flip", "roll", "tile", "repeat", "pad",
    # indexing
    "getitem", "take",
    # construction
    "array", "asarray", "full",
    # elementwise and shape, from autograd's and JAX's surface
    "tril", "triu", "remainder", "mod", "deg2rad", "rad2deg", "degrees", "radians", "fabs", "sinc",
    "logaddexp2", "angle", "nan_to_num", "real_if_close", "array_split", "hsplit", "vsplit", "dsplit",
    "column_stack", "atleast_1d", "atleast_2d", "atleast_3d", "rollaxis", "flipud", "fliplr", "rot90",
    "append", "select", "cross", "kron", "diff", "gradient", "linspace", "sort", "partition",
]

globals().update(NONDIFF, full_like=full_like)  # differentiable in the fill value
__all__ += list(NONDIFF)

_methods.install()
_ops.install(sum=sum, real=real, stack=stack, reshape=reshape, transpose=transpose, moveaxis=moveaxis,
             broadcast_to=broadcast_to, getitem=getitem, tuple_item=_indexing.tuple_item,
             cast=cast)  # the ops the engine uses
_interop.install()
_interop.register_routes({name: globals()[name] for name in __all__})
_interop.register_routes({name: getattr(linalg, name) for name in linalg.__all__}, np.linalg)
