"""``autodiff.scipy.stats``: log-densities and distribution functions, differentiable in every
continuous argument (``x``, ``loc``, ``scale``, ``df``, ``a``, ``b``, ``mu``, ``p``, ``mean``, ``cov``).

Each function is a composition of ``autodiff.numpy`` and ``autodiff.scipy.special`` ops, named and
called as in ``scipy.stats`` (``norm.logpdf(x, loc, scale)``).

One rule at the edges, scipy's (docs/scipy.md): **an invalid parameter gives NaN** in every method (a scale
that is not positive, ``p`` outside ``[0, 1]``, ``n`` not a non-negative integer, ...), and **a point off the
support gives the edge's value** (``-inf`` log-density, 0 density, cdf 0 or 1).  Both are double ``where``s:
the valid entries' values and gradients are those they have alone, never NaN.  Every family also has
``rvs``, scipy's sampler on plain values (no gradient).

>>> float(norm.logpdf(0.0, 0.0, -1.0))
nan

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
