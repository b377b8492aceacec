"""The kink of a Euclidean norm at 0, in one place (design.md section 11).

``linalg.norm`` (any axis, keepdims, ord 2 or 'fro', and the p-norms), ``hypot``, ``std``, the
modulus of a complex number and the named reductions of complex arrays are each ``sqrt`` (or a p-th
root) of a sum of powers.  At 0 none has a derivative.  Every one gives the same documented values:

- first order: 0, the subgradient of least norm (the pullback is ``x / |x|``, taken as 0 at 0);
- every higher order: NaN.  The derivative of ``x / |x|`` grows like ``1 / |x|`` near 0, so it has
  no value to give; a guard (``x / where(n == 0, 1, n)``) would give the identity or 0, and a smooth
  function composed through the kink (``norm(x) ** 2``, ``std(x) ** 2``) would then get a finite
  Hessian that is wrong (0 where the truth is ``2 I``).  NaN says so instead, as PyTorch and JAX do.

Both come from one primitive, :func:`inverse_norm` (``1 / n``, 0 at ``n = 0``), whose derivative at 0
is NaN; the pullbacks write ``x * inverse_norm(n)``.  :func:`root` is the p-th root of a sum of
powers, differentiated the same way.  The NaN lands only on the second derivatives that involve the
zero (with one zero row of ``norm(x, axis=1)``, those by that row's entries; the other rows' block of
the Hessian stays exact).

>>> import numpy as np
>>> import autodiff
>>> float(autodiff.grad(root)(0.0)), float(autodiff.grad(autodiff.grad(root))(0.0))
(0.0, nan)
>>> float(autodiff.grad(autodiff.grad(root))(4.0))  # away from 0, the derivative: -s**-1.5 / 4
-0.03125
"""

import numpy as np

from .._hooks import hooks, slot
from ..extend import defbatch, defjvp, defvjp, primitive, value_of
from ._batch_helpers import elementwise
from ._broadcast import as_constant, dtype_of
from ._elementwise import multiply, negative, power, square, where


def _one_over(n):
    return np.reciprocal(np.where(n == 0, np.inf, n))  # 1 / n, and 1 / inf = 0 where n is 0 (no division by 0)


slot("inverse_norm", _one_over, "1 / n, and 0 where n is 0 (the accelerated twin skips where for one nonzero norm)")


def _inverse_norm(n):
    return hooks.inverse_norm(n)


inverse_norm = primitive(_inverse_norm, "inverse_norm")


def _nan_at_zero(n):
    """The constant 1, NaN where ``n == 0``: a derivative there has no value (per example under ``vmap``)."""
    return as_constant(where(np.equal(value_of(n), 0), np.nan, 1.0), dtype_of(n))


def _inverse_norm_slope(ans, n):
    """``d(1/n)/dn = -1/n**2``: NaN at ``n = 0``, in every order after it too (``NaN * 0`` is NaN)."""
    return multiply(negative(square(ans)), _nan_at_zero(n))


defvjp(inverse_norm, lambda g, ans, n: multiply(g, _inverse_norm_slope(ans, n)))
defjvp(inverse_norm, lambda t, ans, n: multiply(t, _inverse_norm_slope(ans, n)))
defbatch(inverse_norm, elementwise(inverse_norm))


def _root(s, p=2.0):
    """``s ** (1/p)`` of a sum ``s >= 0`` of p-th powers (a norm, a standard deviation).

    Its derivative ``s**(1/p - 1) / p`` is taken as 0 at ``s = 0`` (the norm's subgradient: ``s`` is flat
    there, so its product with the derivative of ``s`` is 0 anyway), and every higher derivative there is NaN.
    """
    return np.sqrt(s) if p == 2 else np.power(s, 1.0 / p)


root = primitive(_root, "root")


def _root_slope(ans, p):
    """``s**(1/p - 1) / p = ans**(1 - p) / p``, written through :func:`inverse_norm` of ``ans``."""
    r = inverse_norm(ans)
    return multiply(r if p == 2 else power(r, p - 1.0), 1.0 / p)


defvjp(root, lambda g, ans, s, p=2.0: multiply(g, _root_slope(ans, p)))
defjvp(root, lambda t, ans, s, p=2.0: multiply(t, _root_slope(ans, p)))
defbatch(root, elementwise(root))
