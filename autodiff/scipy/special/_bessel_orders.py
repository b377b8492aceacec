"""Bessel functions of integer and real order: ``j0``, ``j1``, ``jn``, ``y0``, ``y1``, ``yn``, ``iv``, ``ive``.

Differentiable in ``x``; the order is data.  The rules are the recurrences (DLMF 10.6.1, 10.29.1):
``C_v' = (C_{v-1} - C_{v+1}) / 2`` for ``J`` and ``Y`` (so ``j0' = -j1``), ``I_v' = (I_{v-1} + I_{v+1}) / 2``,
and the scaled ``ive(v, x) = e^-|x| iv(v, x)`` adds ``-sign(x) ive(v, x)``.  Each rule calls the family
itself, so every order of derivative works.
"""

import scipy.special as sc

from ...numpy import add, multiply, negative, sign, subtract
from .._ufuncs import defpartials, ufunc_primitive
from ._gamma import no_shape_derivative

j0 = ufunc_primitive(sc.j0, "j0")
j1 = ufunc_primitive(sc.j1, "j1")
jn = ufunc_primitive(sc.jv, "jn")  # scipy's jn is jv
y0 = ufunc_primitive(sc.y0, "y0")
y1 = ufunc_primitive(sc.y1, "y1")
yn = ufunc_primitive(sc.yn, "yn")
iv = ufunc_primitive(sc.iv, "iv")
ive = ufunc_primitive(sc.ive, "ive")


def _half_difference(fun):
    return lambda ans, n, x: multiply(subtract(fun(n - 1, x), fun(n + 1, x)), 0.5)


defpartials(j0, lambda ans, x: negative(j1(x)))
defpartials(j1, lambda ans, x: _half_difference(jn)(ans, 1, x))
defpartials(jn, no_shape_derivative("jn", "n"), _half_difference(jn))
defpartials(y0, lambda ans, x: negative(y1(x)))
defpartials(y1, lambda ans, x: _half_difference(yn)(ans, 1, x))
defpartials(yn, no_shape_derivative("yn", "n"), _half_difference(yn))
defpartials(iv, no_shape_derivative("iv", "v"), lambda ans, v, x: multiply(add(iv(v - 1, x), iv(v + 1, x)), 0.5))
defpartials(ive, no_shape_derivative("ive", "v"),
            lambda ans, v, x: subtract(multiply(add(ive(v - 1, x), ive(v + 1, x)), 0.5), multiply(sign(x), ans)))

j0.__doc__ = """The Bessel function of the first kind of order 0; its derivative is ``-j1``.

>>> import autodiff
>>> float(autodiff.grad(j0)(1.0)) == -float(j1(1.0))
True
"""
j1.__doc__ = """The Bessel function of the first kind of order 1; its derivative is ``(j0 - jn(2, .)) / 2``.

>>> import autodiff
>>> float(autodiff.grad(j1)(0.0))
0.5
"""
jn.__doc__ = """``jn(n, x)``, the Bessel function of the first kind of order ``n`` (scipy's ``jv``), differentiable
in ``x``.

>>> import autodiff
>>> bool(abs(autodiff.grad(jn, argnums=1)(2, 1.0) - (jn(1, 1.0) - jn(3, 1.0)) / 2) < 1e-15)
True
"""
y0.__doc__ = """The Bessel function of the second kind of order 0; its derivative is ``-y1``.

>>> import autodiff
>>> float(autodiff.grad(y0)(1.0)) == -float(y1(1.0))
True
"""
y1.__doc__ = """The Bessel function of the second kind of order 1; its derivative is ``(y0 - yn(2, .)) / 2``.

>>> import autodiff
>>> bool(abs(autodiff.grad(y1)(1.0) - (y0(1.0) - yn(2, 1.0)) / 2) < 1e-15)
True
"""
yn.__doc__ = """``yn(n, x)``, the Bessel function of the second kind of integer order ``n``, differentiable in ``x``.

>>> import autodiff
>>> bool(abs(autodiff.grad(yn, argnums=1)(2, 1.0) - (yn(1, 1.0) - yn(3, 1.0)) / 2) < 1e-14)
True
"""
iv.__doc__ = """The modified Bessel function of the first kind of real order ``v``, differentiable in ``x``.

>>> import autodiff
>>> bool(abs(autodiff.grad(iv, argnums=1)(0.0, 1.0) - iv(1.0, 1.0)) < 1e-15)  # i0' = i1
True
"""
ive.__doc__ = """``exp(-|x|) iv(v, x)``, which does not overflow for large ``|x|``; differentiable in ``x``.

>>> import autodiff
>>> bool(abs(autodiff.grad(ive, argnums=1)(0.0, 1.0) - (ive(1.0, 1.0) - ive(0.0, 1.0))) < 1e-15)
True
"""

__all__ = ["j0", "j1", "jn", "y0", "y1", "yn", "iv", "ive"]
