"""Modified Bessel functions of the first kind: ``i0``, ``i1`` and their scaled forms ``i0e``, ``i1e``.

``i0' = i1`` and ``i1' = i0 - i1 / x`` (``1/2`` at ``x = 0``); the scaled forms ``ine(x) = e^-|x| in(x)``
add ``-sign(x) ine(x)``.
"""

import numpy as np
import scipy.special as sc

from ...extend import defvjp, value_of
from ...numpy import divide, multiply, sign, subtract, where
from .._ufuncs import ufunc_primitive

i0 = ufunc_primitive(sc.i0, "i0")
i1 = ufunc_primitive(sc.i1, "i1")
i0e = ufunc_primitive(sc.i0e, "i0e")
i1e = ufunc_primitive(sc.i1e, "i1e")


def _over_x(v, x):
    """``v / x``, with the limit ``1/2`` of ``i1(x) / x`` at ``x = 0`` (also that of ``i1e(x) / x``)."""
    zero = np.equal(value_of(x), 0)
    return where(zero, 0.5, divide(v, where(zero, 1.0, x)))


defvjp(i0, lambda g, ans, x: multiply(g, i1(x)))
defvjp(i1, lambda g, ans, x: multiply(g, subtract(i0(x), _over_x(ans, x))))
defvjp(i0e, lambda g, ans, x: multiply(g, subtract(i1e(x), multiply(sign(x), ans))))
defvjp(i1e, lambda g, ans, x: multiply(g, subtract(subtract(i0e(x), _over_x(ans, x)), multiply(sign(x), ans))))

__all__ = ["i0", "i1", "i0e", "i1e"]
