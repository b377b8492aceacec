"""Non-differentiable helpers: they accept traced values and return plain results.

Shapes, indices, masks and fresh constants carry no derivative, so these
strip tracing from their arguments and call numpy.
"""

import functools

import numpy as np

from ..extend import value_of


def _strip(x):
    if type(x) in (list, tuple):
        return type(x)(_strip(v) for v in x)
    return value_of(x)


def nondifferentiable(np_fun):
    """Wrap ``np_fun`` so it takes traced values and returns a plain result."""

    @functools.wraps(np_fun)
    def plain(*args, **kwargs):
        return np_fun(*map(_strip, args), **{k: _strip(v) for k, v in kwargs.items()})

    return plain


_NAMES = [
    "shape", "ndim", "size", "argmax", "argmin", "argsort", "argwhere", "nonzero",
    "isfinite", "isnan", "isinf", "isclose", "allclose", "array_equal",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "any", "all",
    "zeros_like", "ones_like", "empty_like", "full_like", "floor", "ceil", "round", "rint",
    "searchsorted", "count_nonzero", "result_type", "iscomplexobj", "isrealobj",
]

NONDIFF = {name: nondifferentiable(getattr(np, name)) for name in _NAMES}
