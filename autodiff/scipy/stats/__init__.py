"""``autodiff.scipy.stats``: log-densities and distribution functions, differentiable in every
continuous argument (``x``, ``loc``, ``scale``, ``df``, ``a``, ``b``, ``mu``, ``p``, ``mean``, ``cov``).

Each function is a composition of ``autodiff.numpy`` and ``autodiff.scipy.special`` ops, named and
called as in ``scipy.stats`` (``norm.logpdf(x, loc, scale)``).

>>> import numpy as np
>>> import autodiff
>>> from autodiff.scipy.stats import norm
>>> float(autodiff.grad(norm.logpdf, argnums=2)(1.0, 0.0, 2.0))  # d/dscale
-0.375
"""

from ._discrete import bernoulli, binom, poisson
from ._family import Family
from ._multivariate import dirichlet, multivariate_normal, multivariate_t
from ._positive import beta, chi2, expon, gamma
from ._symmetric import cauchy, laplace, logistic, norm, t

__all__ = ["norm", "t", "cauchy", "laplace", "logistic", "gamma", "chi2", "beta", "expon", "poisson", "bernoulli",
           "binom", "dirichlet", "multivariate_normal", "multivariate_t", "Family"]
