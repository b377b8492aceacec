"""The beta family: ``betaln`` and the regularised incomplete beta ``betainc`` (derivative in ``x``)."""

import scipy.special as sc

from ...extend import defvjp
from ...numpy import add, exp, multiply, negative, subtract
from ...numpy._broadcast import unbroadcast
from .._ufuncs import ufunc_primitive
from ._gamma import digamma, no_shape_derivative
from ._logistic import xlog1py, xlogy

betaln = ufunc_primitive(sc.betaln, "betaln")


def _betaln_vjp(which):
    def vjp(g, ans, a, b):
        own = a if which == 0 else b
        return unbroadcast(multiply(g, subtract(digamma(own), digamma(add(a, b)))), own)

    return vjp


defvjp(betaln, _betaln_vjp(0), _betaln_vjp(1))



betainc = ufunc_primitive(sc.betainc, "betainc")


def _betainc_vjp_x(g, ans, a, b, x):
    """The beta density ``x^(a-1) (1-x)^(b-1) / B(a, b)``, in logs."""
    log_density = subtract(add(xlogy(subtract(a, 1.0), x), xlog1py(subtract(b, 1.0), negative(x))), betaln(a, b))
    return unbroadcast(multiply(g, exp(log_density)), x)


defvjp(betainc, no_shape_derivative("betainc"), no_shape_derivative("betainc", "b"), _betainc_vjp_x)

__all__ = ["betaln", "betainc"]
