"""``autodiff.scipy.special``: differentiable special functions, named as in ``scipy.special``.

Each is a primitive whose rule is written with differentiable ops, so every order works.
Plain ``scipy.special.f(traced)`` (a ufunc) is routed here by name, as numpy's are.

>>> import autodiff
>>> import autodiff.scipy.special as sp
>>> float(autodiff.grad(sp.gammaln)(3.0)) == float(sp.digamma(3.0))
True
"""

import scipy.special as _scipy_special

from ...numpy import _interop
from ._bessel import i0, i0e, i1, i1e
from ._bessel_orders import iv, ive, j0, j1, jn, y0, y1, yn
from ._beta import beta, betainc, betaln, stdtr
from ._erf import erf, erfc, erfcinv, erfinv, log_ndtr, ndtr, ndtri
from ._gamma import digamma, gamma, gammainc, gammaincc, gammaln, gammasgn, multigammaln, polygamma, psi, rgamma
from ._logistic import entr, expit, logit, xlog1py, xlogy
from ._logsumexp import logsumexp

__all__ = [
    "gammaln", "digamma", "psi", "polygamma", "betaln", "betainc", "stdtr", "gammainc", "gammaincc",
    "gamma", "rgamma", "gammasgn", "multigammaln", "beta",
    "erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr",
    "expit", "logit", "xlogy", "xlog1py", "entr", "logsumexp",
    "i0", "i1", "i0e", "i1e", "j0", "j1", "jn", "y0", "y1", "yn", "iv", "ive",
]

# multigammaln is a Python function in scipy (it converts its argument), not a ufunc: it is not routed
_interop.register_routes({name: globals()[name] for name in __all__ if name != "multigammaln"}, _scipy_special)
