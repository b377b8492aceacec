"""The beta family: ``beta``, ``betaln``, the regularised incomplete beta ``betainc`` (derivative in ``x``) and the
Student t distribution function ``stdtr`` (derivative in ``t``) that is written with it."""

import math

import scipy.special as sc

from ...numpy import add, divide, exp, log, log1p, multiply, negative, square, subtract
from .._ufuncs import defpartials, ufunc_primitive
from ._gamma import digamma, gammaln, no_shape_derivative
from ._logistic import xlog1py, xlogy

_LOG_PI = math.log(math.pi)

betaln = ufunc_primitive(sc.betaln, "betaln")
betaln.__doc__ = """``log |B(a, b)|``, differentiable in ``a`` and ``b`` (``digamma(a) - digamma(a + b)``).

>>> import numpy as np
>>> import autodiff
>>> bool(np.isclose(betaln(2.0, 3.0), np.log(1 / 12)))
True
>>> bool(np.isclose(autodiff.grad(betaln)(2.0, 3.0), digamma(2.0) - digamma(5.0)))
True
"""
defpartials(
    betaln,
    lambda ans, a, b: subtract(digamma(a), digamma(add(a, b))),
    lambda ans, a, b: subtract(digamma(b), digamma(add(a, b))),
)

beta = ufunc_primitive(sc.beta, "beta")
beta.__doc__ = """The beta function ``B(a, b)``; its partial in ``a`` is ``B(a, b) (digamma(a) - digamma(a + b))``.

>>> import autodiff
>>> float(beta(2.0, 3.0)), float(autodiff.grad(beta)(1.0, 1.0))  # 1/12; and -1 at (1, 1)
(0.0833333333, -1.0)
"""
defpartials(
    beta,
    lambda ans, a, b: multiply(ans, subtract(digamma(a), digamma(add(a, b)))),
    lambda ans, a, b: multiply(ans, subtract(digamma(b), digamma(add(a, b)))),
)

betainc = ufunc_primitive(sc.betainc, "betainc")
betainc.__doc__ = """The regularised incomplete beta ``I_x(a, b)``, differentiable in ``x`` (not ``a``, ``b``).

>>> import autodiff
>>> float(betainc(2.0, 3.0, 0.5))
0.6875
>>> float(autodiff.grad(betainc, argnums=2)(2.0, 3.0, 0.5))  # the Beta(2, 3) density at 0.5: 12 x (1-x)^2
1.5
"""


def _beta_density(a, b, x):
    """``x^(a-1) (1-x)^(b-1) / B(a, b)``, in logs."""
    return exp(subtract(add(xlogy(subtract(a, 1.0), x), xlog1py(subtract(b, 1.0), negative(x))), betaln(a, b)))


defpartials(betainc, no_shape_derivative("betainc"), no_shape_derivative("betainc", "b"),
            lambda ans, a, b, x: _beta_density(a, b, x))

stdtr = ufunc_primitive(sc.stdtr, "stdtr")
stdtr.__doc__ = """The Student t distribution function with ``df`` degrees of freedom at ``t``, differentiable in
``t`` (its derivative is the t density); the derivative in ``df`` is not implemented.

>>> import autodiff
>>> float(stdtr(3.0, 0.0))
0.5
>>> float(autodiff.grad(stdtr, argnums=1)(3.0, 0.0))  # the t(3) density at 0: 2 / (pi sqrt 3)
0.3675525969
"""


def _t_density(df, t):
    """``Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi)) (1 + t^2/df)^(-(df+1)/2)``, in logs: finite at ``t = 0``."""
    half = multiply(add(df, 1.0), 0.5)
    log_norm = subtract(subtract(gammaln(half), gammaln(multiply(df, 0.5))), multiply(add(log(df), _LOG_PI), 0.5))
    return exp(subtract(log_norm, multiply(half, log1p(divide(square(t), df)))))


defpartials(stdtr, no_shape_derivative("stdtr", "df", "t"), lambda ans, df, t: _t_density(df, t))

__all__ = ["beta", "betaln", "betainc", "stdtr"]
