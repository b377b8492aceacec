"""Modified Bessel functions of the first kind: ``i0``, ``i1`` and their scaled forms ``i0e``, ``i1e``.

``i0' = i1`` and ``i1' = i0 - i1 / x`` (``1/2`` at ``x = 0``); the scaled forms ``ine(x) = e^-|x| in(x)``
add ``-sign(x) ine(x)``.
"""

import numpy as np
import scipy.special as sc

from ...extend import value_of
from ...numpy import divide, multiply, sign, subtract, where
from .._ufuncs import defpartials, ufunc_primitive

i0 = ufunc_primitive(sc.i0, "i0")
i0.__doc__ = """The modified Bessel function of order 0; its derivative is ``i1``.

>>> import autodiff
>>> float(i0(1.0)), float(autodiff.grad(i0)(1.0)) == float(i1(1.0))
(1.2660658778, True)
"""
i1 = ufunc_primitive(sc.i1, "i1")
i1.__doc__ = """The modified Bessel function of order 1; its derivative is ``i0(x) - i1(x) / x`` (``1/2`` at 0).

>>> import autodiff
>>> float(i1(1.0)), float(autodiff.grad(i1)(0.0))
(0.565159104, 0.5)
"""
i0e = ufunc_primitive(sc.i0e, "i0e")
i0e.__doc__ = """``exp(-|x|) i0(x)``, which does not overflow for large ``|x|``.

>>> import autodiff
>>> float(i0e(1.0)), float(autodiff.grad(i0e)(1.0))  # i1e(1) - i0e(1)
(0.4657596076, -0.2578491922)
"""
i1e = ufunc_primitive(sc.i1e, "i1e")
i1e.__doc__ = """``exp(-|x|) i1(x)``, which does not overflow for large ``|x|``.

>>> import autodiff
>>> float(i1e(1.0)), float(autodiff.grad(i1e)(0.0))
(0.2079104153, 0.5)
"""


def _over_x(v, x):
    """``v / x``, with the limit ``1/2`` of ``i1(x) / x`` at ``x = 0`` (also that of ``i1e(x) / x``)."""
    zero = np.equal(value_of(x), 0)
    return where(zero, 0.5, divide(v, where(zero, 1.0, x)))


defpartials(i0, lambda ans, x: i1(x))
defpartials(i1, lambda ans, x: subtract(i0(x), _over_x(ans, x)))
defpartials(i0e, lambda ans, x: subtract(i1e(x), multiply(sign(x), ans)))
defpartials(i1e, lambda ans, x: subtract(subtract(i0e(x), _over_x(ans, x)), multiply(sign(x), ans)))

__all__ = ["i0", "i1", "i0e", "i1e"]
