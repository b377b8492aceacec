"""Families on a half-line or an interval: ``gamma``, ``chi2`` (a gamma of shape ``df/2``, scale 2), ``beta``,
``expon``.

Outside the support the log-density is ``-inf`` with gradient 0 (the formula is evaluated on a safe
stand-in there, so no NaN leaks into the gradient); a shape or scale that is not positive gives NaN.
At the support's edge the density is its limit: ``gamma.logpdf(0, 1)`` is ``-log(scale)``, and
``beta.logpdf(0, 1, b)`` is ``log(b)`` (``xlogy(0, 0) = 0``).  ``gamma.cdf`` and ``beta.cdf`` go through
``gammainc``/``betainc``: differentiable in ``x``, ``loc`` and ``scale``, not in the shapes.
"""

import numpy as np

from ...numpy import divide, exp, expm1, log, negative, subtract
from .._doctests import doctests_of
from ..special import betainc, betaln, gammainc, gammaincc, gammaln, xlog1py, xlogy
from ._family import Family
from ._sampling import sampler
from ._support import POSITIVE, plain, restrict, safe


def _z(x, loc, scale):
    return divide(subtract(x, loc), scale)


def _half_line(x, loc, scale):
    """``(inside, z)``: ``z = (x - loc) / scale``, replaced by 1 where it is negative."""
    z = _z(x, loc, scale)
    inside = np.greater_equal(plain(z), 0)
    return inside, safe(inside, z, 1.0)


def _gamma_logpdf(x, a, loc=0.0, scale=1.0):
    inside, z = _half_line(x, loc, scale)
    return restrict(inside, subtract(subtract(subtract(xlogy(subtract(a, 1.0), z), z), gammaln(a)), log(scale)))


def _gamma_cdf(x, a, loc=0.0, scale=1.0):
    inside, z = _half_line(x, loc, scale)
    return restrict(inside, gammainc(a, z), 0.0)


def _gamma_sf(x, a, loc=0.0, scale=1.0):
    inside, z = _half_line(x, loc, scale)
    return restrict(inside, gammaincc(a, z), 1.0)


gamma = Family(
    "gamma",
    logpdf=_gamma_logpdf,
    pdf=lambda x, a, loc=0.0, scale=1.0: exp(_gamma_logpdf(x, a, loc, scale)),
    cdf=_gamma_cdf,
    logcdf=lambda x, a, loc=0.0, scale=1.0: log(_gamma_cdf(x, a, loc, scale)),
    sf=_gamma_sf,
    params={"a": POSITIVE, "scale": POSITIVE},
    rvs=sampler("gamma"),
)


chi2 = Family(
    "chi2",
    logpdf=lambda x, df, loc=0.0, scale=1.0: _gamma_logpdf(x, df * 0.5, loc, scale * 2.0),
    pdf=lambda x, df, loc=0.0, scale=1.0: exp(_gamma_logpdf(x, df * 0.5, loc, scale * 2.0)),
    cdf=lambda x, df, loc=0.0, scale=1.0: _gamma_cdf(x, df * 0.5, loc, scale * 2.0),
    logcdf=lambda x, df, loc=0.0, scale=1.0: log(_gamma_cdf(x, df * 0.5, loc, scale * 2.0)),
    sf=lambda x, df, loc=0.0, scale=1.0: _gamma_sf(x, df * 0.5, loc, scale * 2.0),
    params={"df": POSITIVE, "scale": POSITIVE},
    rvs=sampler("chi2"),
)


def _unit_interval(x, loc, scale):
    z = _z(x, loc, scale)
    inside = (plain(z) >= 0) & (plain(z) <= 1)
    return inside, safe(inside, z, 0.5)


def _beta_logpdf(x, a, b, loc=0.0, scale=1.0):
    inside, z = _unit_interval(x, loc, scale)
    log_kernel = xlogy(subtract(a, 1.0), z) + xlog1py(subtract(b, 1.0), negative(z))
    return restrict(inside, subtract(subtract(log_kernel, betaln(a, b)), log(scale)))


def _beta_cdf(x, a, b, loc=0.0, scale=1.0):
    inside, z = _unit_interval(x, loc, scale)
    below = np.less(plain(_z(x, loc, scale)), 0)
    return restrict(inside, betainc(a, b, z), np.where(below, 0.0, 1.0))


beta = Family(
    "beta",
    logpdf=_beta_logpdf,
    pdf=lambda x, a, b, loc=0.0, scale=1.0: exp(_beta_logpdf(x, a, b, loc, scale)),
    cdf=_beta_cdf,
    logcdf=lambda x, a, b, loc=0.0, scale=1.0: log(_beta_cdf(x, a, b, loc, scale)),
    params={"a": POSITIVE, "b": POSITIVE, "scale": POSITIVE},
    rvs=sampler("beta"),
)


def _expon_logpdf(x, loc=0.0, scale=1.0):
    inside, z = _half_line(x, loc, scale)
    return restrict(inside, subtract(negative(z), log(scale)))


def _expon_cdf(x, loc=0.0, scale=1.0):
    inside, z = _half_line(x, loc, scale)
    return restrict(inside, negative(expm1(negative(z))), 0.0)


def _expon_logsf(x, loc=0.0, scale=1.0):
    inside, z = _half_line(x, loc, scale)
    return restrict(inside, negative(z), 0.0)


expon = Family(
    "expon",
    logpdf=_expon_logpdf,
    pdf=lambda x, loc=0.0, scale=1.0: exp(_expon_logpdf(x, loc, scale)),
    cdf=_expon_cdf,
    logcdf=lambda x, loc=0.0, scale=1.0: log(_expon_cdf(x, loc, scale)),
    logsf=_expon_logsf,
    params={"scale": POSITIVE},
    rvs=sampler("expon"),
)

chi2.__doc__ = """The chi-squared distribution, a gamma of shape ``df / 2`` and scale 2: ``logpdf``, ``pdf``, ``cdf``,
``logcdf``, ``sf`` (the last three not differentiable in ``df``).

>>> import autodiff
>>> float(chi2.logpdf(2.0, 2.0)), float(autodiff.grad(chi2.cdf)(2.0, 2.0))  # log(e^-1 / 2), and the density
(-1.6931471806, 0.1839397206)
"""

gamma.__doc__ = """The gamma distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``sf`` (the last three not
differentiable in the shape ``a``).

>>> import autodiff
>>> float(gamma.logpdf(1.0, 2.0))  # log(x e^-x)
-1.0
>>> float(autodiff.grad(gamma.logpdf, argnums=1)(1.0, 2.0))  # log x - digamma(a)
-0.4227843351
"""

beta.__doc__ = """The beta distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf`` (``cdf`` not differentiable in
``a``, ``b``).

>>> import autodiff
>>> float(beta.logpdf(0.5, 2.0, 2.0)), float(beta.cdf(0.5, 2.0, 2.0))  # log 1.5 at the mode
(0.4054651081, 0.5)
>>> float(autodiff.grad(beta.logpdf)(0.5, 2.0, 2.0))
0.0
"""

expon.__doc__ = """The exponential distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``logsf``.

>>> import autodiff
>>> float(expon.logpdf(2.0, 0.0, 2.0))  # -x/scale - log scale
-1.6931471806
>>> float(autodiff.grad(expon.logpdf, argnums=2)(2.0, 0.0, 2.0))  # x/scale^2 - 1/scale
0.0
"""

__all__ = ["gamma", "chi2", "beta", "expon"]
__test__ = doctests_of(globals(), __all__)
