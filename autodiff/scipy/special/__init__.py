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
from ._beta import betainc, betaln, stdtr
from ._erf import erf, erfc, erfinv, log_ndtr, ndtr, ndtri
from ._gamma import digamma, gammainc, gammaincc, gammaln, polygamma, psi
from ._logistic import entr, expit, logit, xlog1py, xlogy
from ._logsumexp import logsumexp

__all__ = [
    "gammaln", "digamma", "psi", "polygamma", "betaln", "betainc", "stdtr", "gammainc", "gammaincc",
    "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr",
    "expit", "logit", "xlogy", "xlog1py", "entr", "logsumexp",
    "i0", "i1", "i0e", "i1e",
]

_interop.register_routes({name: globals()[name] for name in __all__}, _scipy_special)
