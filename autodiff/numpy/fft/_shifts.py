"""``fftshift`` and ``ifftshift``: the zero frequency moved to the centre and back, as rolls (``anp.roll``)."""

from .._broadcast import shape_of
from .._construction import asarray
from .._shape import roll


def _rolled(x, axes, sign):
    x = asarray(x)
    shape = shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
    if isinstance(axes, int):
        return roll(x, sign * (shape[axes] // 2), axes)
    axes = tuple(axes)
    return roll(x, tuple(sign * (shape[axis] // 2) for axis in axes), axes)


def fftshift(x, axes=None):
    """Roll each of ``axes`` (all by default) by half its length, so the zero frequency sits at the centre.

    As ``numpy.fft.fftshift``; its pullback is the roll back (``ifftshift``'s).

    >>> import numpy as np
    >>> fftshift(np.fft.fftfreq(5))
    array([-0.4, -0.2,  0. ,  0.2,  0.4])
    """
    return _rolled(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift`` (they differ for odd lengths), as ``numpy.fft.ifftshift``.

    >>> import numpy as np
    >>> ifftshift(fftshift(np.arange(5.0)))
    array([0., 1., 2., 3., 4.])
    """
    return _rolled(x, axes, -1)
