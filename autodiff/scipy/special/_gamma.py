"""The gamma family: ``gammaln``, ``digamma``, ``polygamma``, ``gammainc``, ``gammaincc``, ``gamma``, ``rgamma``,
``gammasgn``, ``multigammaln``.

Each rule is the next function of the family, so every order is differentiable:
``gammaln' = digamma``, ``digamma' = polygamma(1, .)``, ``polygamma(n, .)' = polygamma(n + 1, .)``.
"""

import numpy as np
import scipy.special as sc

from ...extend import defbatch, primitive, value_of
from ...numpy import exp, log, multiply, negative, subtract
from ...numpy._batch_helpers import elementwise
from ...numpy._broadcast import dtype_of
from .._real import refuse_complex
from .._ufuncs import defpartials, ufunc_primitive


def _float_result(out, x):
    """scipy's result in ``x``'s floating dtype (scipy's polygamma returns float64 for float32)."""
    dtype = dtype_of(x) if dtype_of(x).kind == "f" else np.dtype(np.float64)
    return np.asarray(out, dtype=dtype)[()]


gammaln = ufunc_primitive(sc.gammaln, "gammaln")
gammaln.__doc__ = """``log |Gamma(x)|``; its derivative is ``digamma``.

>>> import autodiff
>>> float(gammaln(4.0))  # log 3!
1.7917594692
>>> float(autodiff.grad(gammaln)(4.0)) == float(digamma(4.0))
True
"""
defpartials(gammaln, lambda ans, x: digamma(x))

digamma = ufunc_primitive(sc.digamma, "digamma")
digamma.__doc__ = """The logarithmic derivative of Gamma, ``psi``; its derivative is ``polygamma(1, x)``.

>>> import autodiff
>>> float(digamma(1.0))  # minus the Euler-Mascheroni constant
-0.5772156649
>>> float(autodiff.grad(digamma)(1.0))  # pi^2 / 6
1.6449340668
"""
psi = digamma
defpartials(digamma, lambda ans, x: polygamma(1, x))


def _polygamma(n, x):
    refuse_complex("autodiff.scipy.special.polygamma", x)
    return _float_result(sc.polygamma(n, x), x)


_polygamma_p = primitive(_polygamma, "polygamma")
defpartials(_polygamma_p, None, lambda ans, n, x: polygamma(n + 1, x))
defbatch(_polygamma_p, elementwise(_polygamma_p))


def polygamma(n, x):
    """The ``n``-th derivative of ``digamma`` (``n`` an integer or integer array, not differentiated).

    >>> import autodiff
    >>> float(autodiff.grad(lambda x: polygamma(1, x))(2.0)) == float(polygamma(2, 2.0))
    True
    """
    n = value_of(n)
    if np.result_type(n).kind not in "iu" and not np.all(np.equal(np.mod(n, 1), 0)):
        raise ValueError(f"autodiff.scipy.special.polygamma: n must be a non-negative integer, got {n!r}")
    return _polygamma_p(np.asarray(n).astype(np.int64)[()], x)


def no_shape_derivative(name, argument="a", variable="x"):
    """A partial derivative that refuses, naming the function, the shape parameter and the fix."""

    def partial(ans, *args):
        raise NotImplementedError(
            f"autodiff.scipy.special.{name}: the derivative in the shape parameter {argument} is not implemented "
            f"(it has no closed form in elementary and gamma functions); differentiate in {variable} only, and pass "
            f"{argument} as a constant (autodiff.stop_gradient({argument}))"
        )

    return partial


def _gamma_density(a, x):
    """``x^(a-1) e^-x / Gamma(a)``: the derivative of the regularised lower gamma in ``x``."""
    return exp(subtract(subtract(multiply(subtract(a, 1.0), log(x)), x), gammaln(a)))


gammainc = ufunc_primitive(sc.gammainc, "gammainc")
gammainc.__doc__ = """The regularised lower incomplete gamma ``P(a, x)``, differentiable in ``x`` (not ``a``).

>>> import numpy as np
>>> import autodiff
>>> float(gammainc(2.0, 1.0))  # 1 - 2/e
0.2642411177
>>> bool(np.isclose(autodiff.grad(gammainc, argnums=1)(2.0, 1.0), np.exp(-1.0)))  # x^(a-1) e^-x / Gamma(a)
True
"""
defpartials(gammainc, no_shape_derivative("gammainc"), lambda ans, a, x: _gamma_density(a, x))

gammaincc = ufunc_primitive(sc.gammaincc, "gammaincc")
gammaincc.__doc__ = """The regularised upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``, differentiable in ``x``.

>>> import autodiff
>>> float(gammaincc(2.0, 1.0))  # 2/e
0.7357588823
>>> float(autodiff.grad(gammaincc, argnums=1)(2.0, 1.0))  # -1/e
-0.3678794412
"""
defpartials(gammaincc, no_shape_derivative("gammaincc"), lambda ans, a, x: negative(_gamma_density(a, x)))

__all__ = ["gammaln", "digamma", "psi", "polygamma", "gammainc", "gammaincc"]

gamma = ufunc_primitive(sc.gamma, "gamma")
gamma.__doc__ = """The gamma function; its derivative is ``gamma(x) digamma(x)``.

>>> import autodiff
>>> float(gamma(4.0)), float(autodiff.grad(gamma)(4.0)) == float(gamma(4.0) * digamma(4.0))  # 3!
(6.0, True)
"""
defpartials(gamma, lambda ans, x: multiply(ans, digamma(x)))

rgamma = ufunc_primitive(sc.rgamma, "rgamma")
rgamma.__doc__ = """``1 / gamma(x)`` (0 at the poles); its derivative is ``-rgamma(x) digamma(x)``.

>>> import autodiff
>>> float(rgamma(4.0)), float(autodiff.grad(rgamma)(1.0))  # Euler-Mascheroni at 1
(0.1666666667, 0.5772156649)
"""
defpartials(rgamma, lambda ans, x: negative(multiply(ans, digamma(x))))

gammasgn = ufunc_primitive(sc.gammasgn, "gammasgn")
gammasgn.__doc__ = """The sign of ``gamma(x)``: piecewise constant, derivative 0.

>>> import autodiff
>>> float(gammasgn(-0.5)), float(autodiff.grad(gammasgn)(-0.5))
(-1.0, 0.0)
"""
defpartials(gammasgn, lambda ans, x: multiply(x, 0.0))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (an int, not differentiated):
    ``d (d - 1) / 4 log pi + sum_j gammaln(a + (1 - j) / 2)``, differentiable in ``a`` to every order.

    >>> import numpy as np
    >>> import autodiff
    >>> import scipy.special
    >>> bool(np.isclose(multigammaln(4.5, 3), scipy.special.multigammaln(4.5, 3)))
    True
    >>> float(autodiff.grad(multigammaln)(4.5, 1)) == float(digamma(4.5))
    True
    """
    d = int(value_of(d))
    if d < 1 or np.any(value_of(a) <= 0.5 * (d - 1)):
        raise ValueError(
            f"autodiff.scipy.special.multigammaln: needs an integer d >= 1 and a > (d - 1) / 2, got d={d} and "
            f"a={value_of(a)!r}"
        )
    total = gammaln(a)
    for j in range(2, d + 1):
        total = total + gammaln(subtract(a, 0.5 * (j - 1)))
    return total + 0.25 * d * (d - 1) * np.log(np.pi)


__all__ += ["gamma", "rgamma", "gammasgn", "multigammaln"]
