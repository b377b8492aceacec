"""Known reductions over a whole model, fused and threaded: the acceleration of ``traversal.total``.

The reference is ``total``'s generic path: ``init + Σ f(p)``, each ``f(p)`` one recorded primitive
(``autodiff.numpy._named``).  Here a known reduction (``sum``, ``linalg.norm``, ``sumsq``, ``abssum``,
``maxabs``, or ``scaled(c, one of them)`` with a plain ``c``) of many plain float32/float64 arrays runs
in one compiled loop (two threads when they are large), and its tape entry is one primitive,
``known_total``, whose forward also writes the gradients at g = 1 in the same pass and hands them to
its pullback as residuals.  Its pullback and pushforward are the reductions' own rules otherwise, so
second order and forward mode see the same derivatives as the reference.  ``install`` also runs the
single-array forwards of ``sumsq`` and ``abssum`` on the kernels, and ``inverse_norm`` of one norm without
``where`` (:func:`inverse_norm`).  Everything here is off
under ``AUTODIFF_REFERENCE=1``.

>>> import numpy as np
>>> import autodiff.numpy as anp
>>> got = known_total(anp.sumsq, [np.array([3.0]), np.array([4.0])], 0.0)
>>> got is None if not enabled("reductions") else float(got) == 25.0
True
"""

import math

import numpy as np

from .._batching import batch_through
from .._hooks import enabled
from .._traced import Tape, _state
from ..extend import (
    Thunk,
    Traced,
    ZeroTangent,
    add_tangents,
    defbatch,
    defjvp_joint,
    defvjp_fwd_bwd,
    jvp_via_ad,
    primitive,
    value_of,
    vjp_via_ad,
)
from ..numpy import _complex, _kinks, _named, _reductions
from ..numpy import linalg as _linalg
from ..numpy._broadcast import cast
from ..numpy._elementwise import multiply
from . import buffers as _buffers
from . import kernels as _kernels
from . import parallel as _parallel


def _fused_out(x):
    """Where a fused kernel writes its gradient: numpy's allocator for small arrays, the pool for large."""
    return np.empty(x.shape, x.dtype) if x.nbytes < _buffers.MIN_BYTES else _buffers.empty(x.shape, x.dtype)


class Reduction:
    """A known reduction ``f`` and the kernels that run it over many arrays.

    ``kernel`` (its float result passed through ``finish``) gives one array's value;
    ``fused_total(xs) -> (Σ value, dtype, gradients at g = 1)`` runs a list of float32/float64 arrays in
    one loop (``None`` for anything else); a one-pass ``fused_kernel`` gives it by itself and runs
    large models in pieces on two threads; ``fused(x)`` is one array's (value, gradient at g = 1).
    ``vjp(g, x)`` calls the reduction's own pullback rule (through ``vjp_via_ad`` unless given).
    """

    __slots__ = ("name", "f", "kernel", "finish", "fused", "fused_kernel", "fused_total", "vjp")

    def __init__(self, name, f, kernel, finish=None, fused=None, fused_kernel=None, fused_total=None, vjp=None):
        self.name, self.f, self.kernel, self.finish, self.fused = name, f, kernel, finish, fused
        self.vjp = vjp if vjp is not None else lambda g, x: vjp_via_ad(f, x)[1](g)[0]
        self.fused_kernel = fused_kernel
        if fused is None and fused_kernel is not None:
            self.fused = lambda x: _kernels.fused(fused_kernel, x, out=_fused_out(x))
        if fused_total is None and fused_kernel is not None:
            fused_total = lambda xs: _kernels.fused_sum_each(fused_kernel, xs, _fused_out)  # noqa: E731
        self.fused_total = fused_total

    def __repr__(self):
        return f"<{self.name}>"

    def total(self, xs, init):
        """``init + Σ f(x)`` over plain float32/float64 arrays: summed in float64 and rounded once (``None`` when
        some array is of another dtype).

        Arrays of both dtypes are summed as the reference does, each value in its array's dtype (a
        float32 array's value is a float32), so the two agree to float64 precision.
        """
        if self.kernel is None or not xs:
            return sum(_parallel.map_arrays(self.f, xs), init)
        if not _parallel.splits(xs):
            got = _kernels.sum_each(self.kernel, xs, self.finish)  # None unless all are of one float dtype
            if got is not None:
                return init + got[1].type(got[0])
        if not _kernels.all_fast(xs):
            return None
        if _mixed(xs):  # the rare case: each value in its array's dtype
            return sum(_parallel.map_arrays(self.f, xs), init)
        raw = _parallel.sum_pieces(_kernels.runner(self.kernel), [x.ravel() for x in xs])
        return _sum(xs, [v if self.finish is None else self.finish(v) for v in raw], init)

    def total_and_unit_grads(self, xs, init):
        """``init + Σ f(x)`` and the gradients at g = 1 written in the same pass (``None`` without a fused form)."""
        if self.fused_total is None or not xs:
            return self.total(xs, init), None
        if not _parallel.splits(xs):
            return self._serial_total_and_unit_grads(xs, init)
        if _mixed(xs):
            return self._each_in_its_dtype(xs, init)
        if self.fused_kernel is not None:  # large: pieces shared by two threads
            outs = [_fused_out(x) for x in xs]
            values = _parallel.sum_pieces(_kernels.runner(self.fused_kernel), [x.ravel() for x in xs],
                                          [out.reshape(-1) for out in outs])
            return _sum(xs, values, init), outs
        pairs = _parallel.map_arrays(self.fused, xs)  # the norm: two passes per array, arrays shared
        return _sum(xs, [float(v) for v, _ in pairs], init), [u for _, u in pairs]

    def _serial_total_and_unit_grads(self, xs, init):
        """:meth:`total_and_unit_grads` on the caller's thread alone."""
        got = self.fused_total(xs)  # None unless all are of one float dtype
        if got is not None:
            return init + got[1].type(got[0]), got[2]
        return self._each_in_its_dtype(xs, init) if _mixed(xs) else (self.total(xs, init), None)

    def _each_in_its_dtype(self, xs, init):
        """Arrays of several dtypes: each value in its array's dtype, summed as the reference sums them."""
        pairs = _parallel.map_arrays(self.fused, xs)
        return sum((x.dtype.type(v) for x, (v, _) in zip(xs, pairs)), init), [u for _, u in pairs]


def _mixed(xs):
    """Are there arrays of more than one dtype?"""
    return len({x.dtype for x in xs}) > 1


def _sum(xs, values, init):
    """``init + Σ values`` (float64 kernel results) rounded once to the arrays' result dtype."""
    return init + np.result_type(*{x.dtype for x in xs}).type(sum(values))


def _norm_unit(x):
    """Two passes: the norm (a global quantity), then ``x / ||x||`` (the gradient at g = 1)."""
    n = float(_linalg._norm_value(x))
    if n == 0:
        return 0.0, np.zeros_like(x)
    return n, _kernels.fused("scale_into", x, 1.0 / n, out=_fused_out(x))[1]


def _norm_unit_total(xs):
    """Σ ||x|| and each ``x / ||x||``: the norms in one kernel loop, then one multiply each; ``None``
    unless every array is of one dtype, float32 or float64, with a nonzero norm."""
    dtypes = {x.dtype for x in xs}
    norms = _kernels.reduce_each("sumsq", xs) if len(dtypes) == 1 else [None]
    if None in norms or 0.0 in norms:
        return None
    roots = [math.sqrt(v) for v in norms]
    units = [x * (1.0 / n) if x.ndim and x.nbytes < _buffers.MIN_BYTES
             else np.multiply(x, x.dtype.type(1.0 / n), out=_fused_out(x)) for x, n in zip(xs, roots)]
    return sum(roots), dtypes.pop(), units


_TABLE = {
    _reductions.sum: Reduction("sum", _reductions.sum, "sum"),
    _linalg.norm: Reduction("norm", _linalg.norm, "sumsq", math.sqrt, _norm_unit, fused_total=_norm_unit_total,
                            vjp=lambda g, x: _linalg._norm_vjp(g, _linalg.norm(x), x)),
    _named.sumsq: Reduction("sumsq", _named.sumsq, "sumsq", fused_kernel="sumsq_double",
                            vjp=lambda g, x: _named._sumsq_vjp(g, None, x)),
    _named.abssum: Reduction("abssum", _named.abssum, "abssum", fused_kernel="abssum_sign",
                             vjp=lambda g, x: _named._abssum_vjp(g, None, x)),
    _named.maxabs: Reduction("maxabs", _named.maxabs, None,
                             vjp=lambda g, x: _named._maxabs_vjp(g, _named.maxabs(x), x)),
}


class _Scaled:
    """``c * r`` for a plain number ``c``: the inner reduction's totals and gradients at g = 1, scaled."""

    __slots__ = ("c", "r", "f", "name")

    def __init__(self, c, r):
        self.c, self.r, self.f, self.name = c, r, _named.scaled(c, r.f), f"{c}*{r.name}"

    def vjp(self, g, x):
        return self.r.vjp(multiply(g, self.c), x)

    def __repr__(self):
        return f"<{self.name}>"

    def total(self, xs, init):
        got = self.r.total(xs, 0.0)
        return None if got is None else init + got * self.c

    def total_and_unit_grads(self, xs, init):
        value, units = self.r.total_and_unit_grads(xs, 0.0)
        if units is not None:
            units = [np.multiply(u, u.dtype.type(self.c), out=u) for u in units]
        return init + value * self.c, units


_BY_ID = {id(k): r for k, r in _TABLE.items()}  # by identity, as ``f is k``: the keys live as long as the module
_ON = enabled("reductions")


def lookup(f):
    """The :class:`Reduction` behind ``f``, or ``None`` (always ``None`` under ``AUTODIFF_REFERENCE=1``)."""
    if not _ON:
        return None
    if type(f) is _named.Scaled:
        inner = lookup(f.f)
        plain = isinstance(f.c, (int, float, np.number))  # a traced scale takes the reference path
        return _Scaled(float(f.c), inner) if inner is not None and plain else None
    return _BY_ID.get(id(f))


def known_total(f, xs, init):
    """``init + Σ f(x)`` through the fused path when ``f`` is known and every ``x`` an array; else ``None``.

    Plain arrays run the kernels with nothing recorded; traced ones record one ``known_total`` entry.
    """
    r = lookup(f)
    kinds = {type(x) for x in xs} if r is not None else None
    if r is None or not kinds <= _ARRAY_OR_TRACED:
        return None
    if Traced in kinds:
        return _record_known(r, init, xs)
    got = r.total(xs, init)
    return got if got is not None else sum(map(f, xs), init)


_ARRAY_OR_TRACED = {np.ndarray, Traced}


def _record_known(r, init, xs):
    """The ``known_total`` entry, recorded inline when every ``x`` is a float32/float64 array traced on one
    reverse tape (the common ``grad(lambda m: total(sumsq, m))``); anything else goes through the primitive.
    The entry and its residuals are exactly those ``_primitive._record`` would write."""
    tape, values, parents = getattr(xs[0], "tape", None), [], []  # a plain first array: the primitive
    if type(tape) is not Tape or not tape.active or type(init) not in (float, int):
        return _known_total(r, init, *xs)
    for x in xs:
        value = x.value if type(x) is Traced and x.tape is tape else None
        if type(value) is not np.ndarray or value.dtype not in _kernels.FAST_DTYPES:
            return _known_total(r, init, *xs)
        values.append(value)
        parents.append(x.index)
    value, units = r.total_and_unit_grads(values, init)
    index, entries = len(tape.entries), tape.entries
    tape.residuals[index] = None if units is None else _Once(units)
    entries.append((_known_total, parents, list(range(2, len(xs) + 2)), value, [r, init, *values], {}))
    return Traced(value, tape, index, tape.level)


# The fused entry: its forward hands the gradients at g = 1 to its pullback; otherwise the reductions' rules.


def _value(r, init, *xs):
    return sum(map(r.f, xs), init)


def _forward(r, init, *xs):
    if not _kernels.all_fast(xs):  # traced at a lower level (which records one entry of its own), or not floats
        return _known_total(r, init, *xs), None
    value, units = r.total_and_unit_grads(list(xs), init)
    return value, (None if units is None else _Once(units))


class _Once:
    """Gradients at g = 1, handed to the first pullback only: it may scale them in place and give them away."""

    __slots__ = ("units",)

    def __init__(self, units):
        self.units = units

    def take(self):
        units, self.units = self.units, None
        return units


def _backward(g, once, ans, r, init, *xs):
    units = once.take() if once is not None else None
    if units is None:  # the reductions' own differentiable rules
        return [None, g, *(Thunk(lambda x=x: _vjp(r, g, x)) for x in xs)]
    if type(g) is Traced:
        return [None, g, *(multiply(cast(g, u.dtype), u) for u in units)]
    if g == 1:
        return [None, g, *units]
    return [None, g, *_parallel.map_arrays(lambda u: np.multiply(u, u.dtype.type(g), out=u), units)]


def _vjp(r, g, x):
    dtype = _complex.real_dtype(value_of(x))
    return r.vjp(g if np.result_type(value_of(g)) == dtype else cast(g, dtype), x)


def _jvp(tangents, ans, r, init, *xs):
    """Σ of each reduction pushed forward along its array's tangent (its own JVP rule: Re Σ c·t).

    ``autodiff.trace`` shows this as the one row of ``total``, not the pushes inside it.
    """
    tracer, _state.tracer = _state.__dict__.get("tracer"), None
    try:
        out = tangents[1]
        for x, t in zip(xs, tangents[2:]):
            if type(t) is not ZeroTangent:
                out = add_tangents(out, jvp_via_ad(r.f, (x,), (t,))[1])
        return out
    finally:
        _state.tracer = tracer


_known_total = primitive(_value, "total")
defvjp_fwd_bwd(_known_total, _forward, _backward)
defjvp_joint(_known_total, _jvp)
defbatch(_known_total, batch_through(_value))  # under vmap: each example's sum, by the reductions' own batching rules


def sumsq64(x):
    """The ``sumsq64`` slot: Σ|x|² accumulated in float64, on the compiled kernel for a float32/float64 array.

    maxabs has no kernel: a loop that must stop at a NaN does not vectorise, and took 4.0 ms for 4M float32
    values where ``np.abs(x).max()`` takes 1.7 (``total(maxabs, ·)`` over ResNet-18's parameters: 12.0 ms
    against 3.0)."""
    if type(x) is np.ndarray and x.dtype in _kernels.FAST_DTYPES:
        return float(_kernels.reduce("sumsq", x))
    return _reductions._sumsq64(x)


def inverse_norm(n):
    """The ``inverse_norm`` slot: ``1 / n``, 0 where ``n`` is 0.  One nonzero norm (every pullback of a norm over a
    whole array) takes the ``reciprocal`` alone: the reference's ``where`` cost several times it (2.8 against
    0.24 µs on a float64 scalar; AMD EPYC, Zen 3, 2026-12-07).

    >>> float(inverse_norm(np.float64(4.0))), float(inverse_norm(np.float64(0.0)))
    (0.25, 0.0)
    """
    if np.ndim(n) == 0 and n != 0:
        return np.reciprocal(n)
    return _kinks._one_over(n)


def abssum64(x):
    """The ``abssum64`` slot: Σ|x| accumulated in float64, on the compiled kernel for a float32/float64 array."""
    if type(x) is np.ndarray and x.dtype in _kernels.FAST_DTYPES:
        return float(_kernels.reduce("abssum", x))
    return _reductions._abssum64(x)
