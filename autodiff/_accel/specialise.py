"""jit's shape specialisation: what a primitive works out from its operands' shapes on every call, worked out once.

A program knows every value's shape as traced, and a call whose values take other shapes stops before it could
matter (:class:`~autodiff._jit.replay.ShapeChanged`). Some primitives spend much of a small call on that
shape work: ``sum_to_shape`` builds its tuple of axes and reshapes (on a 10×40 float64 array the reduction alone
took 0.46-0.48 of its time), and the transposed products ``matmul_nt`` and ``matmul_tn`` go through ``np.asarray``
and ``swapaxes`` before numpy's ``matmul`` parses its arguments (``np.dot`` of the same 10×40 and 40×40 operands
took 0.72-0.75 of their time, and 0.79-0.82 of ``matmul``'s; alternating rounds, AMD EPYC, Zen 3, 2026-12-07).
On MAML's meta-step, 1,763 equations on
arrays of 10 to 1,600 values, these are 604 equations. This pass gives each such equation, where its shapes
allow, a :class:`Specialised` primitive whose function does only the arithmetic:

- ``sum_to_shape(g, shape)`` becomes ``np.add.reduce(g, axis=axes)`` with the axes found now, ``keepdims``
  when that alone gives ``shape``: the same reduction, so the same bits. Where one reduction cannot give the shape
  (leading axes summed away *and* inner ones kept as 1) or no axis is summed (a reshape), it stays as it is.
- ``matmul(a, b)``, ``matmul_nt(a, b)`` (``a bᵀ``) and ``matmul_tn(a, b)`` (``aᵀ b``) on two float32 or float64
  matrices become ``np.dot`` of the matrices (``b.T``, ``a.T``: views). Both reach the same BLAS product for
  matrices, but numpy may take a matrix-vector routine for a dimension of 1 in one and not the other, so the bits
  may differ there in the last place; jit promises 1e-12 (float64) and 1e-6 (float32) relative with every pass on,
  and bitwise replay only under ``AUTODIFF_REFERENCE=1``, where this pass is off.
- ``sum(x, axis=<last>)`` (``keepdims`` or not) of a float array of two axes or more, and ``softmax`` and
  ``log_softmax`` along the last axis, over rows of at most :data:`~.rows.ROW_LIMIT` values, become
  :mod:`.rows`' loops over the rows (numpy calls its inner loop once per row: on 128 rows of 10 the small HVP's
  ``log_softmax`` took 20 µs, its form 8-12).  A row's sum is summed in another order: within the same promise.

The pass is an acceleration (``jit_specialise``, off under ``AUTODIFF_REFERENCE=1``). It runs after buffer
planning, which reads the primitives themselves, and before the call-site form. An outer transform's values
(``grad(jit(f))``) call the primitive itself (``Specialised.__call__``), on the same operands.

>>> import numpy as np, autodiff, autodiff.numpy as anp
>>> from autodiff.numpy._broadcast import sum_to_shape
>>> program = autodiff.jit(lambda g: sum_to_shape(g * 2.0, (3,)), passes=()).lower(np.ones((4, 3)))
>>> print(specialise_shapes(program))
program <lambda>
  in  %0:float64[4,3]
  %1 = multiply(%0, 2.0) -> float64[4,3]
  %2 = sum_to_shape[axes 0](%1, (3,)) -> float64[3]
  out %2
>>> specialise_shapes(program).run([np.ones((4, 3))])
[array([8., 8., 8.])]
"""

import functools

import numpy as np

from .._jit.program import Aval, Var
from ..numpy import _broadcast, _linalg, _reductions
from . import rows

_MATRIX_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


class Specialised:
    """A primitive as one equation of a program calls it: ``fun`` does the arithmetic for the traced shapes, on the
    equation's own operands; ``__call__`` (traced operands: an outer transform's) is the primitive itself."""

    shape_follows_operands = True  # the call-site form checks no shape after it (codegen.follows_operands)

    def __init__(self, prim, fun, note):
        self.prim, self.fun = prim, fun
        self.__name__ = f"{prim.__name__}[{note}]"

    def __call__(self, *operands, **kwargs):
        return self.prim(*operands, **kwargs)

    def __repr__(self):
        return f"<{self.__name__}>"


def specialise(program):
    """The pass: :func:`specialise_shapes` (the hook slot ``jit_specialise`` calls it when on)."""
    return specialise_shapes(program)


def specialise_shapes(program):
    """``program`` with each equation that has a shape-specialised form for its traced shapes using it."""
    return program.replace([_specialised(eq, program.avals) for eq in program.equations])


def _specialised(eq, avals):
    """``eq``, with a :class:`Specialised` primitive when its shapes allow one."""
    form = _forms().get(eq.prim)
    if form is None or type(avals[eq.out]) is not Aval:
        return eq
    made = form(eq, [_aval(a, avals) for a in eq.operands], avals[eq.out])
    return eq if made is None else eq._replace(prim=made)


def _aval(a, avals):
    """An operand's shape and dtype: a value's as traced, a constant array's own; ``None`` for anything else."""
    if type(a) is Var:
        return avals[a.ref] if type(avals[a.ref]) is Aval else None
    return Aval(a.shape, a.dtype) if type(a) is np.ndarray else None


def _sum_to_shape(eq, operands, out):
    """``sum_to_shape(g, shape)`` as one ``np.add.reduce`` with fixed axes, when that gives ``shape`` itself."""
    g, shape = operands[0], eq.operands[1]
    if eq.kwargs or g is None or not g.shape or type(shape) is not tuple or out.shape != shape:
        return None
    axes, keepdims = _axes(g.shape, shape)
    if not axes:
        return None
    reduce = np.add.reduce

    def fun(g, shape):
        return reduce(g, axes, None, None, keepdims)

    return Specialised(eq.prim, fun, f"axes {','.join(map(str, axes))}")


def _axes(g_shape, shape):
    """``(axes, keepdims)`` of the one ``np.add.reduce`` summing ``g_shape`` to ``shape``; ``((), False)`` when
    nothing is summed (a reshape) or one reduction cannot do it (leading axes summed away and inner ones kept)."""
    lead = len(g_shape) - len(shape)
    inner = tuple(i + lead for i, n in enumerate(shape) if n == 1 and g_shape[i + lead] != 1)
    if lead and inner:
        return (), False
    return tuple(range(lead)) + inner, bool(inner)


def _matrices(eq, operands):
    """Are there two operands and no keyword, matrices of one float dtype (``np.dot``'s BLAS product)?"""
    if eq.kwargs or len(operands) != 2 or None in operands:
        return False
    a, b = operands
    return len(a.shape) == 2 and len(b.shape) == 2 and a.dtype == b.dtype and a.dtype in _MATRIX_DTYPES


def _matmul(eq, operands, out):
    if not _matrices(eq, operands):
        return None
    return Specialised(eq.prim, np.dot, "dot")


def _matmul_nt(eq, operands, out):
    if not _matrices(eq, operands):
        return None
    dot = np.dot

    def fun(a, b):
        return dot(a, b.T)

    return Specialised(eq.prim, fun, "dot")


def _matmul_tn(eq, operands, out):
    if not _matrices(eq, operands):
        return None
    dot = np.dot

    def fun(a, b):
        return dot(a.T, b)

    return Specialised(eq.prim, fun, "dot")


def _rows(x, axis):
    """Is ``x`` (an operand's aval) a float32 or float64 array reduced along its last axis (``axis``) whose rows
    :mod:`.rows` reduces in one loop (at most ``ROW_LIMIT`` values each, at least one)?"""
    if x is None or not x.shape or x.dtype not in _MATRIX_DTYPES or not 1 <= x.shape[-1] <= rows.ROW_LIMIT:
        return False
    return type(axis) in (int, tuple) and _reductions._normalise_axis(axis, len(x.shape)) == (len(x.shape) - 1,)


def _sum(eq, operands, out):
    """``sum(x, axis=<last>)``, of an array of two axes or more, as the sums of its rows (kept as 1 with
    ``keepdims``)."""
    kwargs = eq.kwargs
    x = operands[0] if len(operands) == 1 else None
    if set(kwargs) - {"axis", "keepdims", "dtype"} or kwargs.get("dtype") is not None:
        return None
    if not _rows(x, kwargs.get("axis")) or len(x.shape) < 2:  # a whole 1-D array: numpy answers a scalar
        return None
    sums = rows.row_sums

    def kept(x):
        return sums(x)[..., None]

    fast = kept if kwargs.get("keepdims") else sums
    return Specialised(eq.prim, rows.Tiered(fast, eq.prim.fun), "rows")


def _along_rows(fast):
    """The form of ``softmax`` or ``log_softmax`` along the last axis: ``fast``, :mod:`.rows`' loop."""

    def form(eq, operands, out):
        x = operands[0] if len(operands) == 1 else None
        if set(eq.kwargs) != {"axis"} or not _rows(x, eq.kwargs["axis"]):
            return None
        return Specialised(eq.prim, rows.Tiered(fast, eq.prim.fun), "rows")

    return form


@functools.cache
def _forms():
    """primitive -> its form: (equation, its operands' avals (None: not an array), its value's aval) -> a
    Specialised or None.  Built on the pass's first run: ``autodiff.nn`` is imported then, not with autodiff."""
    from ..nn import functional

    return {_broadcast.sum_to_shape: _sum_to_shape, _linalg.matmul: _matmul, _linalg.matmul_nt: _matmul_nt,
            _linalg.matmul_tn: _matmul_tn, _reductions.sum: _sum,
            functional.log_softmax_p: _along_rows(rows.log_softmax_rows),
            functional.softmax_p: _along_rows(rows.softmax_rows)}
