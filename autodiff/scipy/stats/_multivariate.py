"""Multivariate families: ``multivariate_normal``, ``multivariate_t`` (through a Cholesky factor), ``dirichlet``.

``multivariate_normal(..., allow_singular=True)`` works through an eigendecomposition instead, as scipy's does.

A covariance (or shape matrix) that is singular to working precision is refused with a clear error
before any factorisation, by scipy's own test (eigenvalues below ``1e6 eps`` (float64) or ``1e3 eps``
(float32) times the largest), so a nearly singular matrix never turns into a NaN log-density.
"""

import math

import numpy as np

from ...extend import plain_value
from ...numpy import (
    add,
    diag,
    diagonal,
    divide,
    exp,
    linalg,
    log,
    log1p,
    matmul,
    multiply,
    reshape,
    square,
    subtract,
    sum,
    where,
)
from ...numpy._broadcast import dtype_of, shape_of
from .._doctests import doctests_of
from ..linalg import solve_triangular
from ..special import gammaln, xlogy
from ._family import Family
from ._sampling import sampler
from ._support import POSITIVE, Parameter, plain, restrict, safe

_LOG_2PI, _LOG_PI = math.log(2.0 * math.pi), math.log(math.pi)


def _check_positive_definite(name, cov):
    c = np.asarray(plain_value(cov), dtype=np.float64)  # under vmap: every example's matrix at once
    factor = 1e3 if dtype_of(cov) == np.float32 else 1e6
    w = np.linalg.eigvalsh(c).reshape(-1, c.shape[-1])  # one row per matrix, each judged on its own scale
    tols = factor * np.finfo(dtype_of(cov)).eps * np.max(np.abs(w), axis=1)
    bad = np.flatnonzero(w.min(axis=1) <= tols)
    if bad.size:
        w, tol = w[bad[0]], tols[bad[0]]
        what = "not positive semi-definite" if w.min() < -tol else "singular (to working precision)"
        raise ValueError(
            f"autodiff.scipy.stats.{name}: the covariance matrix is {what}: its eigenvalues range over "
            f"[{w.min():.3g}, {w.max():.3g}], and values at or below {tol:.3g} count as 0. Add a small multiple of "
            "the identity (cov + 1e-6 * np.eye(d)) or reduce the dimension"
            + ("; or pass allow_singular=True for the density on its support" if name == "multivariate_normal" else "")
        )


def _as_matrix(cov, dim):
    """scipy's forms: a scalar variance, a vector of variances, or a full matrix."""
    ndim = len(shape_of(cov))
    if ndim == 0:
        return multiply(cov, np.eye(dim, dtype=dtype_of(cov)))
    return diag(cov) if ndim == 1 else cov


def _points(x, dim):
    """``x`` as rows of length ``dim`` (scipy's reading of 0-d and 1-d input) and the output shape."""
    shape = shape_of(x)
    if dim == 1 and (len(shape) == 0 or shape[-1] != 1):
        return reshape(x, (-1, 1)), shape
    return reshape(x, (-1, dim)), shape[:-1]


def _mahalanobis_and_logdet(name, x, mean, cov, dim):
    """Squared Mahalanobis distances of the rows of ``x`` and ``log det cov``, through its Cholesky factor."""
    cov = _as_matrix(cov, dim)
    _check_positive_definite(name, cov)
    factor = linalg.cholesky(cov)
    rows, out_shape = _points(x, dim)
    centred = subtract(rows, mean) if mean is not None else rows
    z = solve_triangular(factor, centred.T, lower=True)
    maha = reshape(sum(square(z), axis=0), out_shape)
    return maha, multiply(sum(log(diagonal(factor))), 2.0)


def _dim(mean, cov):
    if mean is not None and len(shape_of(mean)) > 0:
        return shape_of(mean)[-1]
    return shape_of(cov)[-1] if len(shape_of(cov)) > 0 else 1


def _singular_logpdf(x, mean, cov, dim):
    """scipy's ``allow_singular=True``: the density on the support ``mean + range(cov)``, through an
    eigendecomposition, with scipy's cut for a zero eigenvalue (``1e6 eps`` times the largest, ``1e3 eps``
    in float32) and its test for a point off the support (``-inf`` there).  Differentiable in ``x`` and ``mean``
    everywhere, in ``cov`` where its eigenvalues are distinct."""
    s, u = linalg.eigh(_as_matrix(cov, dim))
    plain_s = plain(s)
    eps = (1e3 if dtype_of(cov) == np.float32 else 1e6) * np.finfo(dtype_of(cov)).eps
    eps = eps * np.max(np.abs(plain_s), axis=-1, keepdims=True)
    keep = plain_s > eps
    kept = safe(keep, s, 1.0)
    rows, out_shape = _points(x, dim)
    centred = subtract(rows, mean) if mean is not None else rows
    projected = matmul(centred, u)
    maha = sum(where(keep, divide(square(projected), kept), 0.0), axis=-1)
    log_pdet = sum(where(keep, log(kept), 0.0), axis=-1)
    rank = np.sum(keep, axis=-1)
    residual = np.sqrt(np.sum(np.where(keep, 0.0, plain(projected)) ** 2, axis=-1))
    logp = multiply(add(add(maha, log_pdet), rank * _LOG_2PI), -0.5)
    return reshape(restrict(residual < 1e3 * eps[..., 0], logp), out_shape)


def _mvn_logpdf(x, mean=None, cov=1.0, allow_singular=False):
    dim = _dim(mean, cov)
    if allow_singular:
        return _singular_logpdf(x, mean, cov, dim)
    maha, logdet = _mahalanobis_and_logdet("multivariate_normal", x, mean, cov, dim)
    return multiply(add(add(maha, logdet), dim * _LOG_2PI), -0.5)


def _mvn_entropy(mean=None, cov=1.0):
    """``(log det cov + d (1 + log 2 pi)) / 2``, through a Cholesky factor; ``mean`` does not enter."""
    dim = _dim(mean, cov)
    cov = _as_matrix(cov, dim)
    _check_positive_definite("multivariate_normal", cov)
    logdet = multiply(sum(log(diagonal(linalg.cholesky(cov)))), 2.0)
    return multiply(add(logdet, dim * (1.0 + _LOG_2PI)), 0.5)


multivariate_normal = Family(
    "multivariate_normal",
    logpdf=_mvn_logpdf,
    entropy=_mvn_entropy,
    pdf=lambda x, mean=None, cov=1.0, allow_singular=False: exp(_mvn_logpdf(x, mean, cov, allow_singular)),
    rvs=sampler("multivariate_normal"),
)


def _mvt_logpdf(x, loc=None, shape=1.0, df=1.0):
    dim = _dim(loc, shape)
    maha, logdet = _mahalanobis_and_logdet("multivariate_t", x, loc, shape, dim)
    half = multiply(add(df, float(dim)), 0.5)
    norm_const = subtract(gammaln(half), gammaln(multiply(df, 0.5)))
    norm_const = subtract(norm_const, multiply(add(log(df), _LOG_PI), 0.5 * dim))
    return subtract(subtract(norm_const, multiply(logdet, 0.5)), multiply(half, log1p(maha / df)))


multivariate_t = Family(
    "multivariate_t",
    logpdf=_mvt_logpdf,
    pdf=lambda x, loc=None, shape=1.0, df=1.0: exp(_mvt_logpdf(x, loc, shape, df)),
    params={"df": POSITIVE},
    rvs=sampler("multivariate_t"),
)


def _on_simplex(x):
    """Where the columns of ``x`` lie on the simplex: entries ``>= 0`` summing to 1 (scipy's tolerance,
    ``1e-9``, widened to the rounding of the sum in float32)."""
    x = plain(x)
    tol = max(1e-9, 8 * np.finfo(dtype_of(x) if dtype_of(x).kind == "f" else np.float64).eps * np.shape(x)[0])
    with np.errstate(invalid="ignore"):
        return np.all(x >= 0, axis=0) & (np.abs(np.sum(x, axis=0) - 1.0) <= tol)


def _dirichlet_logpdf(x, alpha):
    """scipy's layout: the components run along the first axis of ``x`` (``(K,)`` or ``(K, N)``).

    On the simplex's boundary the density is its limit: an ``x_i = 0`` with ``alpha_i = 1`` contributes
    ``xlogy(0, 0) = 0``, not ``-inf`` (with ``alpha_i > 1`` it is ``-inf``, below 1 ``+inf``).  Off the simplex,
    ``-inf``: the columns there are computed on the simplex's centre and dropped.
    """
    a = reshape(alpha, shape_of(alpha) + (1,) * (len(shape_of(x)) - 1))
    inside = _on_simplex(x)
    x = safe(inside, x, 1.0 / shape_of(x)[0])
    log_norm = subtract(sum(gammaln(alpha)), gammaln(sum(alpha)))
    return restrict(inside, subtract(sum(xlogy(subtract(a, 1.0), x), axis=0), log_norm))


dirichlet = Family(
    "dirichlet",
    logpdf=_dirichlet_logpdf,
    pdf=lambda x, alpha: exp(_dirichlet_logpdf(x, alpha)),
    params={"alpha": Parameter(lambda v: v > 0, 1.0, lambda valid: np.all(valid, axis=-1))},
    rvs=sampler("dirichlet"),
)

multivariate_normal.__doc__ = """The multivariate normal: ``logpdf``, ``pdf``, ``entropy``, through a Cholesky factor of
``cov`` (a scalar, a vector of variances or a matrix); differentiable in ``x``, ``mean`` and ``cov``.

>>> import numpy as np
>>> import autodiff
>>> float(multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2)))  # -log 2 pi
-1.8378770664
>>> autodiff.grad(lambda x: multivariate_normal.logpdf(x, np.zeros(2), 2 * np.eye(2)))(np.ones(2))  # -cov^-1 x
array([-0.5, -0.5])
"""

multivariate_t.__doc__ = """The multivariate t: ``logpdf``, ``pdf``; differentiable in ``x``, ``loc``, ``shape``
and ``df``.

>>> import numpy as np
>>> import autodiff
>>> float(multivariate_t.logpdf(np.zeros(2), np.zeros(2), np.eye(2), 3.0))
-1.8378770664
>>> autodiff.grad(lambda x: multivariate_t.logpdf(x, np.zeros(2), np.eye(2), 3.0))(np.ones(2))
array([-1., -1.])
"""

dirichlet.__doc__ = """The Dirichlet distribution: ``logpdf``, ``pdf``; components along the first axis of ``x``,
as in scipy.

>>> import numpy as np
>>> import autodiff
>>> float(dirichlet.logpdf(np.array([0.5, 0.5]), np.array([2.0, 2.0])))  # log(6 x1 x2)
0.4054651081
>>> g = autodiff.grad(lambda a: dirichlet.logpdf(np.array([0.25, 0.75]), a))(np.ones(2))
>>> bool(np.allclose(g, np.log([0.25, 0.75]) + 1.0))  # log x_i - digamma(a_i) + digamma(sum a) at a = 1
True
"""

__all__ = ["multivariate_normal", "multivariate_t", "dirichlet"]
__test__ = doctests_of(globals(), __all__)
