"""Named model-wide reductions: sumsq, abssum, maxabs, and the table of known reductions.

Each is a primitive with its pullback beside it.  ``_KNOWN`` (read through
``autodiff.extend.known_reduction``) tells rule writers (``traversal.total``) that ``f`` is one of these, or
``sum``/``linalg.norm``, and gives its plain value and its differentiable
pullback, so a model-wide sum of it can run without per-leaf tracing.
Values accumulate in float64 and come back in the input's dtype.
"""

import numpy as np

from ..extend import defvjp, primitive, value_of
from . import _reductions
from . import linalg as _linalg
from ._broadcast import broadcast_to, cast, dtype_of, shape_of
from ._elementwise import multiply, sign


def _wide(x):
    r = np.ravel(x)
    if r.dtype.kind == "c":
        r = np.abs(r)
    return r if r.dtype == np.float64 else r.astype(np.float64)


def _back(value, x):
    kind = np.result_type(x)
    return np.result_type(kind if kind.kind == "f" else np.float64).type(value)


def _sumsq(x):
    r = _wide(x)
    return _back(np.dot(r, r), x)


def _sumsq_vjp(g, ans, x):
    return multiply(g, multiply(2.0, x))


sumsq = primitive(_sumsq, "sumsq")
defvjp(sumsq, _sumsq_vjp)


def _abssum(x):
    return _back(np.abs(_wide(x)).sum(), x)


def _abssum_vjp(g, ans, x):
    return multiply(g, sign(x))


abssum = primitive(_abssum, "abssum")
defvjp(abssum, _abssum_vjp)


def _maxabs(x):
    r = _wide(x)
    return _back(np.abs(r).max() if r.size else 0.0, x)


def _maxabs_vjp(g, ans, x):
    hit = np.abs(value_of(x)) == value_of(ans)  # every element at the maximum shares the gradient
    share = (hit / max(int(hit.sum()), 1)).astype(dtype_of(x))
    return multiply(multiply(g, sign(x)), share)


maxabs = primitive(_maxabs, "maxabs")
defvjp(maxabs, _maxabs_vjp)


class Reduction:
    """A known reduction: ``value(x)`` on plain arrays, ``vjp(g, x)`` in differentiable ops."""

    __slots__ = ("name", "value", "vjp")

    def __init__(self, name, value, vjp):
        self.name, self.value, self.vjp = name, value, vjp


def _sum_value(x):
    return _back(_wide(x).sum(), x) if np.result_type(x).kind != "c" else np.sum(x)


def _norm_vjp(g, x):
    return _linalg._norm_vjp(g, _linalg.norm(x), x)


def _sum_vjp(g, x):
    out = broadcast_to(g, shape_of(x))
    return out if dtype_of(out) == dtype_of(x) else cast(out, dtype_of(x))


_KNOWN = {
    _reductions.sum: Reduction("sum", _sum_value, _sum_vjp),
    _linalg.norm: Reduction("norm", _linalg._norm_value, _norm_vjp),
    sumsq: Reduction("sumsq", _sumsq, lambda g, x: _sumsq_vjp(g, None, x)),
    abssum: Reduction("abssum", _abssum, lambda g, x: _abssum_vjp(g, None, x)),
    maxabs: Reduction("maxabs", _maxabs, lambda g, x: _maxabs_vjp(g, maxabs(x), x)),
}



