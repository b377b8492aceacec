"""Non-differentiable helpers: they accept traced values and return plain results.

Shapes, indices, masks and fresh constants carry no derivative, so these
strip tracing from their arguments and call numpy.  Under ``vmap`` every
answer is one example's, as a loop over the examples would give it: masks
stay batched (each elementwise op is a primitive with the elementwise batching
rule), shapes are one example's, and the reductions (``any``, ``all``,
``array_equal``, ``allclose``, ``count_nonzero``, ``argmax``) reduce each
example, so a Python branch on their result raises (it differs between
examples) rather than taking one branch for the whole batch.  A check that
may read the whole batch at once (a fast path taken when it holds for every
example) says so with ``autodiff.extend.plain_value``.
"""

import functools

import numpy as np

from .._primitive import _plain_results
from .._traced import value_of as strip_all
from ..extend import Traced, defbatch, is_inexact, primitive, value_of
from ._batch_helpers import elementwise, reduction
from ._broadcast import shape_of
from ._searchsorted import searchsorted


def _strip(x):
    if type(x) in (list, tuple):
        return type(x)(_strip(v) for v in x)
    return value_of(x)


def _batched(args, kwargs):
    stack = list(args) + list(kwargs.values())
    while stack:
        x = stack.pop()
        if type(x) in (list, tuple):
            stack.extend(x)
        elif type(x) is Traced:  # stripped already: batched (vmap) or staged (jit), each a primitive's case
            return True
    return False


def nondifferentiable(np_fun, under_vmap=None):
    """Wrap ``np_fun`` so it takes traced values and returns a plain result (``under_vmap`` for batched ones)."""

    @functools.wraps(np_fun)
    def plain(*args, **kwargs):
        args, kwargs = tuple(map(_strip, args)), {k: _strip(v) for k, v in kwargs.items()}
        if under_vmap is not None and _batched(args, kwargs):
            return under_vmap(*args, **kwargs)
        return np_fun(*args, **kwargs)

    return plain


def _elementwise(name):
    prim = primitive(getattr(np, name), name)
    defbatch(prim, elementwise(prim))
    _plain_results.add(prim)
    return prim


def _reduction(name, flatten_none=False, default=None):
    fun = getattr(np, name)
    prim = primitive(lambda x, axis=default, **kwargs: fun(x, axis=axis, **kwargs), name)
    defbatch(prim, reduction(prim, flatten_none))
    _plain_results.add(prim)
    return prim


def _array_equal(a, b, equal_nan=False):
    """numpy's ``array_equal`` per example: the same shape, and every entry equal (NaNs equal to NaNs with
    ``equal_nan``)."""
    if shape_of(a) != shape_of(b):
        return False  # the same for every example
    same = _UNDER_VMAP["equal"](a, b)
    if equal_nan and all(is_inexact(np.result_type(strip_all(v))) for v in (a, b)):
        both_nan = _UNDER_VMAP["logical_and"](_UNDER_VMAP["isnan"](a), _UNDER_VMAP["isnan"](b))
        same = _UNDER_VMAP["logical_or"](same, both_nan)
    return _AXIS_REDUCTIONS["all"](same)


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy's ``allclose`` per example: ``all(isclose(a, b))``."""
    return _AXIS_REDUCTIONS["all"](_UNDER_VMAP["isclose"](a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def refuse_under_vmap(name):
    """The stand-in under ``vmap`` for ``numpy.name``, whose result's size or layout depends on each example's
    values (``nonzero``, ``unique``): it raises, pointing to a mask."""

    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"numpy.{name} under vmap or jit: its result's size or layout depends on the values (each example's, "
            "each call's), so it cannot be batched or traced; use a mask (anp.where) instead, or call it outside "
            "vmap and jit"
        )

    return refuse


_ELEMENTWISE = [
    "isfinite", "isnan", "isinf", "isclose", "equal", "not_equal", "greater", "greater_equal", "less",
    "less_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "zeros_like", "ones_like",
    "empty_like", "full_like", "floor", "ceil", "round", "rint", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "floor_divide",
]
_AXIS_REDUCTIONS = {name: _reduction(name) for name in ("any", "all", "count_nonzero")}
_UNDER_VMAP = {name: _elementwise(name) for name in _ELEMENTWISE}
_UNDER_VMAP.update(
    shape=lambda x: shape_of(x), ndim=lambda x: len(shape_of(x)), size=lambda x: int(np.prod(shape_of(x))),
    argmax=_reduction("argmax", flatten_none=True), argmin=_reduction("argmin", flatten_none=True),
    argsort=_reduction("argsort", flatten_none=True, default=-1),
    any=_AXIS_REDUCTIONS["any"], all=_AXIS_REDUCTIONS["all"], count_nonzero=_AXIS_REDUCTIONS["count_nonzero"],
    allclose=_allclose, array_equal=_array_equal,
    result_type=lambda *a: np.result_type(*map(strip_all, a)),
    iscomplexobj=lambda x: np.iscomplexobj(strip_all(x)), isrealobj=lambda x: np.isrealobj(strip_all(x)),
    argwhere=refuse_under_vmap("argwhere"), nonzero=refuse_under_vmap("nonzero"), searchsorted=searchsorted,
)

_NAMES = [
    "shape", "ndim", "size", "argmax", "argmin", "argsort", "argwhere", "nonzero",
    "isfinite", "isnan", "isinf", "isclose", "allclose", "array_equal",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "any", "all",
    "zeros_like", "ones_like", "empty_like", "full_like", "floor", "ceil", "round", "rint",
    "searchsorted", "count_nonzero", "result_type", "iscomplexobj", "isrealobj",
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "floor_divide",
]

NONDIFF = {name: nondifferentiable(getattr(np, name), _UNDER_VMAP.get(name)) for name in _NAMES}
