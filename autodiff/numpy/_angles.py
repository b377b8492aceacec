"""Angles: degrees and radians, the phase ``angle`` of a complex number, and ``unwrap``.

``deg2rad`` and ``rad2deg`` are linear, so each pulls back and pushes forward through itself.
``angle`` is ``arctan2(imag, real)`` for complex input, which gives its rule;
for real input it is a constant (0 or pi) with no derivative to carry.
``unwrap`` adds whole periods to each value after the first along an axis; those corrections are piecewise
constant in the input (they change only where a step crosses ``discont``), so it is the input plus a constant,
and its derivative is the identity's wherever it exists.
"""

import math

import numpy as np

from .._primitive import _plain_results
from ..extend import defbatch, deflinear, defvjp, primitive, value_of
from ._arraylike import as_array
from ._batch_helpers import along, elementwise
from ._binary import arctan2
from ._broadcast import dtype_of, shape_of
from ._complex import imag, real
from ._elementwise import add, multiply
from ._joining import concatenate
from ._nondiff import nondifferentiable

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


def _corrections(p, discont=None, axis=-1, period=2 * math.pi):
    """What ``np.unwrap`` adds to ``p`` after the first slice along ``axis``: the running sum of the whole periods
    that bring each step ``diff(p)`` whose size reaches ``discont`` into ``[-period/2, period/2]`` (a step of
    exactly half a period keeps its sign), computed as numpy does, so ``p + corrections`` is its result bitwise."""
    dd = np.diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    if np.issubdtype(np.result_type(dd, period), np.integer):
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    ddmod = np.mod(dd + high, period) - high
    if ambiguous:  # a step of +period/2 stays +period/2 (mod sent it to -period/2)
        np.copyto(ddmod, high, where=(ddmod == -high) & (dd > 0))
    correct = ddmod - dd
    np.copyto(correct, 0, where=np.abs(dd) < discont)
    return correct.cumsum(axis)


_corrections_p = primitive(_corrections, "unwrap_corrections")
defbatch(_corrections_p, along(_corrections_p))
_plain_results.add(_corrections_p)  # piecewise constant: no derivative to carry
_plain_corrections = nondifferentiable(_corrections, under_vmap=_corrections_p)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """``p`` with whole ``period``\\ s added after each step along ``axis`` larger than ``discont`` (default half a
    period), so the steps stay within half a period: numpy's ``unwrap``, bitwise.  Its derivative is the
    identity's (the added periods are constant where they do not jump).

    >>> import autodiff
    >>> p = np.array([0.0, 3.0, 6.0, 0.5])
    >>> unwrap(p), np.array_equal(unwrap(p), np.unwrap(p))
    (array([0.        , 3.        , 6.        , 6.78318531]), True)
    >>> autodiff.grad(lambda p: unwrap(p)[2])(np.array([0.0, 3.0, 6.0, 0.5]))
    array([0., 0., 1., 0.])
    """
    p = as_array(p)
    shape = shape_of(p)
    if not shape:
        raise ValueError("autodiff.numpy.unwrap: p is a 0-d value, with no axis to unwrap along (numpy refuses it "
                         "too); pass an array of at least one axis")
    if dtype_of(p).kind == "c":
        raise TypeError("autodiff.numpy.unwrap: p is complex, and unwrap takes real phases (numpy refuses it too: "
                        "ufunc 'remainder' not supported for the input types); unwrap anp.angle(p) for the phase of "
                        "a complex signal")
    axis = axis % len(shape)
    if shape[axis] < 2:  # nothing after the first slice: numpy's copy, in its dtype
        return add(p, np.zeros((), np.result_type(dtype_of(p), period)))
    first, rest = ([slice(None)] * len(shape) for _ in range(2))
    first[axis], rest[axis] = slice(0, 1), slice(1, None)
    later = add(p[tuple(rest)], _plain_corrections(p, discont, axis=axis, period=period))
    return concatenate([p[tuple(first)], later], axis=axis)


__test__ = {"deg2rad": deg2rad.__doc__, "rad2deg": rad2deg.__doc__}  # doctest skips numpy's wrapped ufuncs
