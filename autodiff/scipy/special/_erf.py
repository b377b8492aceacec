"""The error function and the standard normal: ``erf``, ``erfc``, ``erfinv``, ``erfcinv``, ``ndtr``, ``ndtri``,
``log_ndtr``.

Every rule is a Gaussian density, written with differentiable ops.
"""

import math

import scipy.special as sc

from ...numpy import exp, multiply, negative, square, subtract
from .._ufuncs import defpartials, ufunc_primitive

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2.0
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _gauss(x):
    """``exp(-x^2)``."""
    return exp(negative(square(x)))


def _log_phi(x):
    """The log of the standard normal density."""
    return subtract(multiply(square(x), -0.5), _LOG_SQRT_2PI)


erf = ufunc_primitive(sc.erf, "erf")
erf.__doc__ = """The error function; its derivative is ``2 exp(-x^2) / sqrt(pi)``.

>>> import autodiff
>>> float(erf(0.5))
0.5204998778
>>> float(autodiff.grad(erf)(0.0))  # 2 / sqrt(pi)
1.1283791671
"""
defpartials(erf, lambda ans, x: multiply(_gauss(x), _TWO_OVER_SQRT_PI))

erfc = ufunc_primitive(sc.erfc, "erfc")
erfc.__doc__ = """``1 - erf(x)``, accurate where ``erf(x)`` is near 1.

>>> import autodiff
>>> float(erfc(0.5))
0.4795001222
>>> float(autodiff.grad(erfc)(0.0))
-1.1283791671
"""
defpartials(erfc, lambda ans, x: multiply(_gauss(x), -_TWO_OVER_SQRT_PI))

erfinv = ufunc_primitive(sc.erfinv, "erfinv")
erfinv.__doc__ = """The inverse of ``erf`` on ``(-1, 1)``; its derivative is ``sqrt(pi)/2 exp(erfinv(x)^2)``.

>>> import autodiff
>>> float(erf(erfinv(0.5)))
0.5
>>> float(autodiff.grad(erfinv)(0.0))  # sqrt(pi) / 2
0.8862269255
"""
defpartials(erfinv, lambda ans, x: multiply(exp(square(ans)), _HALF_SQRT_PI))

erfcinv = ufunc_primitive(sc.erfcinv, "erfcinv")
erfcinv.__doc__ = """The inverse of ``erfc`` on ``(0, 2)``, accurate near 0; its derivative is
``-sqrt(pi)/2 exp(erfcinv(x)^2)``.

>>> import autodiff
>>> float(erfc(erfcinv(0.25)))
0.25
>>> float(autodiff.grad(erfcinv)(1.0))  # -sqrt(pi) / 2
-0.8862269255
"""
defpartials(erfcinv, lambda ans, x: multiply(exp(square(ans)), -_HALF_SQRT_PI))

ndtr = ufunc_primitive(sc.ndtr, "ndtr")
ndtr.__doc__ = """The standard normal distribution function; its derivative is the standard normal density.

>>> import autodiff
>>> float(ndtr(0.0))
0.5
>>> float(autodiff.grad(ndtr)(0.0))  # 1 / sqrt(2 pi)
0.3989422804
"""
defpartials(ndtr, lambda ans, x: exp(_log_phi(x)))

ndtri = ufunc_primitive(sc.ndtri, "ndtri")
ndtri.__doc__ = """The inverse of ``ndtr`` (the standard normal quantile); its derivative is ``1 / phi(ndtri(p))``.

>>> import autodiff
>>> float(ndtri(0.975))
1.9599639845
>>> float(autodiff.grad(ndtri)(0.5))  # sqrt(2 pi)
2.5066282746
"""
defpartials(ndtri, lambda ans, x: exp(negative(_log_phi(ans))))

log_ndtr = ufunc_primitive(sc.log_ndtr, "log_ndtr")
log_ndtr.__doc__ = """``log ndtr(x)``, accurate far in the left tail; finite with a finite derivative at ``x = -40``.

>>> import autodiff
>>> float(log_ndtr(-40.0))
-804.6084420138
>>> float(autodiff.grad(log_ndtr)(-40.0))  # phi(x) / Phi(x), about -x there
40.0249688472
"""
# phi(x) / Phi(x) as one exponent: both underflow far in the left tail (x = -40), their ratio does not
defpartials(log_ndtr, lambda ans, x: exp(subtract(_log_phi(x), ans)))

__all__ = ["erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr"]
