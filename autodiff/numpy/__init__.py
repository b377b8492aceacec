"""A differentiable numpy namespace: ``import autodiff.numpy as anp``.

Each op is a primitive with its pullback beside it (or a composition of
primitives), so ``grad`` of code written against ``anp`` works to any order.

>>> import numpy as np
>>> import autodiff
>>> import autodiff.numpy as anp
>>> autodiff.grad(lambda x: anp.sum(anp.sin(x) ** 2))(np.zeros(3))
array([0., 0., 0.])
"""

import numpy as np

from . import _interop, _methods, linalg
from ._broadcast import broadcast_to, cast
from ._elementwise import (
    abs,
    absolute,
    add,
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
    where,
)
from ._indexing import getitem
from ._linalg import dot, matmul
from ._named import abssum, maxabs, sumsq
from ._nondiff import NONDIFF
from ._reductions import mean, sum
from ._shape import concatenate, expand_dims, ravel, reshape, squeeze, stack, swapaxes, transpose


def astype(x, dtype):
    """``x`` cast to ``dtype`` (the cotangent is cast back to ``x``'s dtype)."""
    return cast(x, np.dtype(dtype))


__all__ = [
    "abs", "absolute", "abssum", "add", "astype", "maxabs", "sumsq", "broadcast_to", "concatenate",
    "cos", "divide", "dot", "exp",
    "expand_dims", "getitem", "log", "matmul", "mean", "multiply", "negative",
    "power", "ravel", "reshape", "sign", "sin", "sqrt", "square", "squeeze", "stack",
    "subtract", "sum", "swapaxes", "tanh", "transpose", "true_divide", "where",
]

globals().update(NONDIFF)
__all__ += list(NONDIFF)

_methods.install()
_interop.install()
_interop.register_routes({name: globals()[name] for name in __all__})
_interop.register_routes({"norm": linalg.norm}, np.linalg)
