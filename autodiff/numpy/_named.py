"""Named model-wide reductions: sumsq, abssum, maxabs, ``scaled``, and which reductions are known.

Each reduction is one primitive with one pullback and one pushforward beside it, both written in
differentiable ops, so a call on plain arrays runs plain numpy and a traced call nests to any order.
Values accumulate in float64 and come back in the input's (real) dtype.  ``traversal.total`` treats
the known reductions (these, ``sum`` and ``linalg.norm``, and ``scaled(c, known)``) as functions of one
array: with ``grads`` it applies them to each gradient alone.  Their fused, threaded model-wide
forms are accelerations (:mod:`autodiff._accel.reductions`).

>>> import numpy as np
>>> float(sumsq(np.array([3.0, 4.0]))), float(abssum(np.array([3.0, -4.0]))), float(maxabs(np.array([3.0, -4.0])))
(25.0, 7.0, 4.0)
"""

import numpy as np

from .._hooks import hooks
from ..extend import Traced, defjvp, defvjp, primitive, value_of
from . import _reductions
from . import linalg as _linalg
from ._binary import maximum
from ._broadcast import cast, dtype_of
from ._complex import conj, real, real_dtype
from ._elementwise import absolute, divide, multiply, sign, where
from ._kinks import inverse_norm
from ._nondiff import NONDIFF


def _conj(x):
    """``conj(x)`` for complex ``x``: |z| pulls back through ``conj(z)/|z|`` (JAX's convention, docs/complex.md)."""
    return conj(x) if dtype_of(x).kind == "c" else x


def _modulus_slope(x):
    """``d|x|`` as a cotangent: ``sign(x)`` for real ``x``, ``conj(z) / |z|`` for complex ``z``, 0 at 0.

    A complex ``|z|`` is a Euclidean norm of ``(re, im)``, so its higher derivatives at 0 are NaN, as
    ``abs``'s and ``hypot``'s (:mod:`._kinks`); a real ``|x|`` is piecewise linear, with second derivative 0.
    """
    if dtype_of(x).kind != "c":
        return sign(x)
    return multiply(conj(x), inverse_norm(absolute(x)))


def _pushed(unit_cotangent, t):
    """``Re Σ c t`` for the cotangent ``c`` of ``x`` at ``g = 1``: a real reduction's JVP, its pullback transposed."""
    moved = multiply(unit_cotangent, t)
    return _reductions.sum(real(moved) if dtype_of(moved).kind == "c" else moved)


def _sumsq(x):
    return real_dtype(x).type(hooks.sumsq64(x))


def _sumsq_vjp(g, ans, x):
    return multiply(g, multiply(2.0, _conj(x)))


sumsq = primitive(_sumsq, "sumsq")
defvjp(sumsq, _sumsq_vjp)
defjvp(sumsq, lambda t, ans, x: multiply(2.0, _pushed(_conj(x), t)))


def _abssum(x):
    return real_dtype(x).type(hooks.abssum64(x))


def _abssum_vjp(g, ans, x):
    return multiply(g, _modulus_slope(x))


abssum = primitive(_abssum, "abssum")
defvjp(abssum, _abssum_vjp)
defjvp(abssum, lambda t, ans, x: _pushed(_modulus_slope(x), t))


def _maxabs(x):
    m = np.abs(np.asarray(x))  # the maximum is one of the values: exact in x's precision, no float64 copy needed
    return real_dtype(x).type(m.max() if m.size else 0.0)


def _ties(ans, x):
    """``1/k`` at each of the ``k`` elements at the maximum, 0 elsewhere: every tie shares the gradient.

    A constant (piecewise constant in ``x``), built from the values without their derivatives by ops that
    count per example under ``vmap``.
    """
    hit = cast(NONDIFF["equal"](absolute(value_of(x)), value_of(ans)), real_dtype(dtype_of(x)))
    return divide(hit, maximum(_reductions.sum(hit), 1.0))


def _maxabs_vjp(g, ans, x):
    ties = _ties(ans, x)  # where, not only the product: a NaN in g stays off the elements not at the maximum
    return where(ties > 0, multiply(multiply(g, _modulus_slope(x)), ties), 0.0)


maxabs = primitive(_maxabs, "maxabs")
defvjp(maxabs, _maxabs_vjp)
defjvp(maxabs, lambda t, ans, x: _pushed(_maxabs_vjp(1.0, ans, x), t))


class Scaled:
    """``c * f(x)`` for a known reduction ``f`` and a number ``c``, recognised by ``traversal.total``.

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
    """``c * f`` as a function that ``traversal.total`` knows when ``f`` is a known reduction."""
    return Scaled(c, f)


KNOWN = (_reductions.sum, _linalg.norm, sumsq, abssum, maxabs)


def is_known(f):
    """True for a known reduction of one array, or ``scaled(c, known)``.

    >>> is_known(sumsq), is_known(scaled(2.0, abssum)), is_known(len)
    (True, True, False)
    """
    if type(f) is Scaled:
        return is_known(f.f) and (type(f.c) is Traced or isinstance(f.c, (int, float, np.number)))
    return any(f is k for k in KNOWN)
