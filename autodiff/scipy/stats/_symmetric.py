"""Location-scale families symmetric about ``loc``: ``norm``, ``t``, ``cauchy``, ``laplace``, ``logistic``.

Each works on ``z = (x - loc) / scale`` and subtracts ``log(scale)``; gradients flow in ``x``, ``loc``,
``scale`` and ``df``.  ``t.cdf`` is ``stdtr``, differentiable in ``x``, ``loc`` and ``scale`` but not ``df``
(which raises, naming stdtr's shape parameter).
"""

import math

import numpy as np

from ...numpy import (
    absolute,
    add,
    arctan,
    divide,
    exp,
    log,
    log1p,
    logaddexp,
    multiply,
    negative,
    square,
    subtract,
    where,
)
from .._doctests import doctests_of
from ..special import expit, gammaln, log_ndtr, ndtr, ndtri, stdtr
from ._family import Family
from ._support import plain

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI, _LOG_2 = math.log(math.pi), math.log(2.0)


def _z(x, loc, scale):
    return divide(subtract(x, loc), scale)


def _norm_logpdf(x, loc=0.0, scale=1.0):
    return subtract(subtract(multiply(square(_z(x, loc, scale)), -0.5), _LOG_SQRT_2PI), log(scale))


norm = Family(
    "norm",
    logpdf=_norm_logpdf,
    pdf=lambda x, loc=0.0, scale=1.0: exp(_norm_logpdf(x, loc, scale)),
    cdf=lambda x, loc=0.0, scale=1.0: ndtr(_z(x, loc, scale)),
    logcdf=lambda x, loc=0.0, scale=1.0: log_ndtr(_z(x, loc, scale)),
    sf=lambda x, loc=0.0, scale=1.0: ndtr(negative(_z(x, loc, scale))),
    logsf=lambda x, loc=0.0, scale=1.0: log_ndtr(negative(_z(x, loc, scale))),
    ppf=lambda q, loc=0.0, scale=1.0: add(loc, multiply(scale, ndtri(q))),
)


def _t_logpdf(x, df, loc=0.0, scale=1.0):
    half = multiply(add(df, 1.0), 0.5)
    norm_const = subtract(gammaln(half), gammaln(multiply(df, 0.5)))
    norm_const = subtract(norm_const, multiply(add(log(df), _LOG_PI), 0.5))
    tail = multiply(half, log1p(divide(square(_z(x, loc, scale)), df)))
    return subtract(subtract(norm_const, tail), log(scale))


def _t_cdf(x, df, loc=0.0, scale=1.0):
    # stdtr's rule is the t density itself: finite at z = 0, where betainc of df / (df + z^2) is not
    return stdtr(df, _z(x, loc, scale))


t = Family(
    "t",
    logpdf=_t_logpdf,
    pdf=lambda x, df, loc=0.0, scale=1.0: exp(_t_logpdf(x, df, loc, scale)),
    cdf=_t_cdf,
    logcdf=lambda x, df, loc=0.0, scale=1.0: log(_t_cdf(x, df, loc, scale)),
)


def _cauchy_logpdf(x, loc=0.0, scale=1.0):
    return subtract(negative(add(log1p(square(_z(x, loc, scale))), _LOG_PI)), log(scale))


def _cauchy_cdf(x, loc=0.0, scale=1.0):
    return add(0.5, divide(arctan(_z(x, loc, scale)), math.pi))


cauchy = Family(
    "cauchy",
    logpdf=_cauchy_logpdf,
    pdf=lambda x, loc=0.0, scale=1.0: exp(_cauchy_logpdf(x, loc, scale)),
    cdf=_cauchy_cdf,
    logcdf=lambda x, loc=0.0, scale=1.0: log(_cauchy_cdf(x, loc, scale)),
)


def _laplace_logpdf(x, loc=0.0, scale=1.0):
    return subtract(negative(add(absolute(_z(x, loc, scale)), _LOG_2)), log(scale))


def _laplace_halves(x, loc, scale):
    """``z`` on its own side of 0 (0 on the other), so neither branch's ``exp`` overflows."""
    z = _z(x, loc, scale)
    left = np.less(plain(z), 0)
    return left, where(left, z, 0.0), where(left, 0.0, z)


def _laplace_cdf(x, loc=0.0, scale=1.0):
    left, neg, pos = _laplace_halves(x, loc, scale)
    return where(left, multiply(exp(neg), 0.5), subtract(1.0, multiply(exp(negative(pos)), 0.5)))


def _laplace_logcdf(x, loc=0.0, scale=1.0):
    left, neg, pos = _laplace_halves(x, loc, scale)
    return where(left, subtract(neg, _LOG_2), log1p(multiply(exp(negative(pos)), -0.5)))


laplace = Family(
    "laplace",
    logpdf=_laplace_logpdf,
    pdf=lambda x, loc=0.0, scale=1.0: exp(_laplace_logpdf(x, loc, scale)),
    cdf=_laplace_cdf,
    logcdf=_laplace_logcdf,
)


def _logistic_logpdf(x, loc=0.0, scale=1.0):
    a = absolute(_z(x, loc, scale))  # the density is symmetric; |z| keeps exp from overflowing
    return subtract(negative(add(a, multiply(log1p(exp(negative(a))), 2.0))), log(scale))


logistic = Family(
    "logistic",
    logpdf=_logistic_logpdf,
    pdf=lambda x, loc=0.0, scale=1.0: exp(_logistic_logpdf(x, loc, scale)),
    cdf=lambda x, loc=0.0, scale=1.0: expit(_z(x, loc, scale)),
    logcdf=lambda x, loc=0.0, scale=1.0: negative(logaddexp(0.0, negative(_z(x, loc, scale)))),
)

norm.__doc__ = """The normal distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``sf``, ``logsf``, ``ppf``.

>>> import autodiff
>>> float(norm.logpdf(1.0, 0.0, 2.0))
-1.7370857138
>>> float(autodiff.grad(norm.logpdf, argnums=1)(1.0, 0.0, 2.0))  # d/dloc = (x - loc) / scale^2
0.25
>>> float(autodiff.grad(norm.cdf)(0.0))  # the density at 0
0.3989422804
"""

t.__doc__ = """Student's t: ``logpdf``, ``pdf``, ``cdf``, ``logcdf`` (``cdf`` not differentiable in ``df``).

>>> import autodiff
>>> float(t.logpdf(0.0, 3.0))
-1.0008888496
>>> float(autodiff.grad(t.cdf)(0.0, 3.0)) == float(t.pdf(0.0, 3.0))
True
"""

cauchy.__doc__ = """The Cauchy distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``.

>>> import autodiff
>>> float(cauchy.cdf(1.0)), float(autodiff.grad(cauchy.logpdf)(1.0))  # -2x / (1 + x^2)
(0.75, -1.0)
"""

laplace.__doc__ = """The Laplace distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``.

>>> import autodiff
>>> float(laplace.logpdf(0.0)), float(autodiff.grad(laplace.logpdf, argnums=2)(1.0, 0.0, 1.0))  # |z| - 1
(-0.6931471806, 0.0)
"""

logistic.__doc__ = """The logistic distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``.

>>> import autodiff
>>> float(logistic.logpdf(0.0)), float(autodiff.grad(logistic.cdf)(0.0))  # log 1/4, and the density 1/4
(-1.3862943611, 0.25)
"""

__all__ = ["norm", "t", "cauchy", "laplace", "logistic"]
__test__ = doctests_of(globals(), __all__)
