"""``autodiff.scipy``: scipy's special functions, distributions and linear algebra, differentiable.

Import it explicitly (``import autodiff.scipy as asp``); ``import autodiff`` does not load scipy.
The manual is docs/scipy.md.  In ``stats``, an invalid parameter gives NaN and a point off the support the
value at the support's edge, as in scipy; ``stats.<dist>.rvs`` samples plain values; ``integrate.odeint``
takes any structure of arrays in ``args``.

>>> import numpy as np
>>> import autodiff
>>> import autodiff.scipy as asp
>>> float(autodiff.grad(lambda x: asp.stats.norm.logpdf(x))(1.0))
-1.0
"""

from . import integrate, linalg, signal, special, stats

__all__ = ["special", "stats", "linalg", "signal", "integrate"]
