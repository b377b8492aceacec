"""The normalised sinc, ``sin(pi x) / (pi x)``, and all its derivatives.

Composing ``sin(y) / y`` would be exact in value but wrong in its second
derivative at ``x = 0`` (a guard there makes it a constant) and noisy near
0, where the quotient rule cancels.  So ``sinc`` is one primitive family:
the ``n``-th derivative, whose pullback and pushforward are the ``(n+1)``-th.  Each is
computed from the power series near 0 and from Leibniz's rule elsewhere,
so every order is accurate at and near 0, in real and complex arithmetic
(sinc is entire).
"""

import math

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive
from ._batch_helpers import elementwise
from ._elementwise import multiply

_TERMS = 30  # series terms: |pi x| < 1 needs about 12 for double precision; more are free


def _series(y, n):
    """``d^n/dy^n sin(y)/y`` from ``sum_k (-1)^k y^(2k) / (2k+1)!``: accurate for ``|y| < 1``."""
    total = np.zeros_like(y)
    for k in range((n + 1) // 2, _TERMS):
        total = total + (-1) ** k * y ** (2 * k - n) / ((2 * k + 1) * math.factorial(2 * k - n))
    return total


def _leibniz(y, n):
    """``d^n/dy^n [sin(y) * (1/y)]`` by Leibniz's rule: accurate away from 0."""
    total = np.zeros_like(y)
    for j in range(n + 1):
        power = n - j  # d^j sin(y) = sin(y + j pi/2);  d^p (1/y) = (-1)^p p! / y^(p+1)
        inverse_part = (-1) ** power * math.factorial(power) / y ** (power + 1)
        total = total + math.comb(n, j) * np.sin(y + j * math.pi / 2) * inverse_part
    return total


def _sinc_derivative(x, n=0):
    if n == 0:
        return np.sinc(x)  # numpy's own values for the function itself
    dtype = np.result_type(x, 1.0)
    y = np.pi * np.asarray(x, np.result_type(dtype, np.float64))
    small = np.abs(y) < 1
    near, far = np.where(small, y, 0.0), np.where(small, 1.0, y)  # each branch sees only its own inputs
    out = np.where(small, _series(near, n), _leibniz(far, n)) * np.pi**n
    return out.astype(dtype)


sinc = primitive(_sinc_derivative, "sinc")
defvjp(sinc, lambda g, ans, x, n=0: multiply(g, sinc(x, n=n + 1)))
defjvp(sinc, lambda t, ans, x, n=0: multiply(t, sinc(x, n=n + 1)))
defbatch(sinc, elementwise(sinc))
sinc.__doc__ = """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, differentiable to any order.

>>> import autodiff
>>> d2 = autodiff.grad(autodiff.grad(sinc))(0.0)  # -pi**2 / 3
>>> round(d2, 6)
-3.289868
"""
