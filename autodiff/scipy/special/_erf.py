"""The error function and the standard normal: ``erf``, ``erfc``, ``erfinv``, ``ndtr``, ``ndtri``, ``log_ndtr``.

Every rule is a Gaussian density, written with differentiable ops.
"""

import math

import scipy.special as sc

from ...extend import defvjp
from ...numpy import divide, exp, multiply, negative, square, subtract
from .._ufuncs import ufunc_primitive

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2.0
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _gauss(x):
    """``exp(-x^2)``."""
    return exp(negative(square(x)))


erf = ufunc_primitive(sc.erf, "erf")
defvjp(erf, lambda g, ans, x: multiply(g, multiply(_gauss(x), _TWO_OVER_SQRT_PI)))

erfc = ufunc_primitive(sc.erfc, "erfc")
defvjp(erfc, lambda g, ans, x: multiply(g, multiply(_gauss(x), -_TWO_OVER_SQRT_PI)))

erfinv = ufunc_primitive(sc.erfinv, "erfinv")
defvjp(erfinv, lambda g, ans, x: multiply(g, multiply(exp(square(ans)), _HALF_SQRT_PI)))


def _log_phi(x):
    """The log of the standard normal density."""
    return subtract(multiply(square(x), -0.5), _LOG_SQRT_2PI)


ndtr = ufunc_primitive(sc.ndtr, "ndtr")
defvjp(ndtr, lambda g, ans, x: multiply(g, exp(_log_phi(x))))

ndtri = ufunc_primitive(sc.ndtri, "ndtri")
defvjp(ndtri, lambda g, ans, x: divide(g, exp(_log_phi(ans))))

log_ndtr = ufunc_primitive(sc.log_ndtr, "log_ndtr")


def _log_ndtr_vjp(g, ans, x):
    # phi(x) / Phi(x) as one exponent: both underflow far in the left tail (x = -40), their ratio does not
    return multiply(g, exp(subtract(_log_phi(x), log_ndtr(x))))


defvjp(log_ndtr, _log_ndtr_vjp)

__all__ = ["erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr"]
