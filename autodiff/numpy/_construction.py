"""Array construction: ``array`` and ``asarray`` of nested lists mixing traced values and constants.

numpy lays a nested list out in row-major order, so the leaves of the list,
read depth first, fill consecutive blocks of the flattened result.  That makes
construction one primitive, ``pack``: ravel every leaf and concatenate.  Its
pullback is ``split_flat`` (cut the flattened cotangent back into the leaves'
blocks), and each is the other's pullback, so construction nests to any order.
"""

import numpy as np

from .._traced import value_of as _strip_all
from .._tuple_values import stacked
from ..extend import (
    Thunk,
    Traced,
    ZeroTangent,
    defbatch,
    defjvp_joint,
    deflinear,
    defvjp,
    defvjp_joint,
    is_inexact,
    plain_value,
    primitive,
    unthunk,
)
from ._batch_ops import pack_rule, split_flat_rule
from ._broadcast import broadcast_to, cast, dtype_of, shape_of
from ._nondiff import NONDIFF, nondifferentiable
from ._shape import reshape

_SCALARS = (bool, int, float, complex)
_plain_full_like = NONDIFF["full_like"]  # a constant fill: no derivative, batched under vmap


def _cast_value(v, dtype):
    v = np.asarray(v)
    return v.real.astype(dtype) if v.dtype.kind == "c" and dtype.kind != "c" else v.astype(dtype, copy=False)


def _pack(shape, dtype, *leaves):
    flat = [np.ravel(_cast_value(leaf, dtype)) for leaf in leaves]
    return (np.concatenate(flat) if flat else np.zeros(0, dtype)).reshape(shape)


pack = primitive(_pack, "pack")


def _split_flat(flat, sizes):
    return tuple(np.split(flat, np.cumsum(sizes)[:-1]))


split_flat = primitive(_split_flat, "split_flat")


def _pack_vjp(g, ans, shape, dtype, *leaves):
    pieces = split_flat(reshape(g, (-1,)), tuple(int(np.prod(shape_of(leaf))) for leaf in leaves))
    return [None, None] + [Thunk(lambda k=k, leaf=leaf: _piece_for(pieces[k], leaf)) for k, leaf in enumerate(leaves)]


def _piece_for(piece, leaf):
    """A block of the cotangent, shaped and typed like its leaf (the real part for a real leaf)."""
    piece = reshape(piece, shape_of(leaf))
    return piece if dtype_of(piece) == dtype_of(leaf) else cast(piece, dtype_of(leaf))


def _split_flat_vjp(g, ans, flat, sizes):
    dtype = dtype_of(flat)
    parts = [unthunk(c) for c in g]
    parts = [np.zeros(n, dtype) if isinstance(c, ZeroTangent) else c for c, n in zip(parts, sizes)]
    return pack((sum(sizes),), dtype, *parts)


defvjp_joint(pack, _pack_vjp)
defvjp(split_flat, _split_flat_vjp)


def _pack_jvp(tangents, ans, shape, dtype, *leaves):
    """``pack`` is linear in its leaves together: pack their tangents, zeros for a leaf without one."""
    return pack(shape, dtype, *[np.zeros(shape_of(leaf), dtype) if type(t) is ZeroTangent else t
                                for t, leaf in zip(tangents[2:], leaves)])


defjvp_joint(pack, _pack_jvp)
defbatch(pack, pack_rule)
deflinear(split_flat)  # a tuple of tangents, one per block
defbatch(split_flat, split_flat_rule)


def _leaves(obj):
    """The leaves of nested lists and tuples, depth first (iterative: no recursion limit)."""
    out, stack = [], [obj]
    while stack:
        node = stack.pop()
        if type(node) in (list, tuple):
            stack.extend(reversed(node))
        else:
            out.append(node)
    return out


def _shape_of_nested(obj, leaves):
    """The shape numpy gives ``obj``: each leaf stands in as a cheap placeholder of its shape."""
    stand_ins = iter([np.broadcast_to(np.zeros((), bool), shape_of(leaf)) for leaf in leaves])
    try:
        return np.shape(_rebuild(obj, stand_ins))
    except ValueError as error:
        raise ValueError(
            f"autodiff.numpy.array: the nested sequence is ragged ({error}); every entry at one depth must "
            "have the same shape, as for numpy.array"
        ) from None


def _rebuild(obj, stand_ins):
    if type(obj) in (list, tuple):
        return [_rebuild(item, stand_ins) for item in obj]
    return next(stand_ins)


def _result_dtype(leaves):
    """numpy's promotion, with Python scalars weak (a float32 array and ``3.0`` give float32)."""
    strong = {dtype_of(leaf) for leaf in leaves if type(leaf) not in _SCALARS}
    weak = {type(leaf) for leaf in leaves if type(leaf) in _SCALARS}
    examples = [kind(1) for kind in weak]
    if not strong:
        return np.result_type(*[np.asarray(e).dtype for e in examples])
    return np.result_type(*strong, *examples)


def _numeric(leaves):
    return bool(leaves) and all(type(leaf) in _SCALARS or dtype_of(leaf).kind in "biufc" for leaf in leaves)


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    """``numpy.array`` that differentiates through the traced values inside ``obj``.

    ``obj`` is a traced value, a constant, or nested lists/tuples mixing both;
    the result's dtype follows numpy (Python scalars are weak, so float32 stays
    float32, as under NEP 50 and in JAX) unless ``dtype`` is given.  Without a
    traced value inside it returns a plain array, of that same dtype: a
    function's output dtype never depends on whether it is being differentiated.

    >>> import numpy as np
    >>> import autodiff
    >>> import autodiff.numpy as anp
    >>> autodiff.grad(lambda x: anp.sum(anp.array([x, x * 2.0, 3.0]) * np.array([1.0, 10.0, 100.0])))(0.5)
    21.0
    """
    obj = _one_array(obj)
    leaves = _leaves(obj) if type(obj) in (list, tuple) else [obj]
    if dtype is None and type(obj) in (list, tuple) and _numeric(leaves):
        dtype = _result_dtype(leaves)  # the same dtype whether or not a leaf is traced
    if not any(type(leaf) is Traced for leaf in leaves):
        return np.array(obj, dtype=dtype, copy=copy, order=order, ndmin=ndmin)
    dtype = np.dtype(dtype) if dtype is not None else _result_dtype(leaves)
    if not is_inexact(dtype):  # an integer or boolean array: built in the leaves' dtype, then cast (no derivative)
        return astype(array(obj, ndmin=ndmin), dtype)
    if type(obj) is Traced:
        out = obj if dtype_of(obj) == dtype else cast(obj, dtype)
    else:
        out = pack(_shape_of_nested(obj, leaves), dtype, *leaves)
    missing = ndmin - len(shape_of(out))
    return reshape(out, (1,) * missing + shape_of(out)) if missing > 0 else out


def asarray(obj, dtype=None, order=None):
    """``numpy.asarray`` that differentiates through traced values (see :func:`array`).

    >>> import numpy as np
    >>> asarray([1.0, 2.0]).dtype
    dtype('float64')
    """
    obj = _one_array(obj)
    if type(obj) is Traced:
        return obj if dtype is None or dtype_of(obj) == np.dtype(dtype) else astype(obj, dtype)
    if type(obj) in (list, tuple):  # through array, so the dtype is the same traced or not
        return array(obj, dtype=dtype)
    return np.asarray(obj, dtype=dtype, order=order)


def _astype_plain(x, dtype):
    return np.asarray(x).astype(dtype)


_cast_plain = nondifferentiable(_astype_plain, under_vmap=cast)  # batched: the cast primitive, one per example


def astype(x, dtype, copy=True):
    """``x`` cast to ``dtype``, numpy's ``astype`` as a function (``copy`` is numpy's; a traced value is
    never changed in place anyway).

    A cast to a float or complex dtype is differentiable: its cotangent is cast back to ``x``'s dtype (the
    real part, for a real ``x``).  A cast to an integer or boolean dtype is a step function, whose derivative
    is zero wherever it exists: it gives a plain array, as numpy's, with no derivative (under ``vmap`` it
    stays batched, one per example), so ``w.astype(int)`` and ``np.int64(w)`` make an index from a traced value.

    >>> import autodiff
    >>> autodiff.grad(lambda w: (w.astype(np.float32) * w[w.astype(int)]).sum())(np.array([1.5, 0.5]))
    array([1., 3.])
    """
    dtype = np.dtype(dtype)
    if type(x) is not Traced:
        return np.asarray(x).astype(dtype, copy=copy)
    if is_inexact(dtype):  # always an array, as numpy's (a 0-d value may be held as a numpy scalar)
        return cast(x, dtype)
    return _cast_plain(x, dtype)


def _one_array(obj):
    """A primitive's several outputs (``slogdet``'s), traced as one tuple, as numpy's array of them."""
    return stacked(obj, "autodiff.numpy.array") if type(obj) is Traced and type(_strip_all(obj)) is tuple else obj


def from_nested(x):
    """``x`` as an array when it is a list or tuple (for reductions given ``[a, b, 3.0]``), else ``x``."""
    return asarray(x) if type(x) in (list, tuple) else x



def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """``numpy.full_like``, differentiable in ``fill_value`` (``a`` gives only a shape and a dtype).

    >>> import autodiff
    >>> autodiff.grad(lambda c: full_like(np.zeros(3), c).sum())(2.0)
    3.0
    """
    if type(fill_value) is not Traced:
        return _plain_full_like(a, fill_value, dtype=dtype, order=order, subok=subok, shape=shape)
    return _filled(shape_of(a) if shape is None else shape, fill_value, dtype_of(a) if dtype is None else dtype)


def full(shape, fill_value, dtype=None, order="C"):
    """``numpy.full``, differentiable in ``fill_value``.

    >>> import autodiff
    >>> autodiff.grad(lambda c: full((2, 2), c).sum())(1.5)
    4.0
    """
    if type(fill_value) is not Traced:
        return np.full(shape, fill_value, dtype=dtype, order=order)
    return _filled(shape, fill_value, dtype_of(fill_value) if dtype is None else dtype)


def _filled(shape, fill_value, dtype):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return broadcast_to(cast(fill_value, np.dtype(dtype)), shape)


def asanyarray(a, dtype=None, order=None):
    """``asarray`` (a traced value is never a subclass of ndarray), numpy's ``asanyarray``.

    >>> asanyarray((1.0, 2.0))
    array([1., 2.])
    """
    return asarray(a, dtype=dtype) if type(a) in (Traced, list, tuple) else np.asanyarray(a, dtype=dtype, order=order)


def ascontiguousarray(a, dtype=None):
    """``asarray`` laid out in C order (a traced value's layout is its own business, so it is as ``asarray``).

    >>> ascontiguousarray(np.ones((2, 2)).T).flags.c_contiguous
    True
    """
    return asarray(a, dtype=dtype) if type(a) in (Traced, list, tuple) else np.ascontiguousarray(a, dtype=dtype)


def asfortranarray(a, dtype=None):
    """``asarray`` laid out in Fortran order (a traced value is as ``asarray``).

    >>> asfortranarray(np.ones((2, 2))).flags.f_contiguous
    True
    """
    return asarray(a, dtype=dtype) if type(a) in (Traced, list, tuple) else np.asfortranarray(a, dtype=dtype)


def asarray_chkfinite(a, dtype=None, order=None):
    """``asarray``, refusing infinities and NaNs (read off the plain values) with numpy's ``ValueError``.

    >>> asarray_chkfinite([1.0, np.inf])
    Traceback (most recent call last):
    ValueError: autodiff.numpy.asarray_chkfinite: array must not contain infs or NaNs
    """
    out = asarray(a, dtype=dtype, order=order)
    if is_inexact(dtype_of(out)) and not np.isfinite(plain_value(out)).all():
        raise ValueError("autodiff.numpy.asarray_chkfinite: array must not contain infs or NaNs")
    return out


def copy(a, order="K", subok=False):
    """A copy of ``a``: numpy's for a plain array; a traced value as it is (it is never changed in place, so
    a copy would only cost memory).

    >>> copy([1.0, 2.0])
    array([1., 2.])
    """
    if type(a) is Traced:
        return a
    return array(a) if type(a) in (list, tuple) else np.copy(a, order=order, subok=subok)
