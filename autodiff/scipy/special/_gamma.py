"""The gamma family: ``gammaln``, ``digamma``, ``polygamma``, ``gammainc``, ``gammaincc``.

Each rule is the next function of the family, so every order is differentiable:
``gammaln' = digamma``, ``digamma' = polygamma(1, .)``, ``polygamma(n, .)' = polygamma(n + 1, .)``.
"""

import numpy as np
import scipy.special as sc

from ...extend import defvjp, primitive, value_of
from ...numpy import exp, log, multiply, negative, subtract
from ...numpy._broadcast import dtype_of, unbroadcast
from .._ufuncs import ufunc_primitive


def _float_result(out, x):
    """scipy's result in ``x``'s floating dtype (scipy's polygamma returns float64 for float32)."""
    dtype = dtype_of(x) if dtype_of(x).kind == "f" else np.dtype(np.float64)
    return np.asarray(out, dtype=dtype)[()]


gammaln = ufunc_primitive(sc.gammaln, "gammaln")
defvjp(gammaln, lambda g, ans, x: multiply(g, digamma(x)))

digamma = ufunc_primitive(sc.digamma, "digamma")
psi = digamma
defvjp(digamma, lambda g, ans, x: multiply(g, polygamma(1, x)))


def _polygamma(n, x):
    return _float_result(sc.polygamma(n, x), x)


_polygamma_p = primitive(_polygamma, "polygamma")
defvjp(_polygamma_p, None, lambda g, ans, n, x: unbroadcast(multiply(g, polygamma(n + 1, x)), x))


def polygamma(n, x):
    """The ``n``-th derivative of ``digamma`` (``n`` an integer or integer array, not differentiated).

    >>> import autodiff
    >>> float(autodiff.grad(lambda x: polygamma(1, x))(2.0)) == float(polygamma(2, 2.0))
    True
    """
    n = value_of(n)
    if np.result_type(n).kind not in "iu" and not np.all(np.equal(np.mod(n, 1), 0)):
        raise ValueError(f"autodiff.scipy.special.polygamma: n must be a non-negative integer, got {n!r}")
    return _polygamma_p(np.asarray(n).astype(np.int64)[()], x)


def no_shape_derivative(name, argument="a"):
    def vjp(g, ans, *args):
        raise NotImplementedError(
            f"autodiff.scipy.special.{name}: the derivative in the shape parameter {argument} is not "
            "implemented (it has no closed form in elementary and gamma functions); differentiate in x only, "
            f"and pass {argument} as a constant (autodiff.stop_gradient({argument}))"
        )

    return vjp


def _gammainc_density(g, a, x):
    """``g * x^(a-1) e^-x / Gamma(a)``: the derivative of the regularised lower gamma in ``x``."""
    return unbroadcast(multiply(g, exp(subtract(subtract(multiply(subtract(a, 1.0), log(x)), x), gammaln(a)))), x)


gammainc = ufunc_primitive(sc.gammainc, "gammainc")
defvjp(gammainc, no_shape_derivative("gammainc"), lambda g, ans, a, x: _gammainc_density(g, a, x))

gammaincc = ufunc_primitive(sc.gammaincc, "gammaincc")
defvjp(gammaincc, no_shape_derivative("gammaincc"), lambda g, ans, a, x: negative(_gammainc_density(g, a, x)))

__all__ = ["gammaln", "digamma", "psi", "polygamma", "gammainc", "gammaincc"]
