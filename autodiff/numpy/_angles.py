"""Angles: degrees and radians, and the phase ``angle`` of a complex number.

``deg2rad`` and ``rad2deg`` are linear, so each pulls back through itself.
``angle`` is ``arctan2(imag, real)`` for complex input, which gives its rule;
for real input it is a constant (0 or pi) with no derivative to carry.
"""

import math

import numpy as np

from ..extend import defvjp, primitive, value_of
from ._binary import arctan2
from ._broadcast import dtype_of
from ._complex import imag, real
from ._elementwise import multiply

deg2rad = primitive(np.deg2rad, "deg2rad")
radians = deg2rad
defvjp(deg2rad, lambda g, ans, x: deg2rad(g))

rad2deg = primitive(np.rad2deg, "rad2deg")
degrees = rad2deg
defvjp(rad2deg, lambda g, ans, x: rad2deg(g))


def angle(z, deg=False):
    """The counterclockwise angle of complex ``z`` from the positive real axis, in ``(-pi, pi]``.

    Real input gives 0 or pi, a constant (its derivative is zero everywhere it exists).

    >>> import autodiff
    >>> autodiff.grad(lambda t: angle(1.0 + 1j * t))(0.0)  # d/dt arctan(t)
    1.0
    """
    if dtype_of(z).kind != "c":
        return np.angle(value_of(z), deg)
    a = arctan2(imag(z), real(z))
    return multiply(a, 180 / math.pi) if deg else a
