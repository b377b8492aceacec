"""The transforms over several axes: ``fftn``, ``ifftn``, ``rfftn``, ``irfftn`` and their 2-D spellings.

numpy computes each as a sequence of one-axis transforms, and so do we, in
numpy's order: the values are numpy's, and every step records one primitive with
its own rules.  An axis may repeat (the transform then runs along it again), as in
numpy.  ``s`` and ``axes`` are read as numpy 2 reads them, its deprecations included.
"""

import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._broadcast import shape_of
from ._one_axis import as_input, fft, ifft, irfft, rfft


def _plan(a, s, axes, name, inverse_real=False):
    """numpy's ``(n, axis)`` steps for ``s`` and ``axes`` (``n`` ``None`` keeps the one-axis default)."""
    shape = shape_of(a)
    _check_given(s, axes, name)
    axes = _axes(shape, s, axes)
    sizes = _sizes(shape, s, axes, name, inverse_real)
    return [(shape[ax] if n == -1 else n, ax) for n, ax in zip(sizes, axes)]


def _axes(shape, s, axes):
    """The axes, each in ``range(ndim)``: by default the last ``len(s)`` (every axis without ``s``)."""
    if axes is None:
        count = len(shape) if s is None else len(s)
        axes = range(len(shape) - count, len(shape))
    return [normalize_axis_index(int(ax), len(shape)) for ax in axes]


def _sizes(shape, s, axes, name, inverse_real):
    """One size per axis: ``s``'s, or the axes' lengths (the last one's real signal for an inverse real
    transform)."""
    if s is not None:
        if len(s) != len(axes):
            raise ValueError(f"autodiff.numpy.fft.{name}: s has {len(s)} sizes but axes has {len(axes)} axes; "
                             "give one size per axis")
        return list(s)
    sizes = [shape[ax] for ax in axes]
    if inverse_real and axes:
        sizes[-1] = 2 * (shape[axes[-1]] - 1)  # the real signal of a half spectrum, as irfft's default n
    return sizes


def _check_given(s, axes, name):
    """Refuse a bare number for ``s`` or ``axes``; warn where numpy 2 deprecates (``s`` without ``axes``, ``None``
    sizes), with numpy's meaning kept."""
    for what, given in (("s", s), ("axes", axes)):
        if given is not None and np.ndim(given) == 0:
            raise TypeError(f"autodiff.numpy.fft.{name}: {what} must be a sequence with one entry per axis, got "
                            f"{given!r}; write {what}=({given!r},)")
    if s is not None and axes is None:
        warnings.warn(f"autodiff.numpy.fft.{name}: `axes` should not be None when `s` is given (deprecated in "
                      "NumPy 2.0, where s then applies to the last len(s) axes); pass axes too", DeprecationWarning,
                      stacklevel=5)
    if s is not None and any(n is None for n in s):
        warnings.warn(f"autodiff.numpy.fft.{name}: None in `s` is deprecated in NumPy 2.0; give the size (or -1 "
                      "for the whole axis)", DeprecationWarning, stacklevel=5)


def _last_axis(steps, name):
    if not steps:
        raise ValueError(f"autodiff.numpy.fft.{name}: a real transform needs at least one axis")
    return steps[-1]


def _complex(transform, a, s, axes, norm, out, name):
    """``transform`` (``fft`` or ``ifft``) along each planned axis, the last first, as numpy runs them."""
    a = as_input(a, out, name)
    for n, axis in reversed(_plan(a, s, axes, name)):
        a = transform(a, n, axis, norm)
    return a


def _real(a, s, axes, norm, out, name):
    """``rfft`` along the last planned axis, then ``fft`` along the others from the last to the first."""
    a = as_input(a, out, name)
    steps = _plan(a, s, axes, name)
    n, axis = _last_axis(steps, name)
    a = rfft(a, n, axis, norm)
    for n, axis in reversed(steps[:-1]):
        a = fft(a, n, axis, norm)
    return a


def _inverse_real(a, s, axes, norm, out, name):
    """``ifft`` along all but the last planned axis, then ``irfft`` along it."""
    a = as_input(a, out, name)
    steps = _plan(a, s, axes, name, inverse_real=True)
    last = _last_axis(steps, name)
    for n, axis in steps[:-1]:
        a = ifft(a, n, axis, norm)
    return irfft(a, last[0], last[1], norm)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The discrete Fourier transform over ``axes`` (all by default), of sizes ``s``, as ``numpy.fft.fftn``.

    >>> import numpy as np
    >>> import autodiff
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> bool(np.allclose(fftn(x), np.fft.fftn(x)))
    True
    >>> autodiff.grad(lambda x: fftn(x)[0, 0].real)(x)  # the zero-frequency bin sums every entry
    array([[1., 1., 1.],
           [1., 1., 1.]])
    """
    return _complex(fft, a, s, axes, norm, out, "fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of ``fftn`` over ``axes``, as ``numpy.fft.ifftn``.

    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> bool(np.allclose(ifftn(fftn(x)), x))
    True
    """
    return _complex(ifft, a, s, axes, norm, out, "ifftn")


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """``rfft`` along the last of ``axes``, then ``fft`` along the others, as ``numpy.fft.rfftn``.

    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> rfftn(x).shape
    (2, 2)
    """
    return _real(a, s, axes, norm, out, "rfftn")


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of ``rfftn``: ``ifft`` along all but the last of ``axes``, then ``irfft``, as ``numpy.fft.irfftn``.

    Without ``s`` the last axis gets ``2 * (len - 1)`` points; pass ``s`` to get an odd length back.

    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> bool(np.allclose(irfftn(rfftn(x), s=x.shape, axes=(0, 1)), x))
    True
    """
    return _inverse_real(a, s, axes, norm, out, "irfftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``fftn`` over the last two axes by default, as ``numpy.fft.fft2``.

    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> bool(np.allclose(fft2(x), np.fft.fft2(x)))
    True
    """
    return _complex(fft, a, s, axes, norm, out, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``ifftn`` over the last two axes by default, as ``numpy.fft.ifft2``.

    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> bool(np.allclose(ifft2(fft2(x)), x))
    True
    """
    return _complex(ifft, a, s, axes, norm, out, "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``rfftn`` over the last two axes by default, as ``numpy.fft.rfft2``.

    >>> import numpy as np
    >>> rfft2(np.ones((2, 4))).shape
    (2, 3)
    """
    return _real(a, s, axes, norm, out, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``irfftn`` over the last two axes by default, as ``numpy.fft.irfft2``.

    >>> import numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)
    >>> bool(np.allclose(irfft2(rfft2(x)), x))
    True
    """
    return _inverse_real(a, s, axes, norm, out, "irfft2")
