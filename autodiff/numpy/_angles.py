"""Angles: degrees and radians, and the phase ``angle`` of a complex number.

``deg2rad`` and ``rad2deg`` are linear, so each pulls back and pushes forward through itself.
``angle`` is ``arctan2(imag, real)`` for complex input, which gives its rule;
for real input it is a constant (0 or pi) with no derivative to carry.
"""

import math

import numpy as np

from ..extend import defbatch, deflinear, defvjp, primitive, value_of
from ._arraylike import as_array
from ._batch_helpers import elementwise
from ._binary import arctan2
from ._broadcast import dtype_of
from ._complex import imag, real
from ._elementwise import multiply

deg2rad = primitive(np.deg2rad, "deg2rad")
radians = deg2rad
defvjp(deg2rad, lambda g, ans, x: deg2rad(g))
deflinear(deg2rad)
defbatch(deg2rad, elementwise(deg2rad))

rad2deg = primitive(np.rad2deg, "rad2deg")
degrees = rad2deg
defvjp(rad2deg, lambda g, ans, x: rad2deg(g))
deflinear(rad2deg)
defbatch(rad2deg, elementwise(rad2deg))
deg2rad.__doc__ = """Degrees to radians, ``x * pi / 180`` (``radians`` is the same op).

>>> import autodiff
>>> round(autodiff.grad(deg2rad)(30.0) * 180, 12)
3.14159265359
"""
rad2deg.__doc__ = """Radians to degrees, ``x * 180 / pi`` (``degrees`` is the same op).

>>> rad2deg(0.5 * 3.141592653589793)
np.float64(90.0)
"""


def angle(z, deg=False):
    """The counterclockwise angle of complex ``z`` from the positive real axis, in ``(-pi, pi]``.

    Real input gives 0 or pi, a constant (its derivative is zero everywhere it exists).

    >>> import autodiff
    >>> autodiff.grad(lambda t: angle(1.0 + 1j * t))(0.0)  # d/dt arctan(t)
    1.0
    """
    z = as_array(z)
    if dtype_of(z).kind != "c":
        return np.angle(value_of(z), deg)
    a = arctan2(imag(z), real(z))
    return multiply(a, 180 / math.pi) if deg else a

__test__ = {"deg2rad": deg2rad.__doc__, "rad2deg": rad2deg.__doc__}  # doctest skips numpy's wrapped ufuncs
