"""Counting families: ``poisson``, ``bernoulli``, ``binom`` (``logpmf``, ``pmf``, ``cdf``).

The counts ``k`` (and ``n``) are data, not differentiated; gradients flow in ``mu`` and ``p``.  A ``k``
that is not a non-negative integer in the support has ``logpmf = -inf`` (gradient 0), as in scipy.  An
invalid parameter (``mu < 0``, ``p`` outside ``[0, 1]``, ``n`` not a non-negative integer) gives NaN.
"""

import numpy as np

from ...numpy import exp, log, negative, subtract
from ...numpy._broadcast import dtype_of
from .._doctests import doctests_of
from ..special import betainc, gammaincc, gammaln, xlog1py, xlogy
from ._family import Family
from ._sampling import sampler
from ._support import COUNT, NONNEGATIVE, PROBABILITY, plain, restrict


def _counts(k, like, top=None):
    """``(inside, k)``: ``k`` as plain numbers in ``like``'s float dtype, and where it is a valid count."""
    k = np.asarray(plain(k))
    dtype = dtype_of(like) if dtype_of(like).kind == "f" else np.dtype(np.float64)
    inside = (k >= 0) & (np.floor(k) == k) & (True if top is None else k <= plain(top))
    return inside, np.where(inside, k, 0).astype(dtype)


def _poisson_logpmf(k, mu, loc=0):
    inside, k = _counts(np.subtract(plain(k), loc), mu)
    return restrict(inside, subtract(subtract(xlogy(k, mu), mu), gammaln(k + 1.0)))


def _poisson_cdf(k, mu, loc=0):
    k = np.floor(np.subtract(plain(k), loc))
    _, kk = _counts(np.maximum(k, 0), mu)
    return restrict(k >= 0, gammaincc(kk + 1.0, mu), 0.0)


poisson = Family(
    "poisson",
    logpmf=_poisson_logpmf,
    pmf=lambda k, mu, loc=0: exp(_poisson_logpmf(k, mu, loc)),
    cdf=_poisson_cdf,
    params={"mu": NONNEGATIVE},
    rvs=sampler("poisson"),
)


def _bernoulli_logpmf(k, p, loc=0):
    inside, k = _counts(np.subtract(plain(k), loc), p, top=1)
    return restrict(inside, xlogy(k, p) + xlog1py(1.0 - k, negative(p)))


bernoulli = Family(
    "bernoulli",
    logpmf=_bernoulli_logpmf,
    pmf=lambda k, p, loc=0: exp(_bernoulli_logpmf(k, p, loc)),
    params={"p": PROBABILITY},
    rvs=sampler("bernoulli"),
)


def _log_choose(n, k):
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _binom_logpmf(k, n, p, loc=0):
    inside, k = _counts(np.subtract(plain(k), loc), p, top=n)
    n = np.asarray(plain(n)).astype(k.dtype)
    return restrict(inside, _log_choose(n, k) + xlogy(k, p) + xlog1py(n - k, negative(p)))


def _binom_cdf(k, n, p, loc=0):
    """``I_{1-p}(n - k, k + 1)`` for ``0 <= k < n``; 0 below, 1 from ``n`` on."""
    k = np.floor(np.subtract(plain(k), loc))
    n = np.asarray(plain(n))
    inside = (k >= 0) & (k < n)
    _, kk = _counts(np.clip(k, 0, np.maximum(n - 1, 0)), p)
    nn = n.astype(kk.dtype)
    return restrict(inside, betainc(nn - kk, kk + 1.0, subtract(1.0, p)), np.where(k < 0, 0.0, 1.0))


binom = Family(
    "binom",
    logpmf=_binom_logpmf,
    pmf=lambda k, n, p, loc=0: exp(_binom_logpmf(k, n, p, loc)),
    cdf=_binom_cdf,
    logcdf=lambda k, n, p, loc=0: log(_binom_cdf(k, n, p, loc)),
    params={"n": COUNT, "p": PROBABILITY},
    rvs=sampler("binom"),
)

poisson.__doc__ = """The Poisson distribution: ``logpmf``, ``pmf``, ``cdf``; counts are data, ``mu`` is differentiated.

>>> import autodiff
>>> float(poisson.pmf(0, 1.0))  # e^-1
0.3678794412
>>> float(autodiff.grad(lambda mu: poisson.logpmf(2, mu))(3.0))  # k/mu - 1
-0.3333333333
"""

bernoulli.__doc__ = """The Bernoulli distribution: ``logpmf``, ``pmf``, differentiable in ``p``.

>>> import autodiff
>>> float(bernoulli.logpmf(1, 0.25)), float(autodiff.grad(lambda p: bernoulli.logpmf(1, p))(0.25))  # 1/p
(-1.3862943611, 4.0)
"""

binom.__doc__ = """The binomial distribution: ``logpmf``, ``pmf``, ``cdf``, ``logcdf``, differentiable in ``p``.

>>> import autodiff
>>> float(binom.pmf(1, 2, 0.5)), float(binom.cdf(1, 2, 0.5))
(0.5, 0.75)
>>> float(autodiff.grad(lambda p: binom.logpmf(1, 2, p))(0.5))  # k/p - (n-k)/(1-p)
0.0
"""

__all__ = ["poisson", "bernoulli", "binom"]
__test__ = doctests_of(globals(), __all__)
