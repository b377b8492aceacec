"""Location-scale families symmetric about ``loc``: ``norm``, ``t``, ``cauchy``, ``laplace``, ``logistic``.

Each works on ``z = (x - loc) / scale`` and subtracts ``log(scale)``; gradients flow in ``x``, ``loc``,
``scale`` and ``df``.  ``t.cdf`` is ``stdtr``, differentiable in ``x``, ``loc`` and ``scale`` but not ``df``
(which raises, naming stdtr's shape parameter).  A ``scale`` or ``df`` that is not positive gives NaN
(``_support``); ``df = inf`` is the normal, as in scipy.

The tails are computed without overflow or cancellation (issue 36 item 9): ``log(1 + z^2)`` never forms
``z^2`` when ``|z|`` is huge (``cauchy.logpdf(1e200)`` is finite), t's normalising constant at large ``df``
is the asymptotic series of ``log Gamma(x + 1/2) - log Gamma(x)`` rather than the difference of two
nearly equal ``gammaln``, and ``cauchy.cdf`` far left is ``arctan(-1/z) / pi`` rather than ``1/2 - 1/2``.
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
    sqrt,
    square,
    subtract,
    where,
)
from .._doctests import doctests_of
from ..special import expit, gammaln, log_ndtr, ndtr, ndtri, stdtr
from ._family import Family
from ._sampling import sampler
from ._support import POSITIVE, plain, safe

_SCALE = {"scale": POSITIVE}

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
    isf=lambda q, loc=0.0, scale=1.0: subtract(loc, multiply(scale, ndtri(q))),
    params=_SCALE,
    rvs=sampler("norm"),
)


_HUGE = 1e8  # beyond it 1 + a^2 rounds to a^2, and a^2 may overflow


def _log1p_square(a):
    """``log(1 + a^2)``, never forming ``a^2`` for ``|a| > 1e8`` (``2 log|a| + log1p(a^-2)`` there)."""
    big = np.greater(np.abs(plain(a)), _HUGE)
    small, large = safe(np.logical_not(big), a, 0.0), safe(big, a, 2 * _HUGE)
    far = add(multiply(log(absolute(large)), 2.0), log1p(square(divide(1.0, large))))
    return where(big, far, log1p(square(small)))


def _log1p_over(u):
    """``log1p(u) / u`` for ``u >= 0``, 1 at ``u = 0`` (its series below ``1e-4``, exact to rounding)."""
    tiny = np.less(plain(u), 1e-4)
    s, w = safe(tiny, u, 0.0), safe(np.logical_not(tiny), u, 1.0)
    series = add(1.0, multiply(s, add(-0.5, multiply(s, add(1.0 / 3.0, multiply(s, -0.25))))))
    return where(tiny, series, divide(log1p(w), w))


# log Gamma(x + 1/2) - log Gamma(x) - log(x) / 2 ~ sum c_n x^-n (Bernoulli numbers; Abramowitz-Stegun 6.1.40)
_HALF_STEP = ((1, -1 / 8), (3, 1 / 192), (5, -1 / 640), (7, 17 / 14336), (9, -31 / 18432))
_LARGE_DF = 100.0  # the series' first omitted term is below 1e-21 from here on


def _t_norm_const(df):
    """``log Gamma((df+1)/2) - log Gamma(df/2) - log(df pi) / 2``: the series for large ``df`` (``df = inf``
    included), where the two gammaln agree to many digits and their difference would cancel."""
    large = np.greater_equal(plain(df), _LARGE_DF)
    exact_df, series_df = safe(np.logical_not(large), df, 1.0), safe(large, df, _LARGE_DF)
    half = multiply(add(exact_df, 1.0), 0.5)
    exact = subtract(subtract(gammaln(half), gammaln(multiply(exact_df, 0.5))),
                     multiply(add(log(exact_df), _LOG_PI), 0.5))
    return where(large, subtract(_half_step_series(divide(2.0, series_df)), _LOG_SQRT_2PI), exact)


def _half_step_series(inv):
    """``sum c_n inv^n`` over the odd ``n`` of ``_HALF_STEP``, by Horner's rule in ``inv^2``."""
    inv2 = square(inv)
    total = multiply(inv2, _HALF_STEP[-1][1])
    for _, c in reversed(_HALF_STEP[1:-1]):
        total = multiply(add(total, c), inv2)
    return multiply(add(total, _HALF_STEP[0][1]), inv)


def _t_tail(z, df):
    """``(df + 1)/2 log(1 + z^2/df)``; written ``(1 + 1/df) z^2/2 log1p(u)/u`` while ``u = z^2/df`` is moderate,
    so that ``df = inf`` gives the normal's ``z^2/2``."""
    r = divide(z, sqrt(df))
    big = np.greater(np.abs(plain(r)), _HUGE)
    rb, zs = safe(big, r, 2 * _HUGE), safe(np.logical_not(big), z, 0.0)
    far = multiply(multiply(add(df, 1.0), 0.5), _log1p_square(rb))
    u = divide(square(zs), df)
    near = multiply(multiply(add(1.0, divide(1.0, df)), multiply(square(zs), 0.5)), _log1p_over(u))
    return where(big, far, near)


def _t_logpdf(x, df, loc=0.0, scale=1.0):
    return subtract(subtract(_t_norm_const(df), _t_tail(_z(x, loc, scale), df)), log(scale))


def _t_cdf(x, df, loc=0.0, scale=1.0):
    # stdtr's rule is the t density itself: finite at z = 0, where betainc of df / (df + z^2) is not
    return stdtr(df, _z(x, loc, scale))


t = Family(
    "t",
    logpdf=_t_logpdf,
    pdf=lambda x, df, loc=0.0, scale=1.0: exp(_t_logpdf(x, df, loc, scale)),
    cdf=_t_cdf,
    logcdf=lambda x, df, loc=0.0, scale=1.0: log(_t_cdf(x, df, loc, scale)),
    params={"df": POSITIVE, "scale": POSITIVE},
    rvs=sampler("t"),
)


def _cauchy_logpdf(x, loc=0.0, scale=1.0):
    return subtract(negative(add(_log1p_square(_z(x, loc, scale)), _LOG_PI)), log(scale))


def _cauchy_cdf(x, loc=0.0, scale=1.0):
    """``1/2 + arctan(z)/pi``; left of ``-1`` it is ``arctan(-1/z)/pi``, which keeps its digits far left."""
    z = _z(x, loc, scale)
    left = np.less(plain(z), -1.0)
    zl, zr = safe(left, z, -2.0), safe(np.logical_not(left), z, 0.0)
    return where(left, divide(arctan(divide(-1.0, zl)), math.pi), add(0.5, divide(arctan(zr), math.pi)))


def _cauchy_logcdf(x, loc=0.0, scale=1.0):
    """``log cdf``; right of 1 it is ``log1p(-arctan(1/z) / pi)`` (the sf is ``arctan(1/z) / pi`` there), which
    keeps the digits of a cdf near 1."""
    z = _z(x, loc, scale)
    right = np.greater(plain(z), 1.0)
    near_one = log1p(negative(divide(arctan(divide(1.0, safe(right, z, 2.0))), math.pi)))
    return where(right, near_one, log(_cauchy_cdf(x, loc, scale)))


cauchy = Family(
    "cauchy",
    logpdf=_cauchy_logpdf,
    pdf=lambda x, loc=0.0, scale=1.0: exp(_cauchy_logpdf(x, loc, scale)),
    cdf=_cauchy_cdf,
    logcdf=_cauchy_logcdf,
    params=_SCALE,
    rvs=sampler("cauchy"),
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
    params=_SCALE,
    rvs=sampler("laplace"),
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
    params=_SCALE,
    rvs=sampler("logistic"),
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
