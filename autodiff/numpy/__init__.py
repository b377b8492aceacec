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
from . import _batch_named, _indexing, _interop, _methods, fft, linalg  # noqa: F401  (_batch_named registers rules)
from ._angles import angle, deg2rad, degrees, rad2deg, radians, unwrap
from ._array_api import (
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cumulative_prod,
    cumulative_sum,
    matrix_transpose,
    matvec,
    permute_dims,
    pow,
    vecdot,
    vecmat,
)
from ._binary import arctan2, clip, fmax, fmin, hypot, logaddexp, maximum, minimum
from ._broadcast import broadcast_to, cast
from ._cleanup import nan_to_num, real_if_close
from ._complex import conj, conjugate, imag, real
from ._construction import (
    array,
    asanyarray,
    asarray,
    asarray_chkfinite,
    ascontiguousarray,
    asfortranarray,
    astype,
    copy,
    full,
    full_like,
)
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
from ._grids import broadcast_arrays, ediff1d, geomspace, interp, logspace, meshgrid, trapezoid
from ._index_tricks import c_, r_
from ._indexing import getitem, take
from ._joining import append, block, column_stack, concat, concatenate, dstack, hstack, stack, unstack, vstack
from ._linalg import diag, diagonal, dot, einsum, inner, matmul, outer, tensordot, trace, vdot
from ._named import abssum, maxabs, scaled, sumsq
from ._namespace import AS_IS
from ._nan_reductions import nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar
from ._nondiff import NONDIFF
from ._picking import (
    choose,
    compress,
    delete,
    diagflat,
    extract,
    resize,
    sort_complex,
    take_along_axis,
    trim_zeros,
)
from ._plain_ops import PLAIN
from ._polynomials import (
    convolve,
    correlate,
    polyadd,
    polyder,
    polyint,
    polymul,
    polysub,
    polyval,
    vander,
)
from ._products import cross, kron
from ._ranges import linspace
from ._real_functions import fabs, logaddexp2
from ._reductions import amax, amin, cumprod, cumsum, max, mean, min, prod, std, sum, var
from ._remainder import mod, remainder
from ._rotations import fliplr, flipud, rot90
from ._scatter import add_at, add_at_in_place, bincount
from ._selection import select, where
from ._shape import (
    expand_dims,
    flip,
    moveaxis,
    pad,
    ravel,
    repeat,
    reshape,
    roll,
    split,
    squeeze,
    swapaxes,
    tile,
    transpose,
)
from ._sign_and_parts import copysign, divmod, float_power, fmod, frexp, heaviside, ldexp, modf, positive
from ._sinc import sinc
from ._sorting import partition, sort
from ._splitting import array_split, dsplit, hsplit, vsplit
from ._statistics import average, corrcoef, cov, median, percentile, ptp, quantile
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
    "tril", "triu", "remainder", "mod", "deg2rad", "rad2deg", "degrees", "radians", "unwrap", "fabs", "sinc",
    "logaddexp2", "angle", "nan_to_num", "real_if_close", "array_split", "hsplit", "vsplit", "dsplit",
    "column_stack", "atleast_1d", "atleast_2d", "atleast_3d", "rollaxis", "flipud", "fliplr", "rot90",
    "append", "select", "cross", "kron", "diff", "gradient", "linspace", "sort", "partition",
    # joining, index tricks, scatter-add (issue 37)
    "dstack", "block", "concat", "unstack", "r_", "c_", "add_at", "bincount",
    # numpy 2's array-API names
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "pow", "permute_dims", "matrix_transpose",
    "vecdot", "matvec", "vecmat", "cumulative_sum", "cumulative_prod",
    # more of numpy's everyday ops, compositions of the above
    "positive", "copysign", "heaviside", "fmod", "divmod", "modf", "ldexp", "frexp", "float_power",
    "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nancumsum", "nancumprod",
    "ptp", "average", "quantile", "percentile", "median", "cov", "corrcoef",
    "take_along_axis", "delete", "compress", "extract", "resize", "trim_zeros", "diagflat", "choose", "sort_complex",
    "broadcast_arrays", "meshgrid", "logspace", "geomspace", "trapezoid", "ediff1d", "interp",
    "convolve", "correlate", "polymul", "polyadd", "polysub", "polyder", "polyint", "polyval", "vander",
    "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "copy",
]

globals().update(NONDIFF, full_like=full_like)  # differentiable in the fill value
globals().update(PLAIN)
globals().update(AS_IS)  # numpy's own constants, dtypes, constructors and queries (see _namespace)
__all__ += list(NONDIFF) + list(PLAIN) + list(AS_IS)
add.at = add_at_in_place  # numpy's in-place np.add.at, for plain arrays (add_at returns the sum instead)

_methods.install()
_ops.install(sum=sum, real=real, stack=stack, reshape=reshape, transpose=transpose, moveaxis=moveaxis,
             broadcast_to=broadcast_to, getitem=getitem, tuple_item=_indexing.tuple_item,
             cast=cast)  # the ops the engine uses
_interop.install()
_interop.register_routes({name: globals()[name] for name in __all__})
_interop.register_routes({name: getattr(linalg, name) for name in linalg.__all__}, np.linalg)
