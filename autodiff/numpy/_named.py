"""Named model-wide reductions: sumsq, abssum, maxabs, and the table of known reductions.

Each is a primitive with its pullback and pushforward beside it.  ``_KNOWN`` (read through
``autodiff.extend.known_reduction``) tells rule writers (``traversal.total``) that ``f`` is one of these, or
``sum``/``linalg.norm``, and gives its plain value and its differentiable
pullback, so a model-wide sum of it can run without per-leaf tracing.
Values accumulate in float64 and come back in the input's dtype.
"""

import math

import numpy as np

from .. import _buffers, _kernels, _parallel
from .._kernels import reduce
from ..extend import Traced, defjvp, defvjp, primitive, value_of
from . import _reductions
from . import linalg as _linalg
from ._broadcast import broadcast_to, cast, dtype_of, shape_of
from ._complex import conj, real
from ._elementwise import multiply, sign


def _dtype(x):
    return x.dtype if type(x) is np.ndarray else np.result_type(x)


def _real(x):
    return np.abs(x) if _dtype(x).kind == "c" else x


def _back(value, x):
    dtype = _dtype(x)
    if dtype.kind == "c":  # |z| of complex64 is float32, as numpy's abs gives
        return np.finfo(dtype).dtype.type(value)
    return dtype.type(value) if dtype.kind == "f" else np.float64(value)


def _sumsq(x):
    if type(x) is np.ndarray and x.dtype.kind == "f":  # the hot case, without the general dtype handling
        return x.dtype.type(reduce("sumsq", x))
    return _back(reduce("sumsq", _real(x)), x)


def _fused_out(x):
    """Where a fused kernel writes its gradient: numpy's allocator for small arrays, the pool for large."""
    return np.empty(x.shape, x.dtype) if x.nbytes < _buffers.MIN_BYTES else _buffers.empty(x.shape, x.dtype)


def _sumsq_double(x):
    if type(x) is not np.ndarray or x.dtype.kind != "f":
        return _sumsq(x), _plain_sumsq_vjp(1.0, x)
    return _kernels.fused("sumsq_double", x, out=_fused_out(x))


def _abssum_sign(x):
    if type(x) is not np.ndarray or x.dtype.kind != "f":
        return _abssum(x), _plain_abssum_vjp(1.0, x)
    return _kernels.fused("abssum_sign", x, out=_fused_out(x))


def _norm_unit(x):
    """Two passes: the norm first (a global quantity), then ``x / ||x||`` (the gradient at g = 1)."""
    n = _linalg._norm_value(x)
    if type(x) is not np.ndarray or x.dtype.kind != "f" or n == 0:
        return n, _plain_norm_vjp(1.0, x)
    _, unit = _kernels.fused("scale_into", x, 1.0 / float(n), out=_fused_out(x))
    return float(n), unit


def _conj(x):
    """``conj(x)`` for complex ``x``: |z| pulls back through ``conj(z)/|z|`` (JAX's convention, docs/complex.md)."""
    return conj(x) if dtype_of(x).kind == "c" else x


def _pushed(unit_cotangent, t):
    """``Re Σ c t`` for the cotangent ``c`` of ``x`` at ``g = 1``: a real reduction's JVP, its pullback transposed."""
    moved = multiply(unit_cotangent, t)
    return _reductions.sum(real(moved) if dtype_of(moved).kind == "c" else moved)


def _sumsq_vjp(g, ans, x):
    return multiply(g, multiply(2.0, _conj(x)))


sumsq = primitive(_sumsq, "sumsq")
defvjp(sumsq, _sumsq_vjp)
defjvp(sumsq, lambda t, ans, x: multiply(2.0, _pushed(_conj(x), t)))


def _abssum(x):
    return _back(reduce("abssum", _real(x)), x)


def _abssum_vjp(g, ans, x):
    return multiply(g, _conj(sign(x)))


abssum = primitive(_abssum, "abssum")
defvjp(abssum, _abssum_vjp)
defjvp(abssum, lambda t, ans, x: _pushed(_conj(sign(x)), t))


def _maxabs(x):
    return _back(reduce("maxabs", _real(x)), x)


def _maxabs_vjp(g, ans, x):
    hit = np.abs(value_of(x)) == value_of(ans)  # every element at the maximum shares the gradient
    share = (hit / max(int(hit.sum()), 1)).astype(dtype_of(x))
    return multiply(multiply(g, _conj(sign(x))), share)


maxabs = primitive(_maxabs, "maxabs")
defvjp(maxabs, _maxabs_vjp)
defjvp(maxabs, lambda t, ans, x: _pushed(_maxabs_vjp(1.0, ans, x), t))


class Reduction:
    """A known reduction: ``value(x)`` and ``plain_vjp(g, x)`` on plain arrays, ``vjp(g, x)`` in
    differentiable ops (used when ``g`` or ``x`` is traced, so higher derivatives see it).

    ``fused(x)`` gives ``(value, gradient at g = 1)`` in one pass where a kernel
    does that.  ``kernel`` (with ``finish`` applied to its float result) and
    ``fused_total(xs) -> (Σ value as a float, result dtype, gradients at g = 1)``,
    where given, run a whole list of float32/float64 arrays in one tight loop
    (``None`` for anything else): a model's parameters are often many small
    arrays, where per-call overhead would cost as much as the kernel.  A
    ``fused_kernel`` (one pass: value, and gradient at g = 1 into a buffer)
    gives ``fused_total`` by itself, and runs large models in pieces on two threads.
    """

    __slots__ = ("name", "value", "vjp", "plain_vjp", "fused", "kernel", "finish", "fused_total", "fused_kernel")

    def __init__(self, name, value, vjp, plain_vjp, fused=None, kernel=None, finish=None, fused_total=None,
                 fused_kernel=None):
        self.name, self.value, self.vjp, self.plain_vjp = name, value, vjp, plain_vjp
        self.fused, self.kernel, self.finish, self.fused_kernel = fused, kernel, finish, fused_kernel
        if fused_total is None and fused_kernel is not None:  # the one-pass kernel, over every array in one loop
            fused_total = _fused_total(fused_kernel)
        self.fused_total = fused_total

    def __repr__(self):
        return f"<{self.name}>"

    def _raw(self, xs):
        """The kernel's float results (``finish`` applied), ``None`` where an array needs ``value``;
        ``None`` altogether without a kernel.  Large arrays are shared with a second thread."""
        kernel = self.kernel
        if kernel is None:
            return None
        if not _parallel.splits(xs):
            raw = _kernels.reduce_each(kernel, xs)
        elif _kernels.all_fast(xs):  # large: pieces shared by two threads
            raw = _parallel.sum_pieces(_kernels.runner(kernel), [x.ravel() for x in xs])
        else:
            raw = _parallel.map_arrays(lambda x: _kernels.reduce_each(kernel, (x,))[0], xs)
        finish = self.finish
        return raw if finish is None else [v if v is None else finish(v) for v in raw]

    def values(self, xs):
        """``value(x)`` for each plain array, split across two threads when the arrays are large."""
        xs = list(xs)
        raw = self._raw(xs)
        if raw is None:
            return _parallel.map_arrays(self.value, xs)
        return [self.value(x) if v is None else x.dtype.type(v) for x, v in zip(xs, raw)]

    def total(self, xs, init):
        """``init + Σ value(x)``; where every value comes from the kernel, summed in float64 and rounded once."""
        xs = list(xs)
        if self.kernel is not None and xs and not _parallel.splits(xs):
            summed = _kernels.sum_each(self.kernel, xs, self.finish)
            if summed is not None:
                return init + summed[1].type(summed[0])
        raw = self._raw(xs)
        if raw is None or None in raw:
            return sum(self.values(xs), init)
        return _sum(xs, raw, init)

    def total_and_unit_grads(self, xs, init):
        """``init + Σ value(x)``, and (for a fused reduction) the gradients at g = 1 written in the same pass."""
        xs = list(xs)
        if self.fused is None:
            return self.total(xs, init), None
        if self.fused_total is not None and xs and not _parallel.splits(xs):
            got = self.fused_total(xs)
            if got is not None:
                return init + got[1].type(got[0]), got[2]
        if self.fused_kernel is not None and xs and _kernels.all_fast(xs):  # large: pieces shared by two threads
            outs = [_fused_out(x) for x in xs]
            values = _parallel.sum_pieces(_kernels.runner(self.fused_kernel), [x.ravel() for x in xs],
                                          [out.reshape(-1) for out in outs])
            return _sum(xs, values, init), outs
        pairs = _parallel.map_arrays(self.fused, xs)
        return _sum(xs, [v for v, _ in pairs], init), [grad for _, grad in pairs]

    def plain_vjps(self, g, xs, unit_grads=None):
        """``plain_vjp(g, x)`` for each plain array (from ``unit_grads`` when the forward made them)."""
        if unit_grads is None:
            return _parallel.map_arrays(lambda x: self.plain_vjp(g, x), list(xs))
        if g == 1:
            return unit_grads
        return _parallel.map_arrays(lambda u: np.multiply(u, u.dtype.type(g), out=u), unit_grads)

    def pullback(self, g, x):
        """``g`` times the derivative at ``x``: plain numpy when nothing is traced."""
        if type(g) is Traced or type(x) is Traced:
            return self.vjp(g, x)
        return self.plain_vjp(g, x)


def _sum(xs, values, init):
    """``init + Σ values`` in the arrays' result dtype.  When every array is float32/float64, the values
    are the kernels' float64 results: summed as floats and rounded once, not converted one by one."""
    dtypes = {x.dtype for x in xs}
    if not xs or not dtypes <= _kernels.FAST_DTYPES:
        return sum((_back(v, x) for v, x in zip(values, xs)), init)
    dtype = dtypes.pop() if len(dtypes) == 1 else np.result_type(*dtypes)
    return init + dtype.type(sum(values))


def _scalar(g, x):
    return _dtype(x).type(g)


def _out(x):
    if type(x) is np.ndarray and x.nbytes < _buffers.MIN_BYTES:
        return np.empty_like(x)
    return _buffers.empty(np.shape(x), _dtype(x))


def _plain_sum_vjp(g, x):
    out = _out(x)
    out.fill(g)
    return out


def _plain_conj(x):
    return np.conj(x) if x.dtype.kind == "c" else x


def _plain_norm_vjp(g, x):
    n = _linalg._norm_value(x)
    return np.multiply(_plain_conj(x), _scalar(g / n, x), out=_out(x)) if n != 0 else np.zeros_like(x)


def _plain_sumsq_vjp(g, x):
    return np.multiply(_plain_conj(x), _scalar(2 * g, x), out=_out(x))


def _plain_abssum_vjp(g, x):
    out = np.sign(x, out=_out(x))
    return np.multiply(_plain_conj(out), _scalar(g, x), out=out)


def _plain_maxabs_vjp(g, x):
    hit = np.abs(x) == _maxabs(x)
    return _plain_conj(np.sign(x)) * hit * _scalar(g / max(int(hit.sum()), 1), x)


def _sum_value(x):
    return _back(reduce("sum", x), x) if np.result_type(x).kind != "c" else np.sum(x)


def _norm_vjp(g, x):
    return _linalg._norm_vjp(g, _linalg.norm(x), x)


def _sum_vjp(g, x):
    out = broadcast_to(g, shape_of(x))
    return out if dtype_of(out) == dtype_of(x) else cast(out, dtype_of(x))


def _fused_total(kernel):
    return lambda xs: _kernels.fused_sum_each(kernel, xs, _fused_out)


_F64 = np.dtype(np.float64)


def _norm_unit_total(xs):
    """Σ ||x|| and the ``x / ||x||`` (the gradients at g = 1): the norms in one kernel loop, then one
    multiply each; ``None`` unless every array is float32/float64 with a nonzero norm."""
    norms = _kernels.reduce_each("sumsq", xs)
    if None in norms or 0.0 in norms:
        return None
    acc, dtype, units = 0.0, np.dtype(np.float32), []
    for x, v in zip(xs, norms):
        n = math.sqrt(v)
        acc += n
        if x.dtype == _F64:
            dtype = _F64
        if x.ndim and x.nbytes < _buffers.MIN_BYTES:  # small: numpy's allocator, one call
            units.append(x * (1.0 / n))
        else:
            units.append(np.multiply(x, x.dtype.type(1.0 / n), out=_fused_out(x)))
    return acc, dtype, units


_KNOWN = {
    _reductions.sum: Reduction("sum", _sum_value, _sum_vjp, _plain_sum_vjp, kernel="sum"),
    _linalg.norm: Reduction(
        "norm", _linalg._norm_value, _norm_vjp, _plain_norm_vjp, _norm_unit,
        kernel="sumsq", finish=math.sqrt, fused_total=_norm_unit_total,
    ),
    sumsq: Reduction(
        "sumsq", _sumsq, lambda g, x: _sumsq_vjp(g, None, x), _plain_sumsq_vjp, _sumsq_double,
        kernel="sumsq", fused_kernel="sumsq_double",
    ),
    abssum: Reduction(
        "abssum", _abssum, lambda g, x: _abssum_vjp(g, None, x), _plain_abssum_vjp, _abssum_sign,
        kernel="abssum", fused_kernel="abssum_sign",
    ),
    maxabs: Reduction("maxabs", _maxabs, lambda g, x: _maxabs_vjp(g, maxabs(x), x), _plain_maxabs_vjp),
}





class Scaled:
    """``c * f(x)`` for a known reduction ``f`` and a plain number ``c``, recognised by ``traversal.total``.

    >>> import numpy as np
    >>> float(scaled(0.5, sumsq)(np.array([3.0, 4.0])))
    12.5
    """

    __slots__ = ("c", "f", "__name__")

    def __init__(self, c, f):
        self.c, self.f, self.__name__ = c, f, f"{c}*{getattr(f, '__name__', 'f')}"

    def __call__(self, x):
        return multiply(self.f(x), self.c)

    def __repr__(self):
        return f"scaled({self.c!r}, {self.f!r})"


def scaled(c, f):
    """``c * f`` as a function that ``traversal.total`` runs on its fast path when ``f`` is a known reduction."""
    return Scaled(c, f)


def _scaled_reduction(c, r):
    def fused(x):
        value, unit = r.fused(x)
        return value * c, np.multiply(unit, unit.dtype.type(c), out=unit)

    def finish(v):
        return (v if r.finish is None else r.finish(v)) * c

    def fused_total(xs):
        got = r.fused_total(xs)
        if got is None:
            return None
        return got[0] * c, got[1], [np.multiply(u, u.dtype.type(c), out=u) for u in got[2]]

    return Reduction(
        f"{c}*{r.name}", lambda x: _back(r.value(x) * c, x), lambda g, x: r.vjp(multiply(g, c), x),
        lambda g, x: r.plain_vjp(g * c, x), fused if r.fused is not None else None,
        r.kernel, finish, fused_total if r.fused_total is not None else None,
    )


def lookup(f):
    """The :class:`Reduction` behind ``f`` (a known reduction, or ``scaled(c, known)`` with a plain ``c``)."""
    if type(f) is Scaled:
        inner = lookup(f.f)
        if inner is None or type(f.c) is Traced or not isinstance(f.c, (int, float, np.number)):
            return None
        return _scaled_reduction(float(f.c), inner)
    try:
        return _KNOWN.get(f)
    except TypeError:  # unhashable callables are never known
        return None
