"""More of numpy's non-differentiable functions: they accept traced values and return plain results.

Each gives integers, booleans, or a piecewise-constant function of its input (``trunc``, ``spacing``), whose
derivative is zero wherever it exists, so stripping the derivative is exact; ``NONDIFF`` (``_nondiff``) holds
the older ones, and this module adds to it with the same wrapper.  Under ``vmap`` every example gets its own
answer: elementwise ones are primitives with the elementwise batching rule, reductions along an axis batch
along it, shape readers read one example's shape, and those whose result has a size that depends on the values
(``flatnonzero``, ``unravel_index`` of a batched index...) refuse clearly.

>>> import numpy as np
>>> import autodiff
>>> autodiff.vmap(PLAIN["signbit"])(np.array([[-1.0, 2.0], [3.0, -0.0]]))
array([[ True, False],
       [False,  True]])
"""

import numpy as np

from .._traced import value_of as strip_all
from ..extend import defbatch, primitive
from ._batch_helpers import elementwise, reduction
from ._broadcast import shape_of
from ._nondiff import NONDIFF, nondifferentiable, refuse_under_vmap


def _elementwise(name):
    prim = primitive(getattr(np, name), name)
    defbatch(prim, elementwise(prim))
    return prim


def _nan_arg(name):
    fun = getattr(np, name)
    prim = primitive(lambda x, axis=None, keepdims=False: fun(x, axis=axis, keepdims=keepdims), name)
    defbatch(prim, reduction(prim, flatten_none=True))
    return prim


def _of_shape(fun):
    """A numpy function of an array's shape alone, given one example's shape under ``vmap``."""
    return lambda arr, *args, **kwargs: fun(np.empty(shape_of(arr), bool), *args, **kwargs)


_ELEMENTWISE = [
    "signbit", "trunc", "fix", "spacing", "isreal", "iscomplex", "isneginf", "isposinf", "isnat", "gcd", "lcm",
    "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "bitwise_not", "bitwise_invert",
    "bitwise_count",
]
_UNDER_VMAP = {name: _elementwise(name) for name in _ELEMENTWISE}
_UNDER_VMAP.update({name: _nan_arg(name) for name in ("nanargmax", "nanargmin")})
_UNDER_VMAP.update({name: refuse_under_vmap(name) for name in (
    "flatnonzero", "argpartition", "lexsort", "isin", "unravel_index", "ravel_multi_index", "ix_", "packbits",
    "unpackbits", "array_equiv", "digitize", "min_scalar_type")})

_SHAPE_READERS = {name: _of_shape(getattr(np, name)) for name in (
    "diag_indices_from", "tril_indices_from", "triu_indices_from")}

PLAIN = {name: nondifferentiable(getattr(np, name), _UNDER_VMAP[name]) for name in _UNDER_VMAP}
"""Plain-valued numpy functions, by name: each strips tracing from its arguments (see the module's text)."""
PLAIN.update({name: nondifferentiable(fun, fun) for name, fun in _SHAPE_READERS.items()})
PLAIN.update(
    around=NONDIFF["round"],  # numpy's other name for round
    einsum_path=nondifferentiable(np.einsum_path, refuse_under_vmap("einsum_path")),
    common_type=nondifferentiable(np.common_type, lambda *arrays: np.common_type(*map(strip_all, arrays))),
)
