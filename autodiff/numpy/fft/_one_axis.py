"""The transforms along one axis, as numpy takes them: ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``.

Each fills in numpy's defaults (``n`` from the input's length, ``axis=-1``) and
calls one primitive of ``_transforms``; ``hfft`` and ``ihfft`` are ``irfft`` and
``rfft`` of the conjugate with the norm swapped, as numpy defines them.
"""

from numpy.lib.array_utils import normalize_axis_index

from .._broadcast import shape_of
from .._complex import conj
from .._construction import asarray
from ._transforms import fft_p, ifft_p, irfft_p, rfft_p, swapped


def as_input(a, out, name):
    """``a`` as an array (a traced value stays traced, a list may hold traced values); ``out=`` refused."""
    if out is not None:
        raise TypeError(
            f"autodiff.numpy.fft.{name}: out= would write the result into an existing array in place, "
            f"which cannot be differentiated; use the returned array instead (y = anp.fft.{name}(x))"
        )
    return asarray(a)


def prepared(a, axis, out, name):
    """``as_input(a)``, and ``axis`` counted from 0 (numpy's AxisError when it is out of range)."""
    a = as_input(a, out, name)
    return a, normalize_axis_index(axis, len(shape_of(a)))


def fft(a, n=None, axis=-1, norm=None, out=None):
    """The discrete Fourier transform along ``axis``, of ``n`` points (``a`` zero-padded or truncated).

    Arguments and result as ``numpy.fft.fft``; ``norm`` is ``"backward"`` (``None``), ``"ortho"`` or
    ``"forward"``.  Real or complex ``a``; float32 gives complex64.  Differentiable to any order.

    >>> import numpy as np
    >>> import autodiff
    >>> fft(np.array([1.0, 2.0, 0.0, 0.0]))
    array([ 3.+0.j,  1.-2.j, -1.+0.j,  1.+2.j])
    >>> autodiff.grad(lambda x: fft(x, n=2)[1].real)(np.array([1.0, 2.0, 3.0]))
    array([ 1., -1.,  0.])
    """
    a, axis = prepared(a, axis, out, "fft")
    return fft_p(a, n=shape_of(a)[axis] if n is None else n, axis=axis, norm=norm)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse discrete Fourier transform along ``axis`` (``ifft(fft(x)) == x``), as ``numpy.fft.ifft``.

    >>> import numpy as np
    >>> ifft(fft(np.array([1.0, 2.0, 3.0]))).real
    array([1., 2., 3.])
    """
    a, axis = prepared(a, axis, out, "ifft")
    return ifft_p(a, n=shape_of(a)[axis] if n is None else n, axis=axis, norm=norm)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of a real signal: its ``n // 2 + 1`` non-negative frequency bins, as ``numpy.fft.rfft``.

    ``a`` must be real (numpy refuses complex input); float32 gives complex64.

    >>> import numpy as np
    >>> rfft(np.array([1.0, 2.0, 0.0, 0.0]))
    array([ 3.+0.j,  1.-2.j, -1.+0.j])
    """
    a, axis = prepared(a, axis, out, "rfft")
    return rfft_p(a, n=shape_of(a)[axis] if n is None else n, axis=axis, norm=norm)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The real signal of ``n`` points (default ``2 * (len - 1)``) whose ``rfft`` is ``a``, as ``numpy.fft.irfft``.

    The imaginary parts of the edge bins (0 and, for even ``n``, ``n / 2``) do not enter the result,
    so their derivatives are zero.

    >>> import numpy as np
    >>> irfft(rfft(np.array([1.0, 2.0, 3.0, 4.0])))
    array([1., 2., 3., 4.])
    """
    a, axis = prepared(a, axis, out, "irfft")
    return irfft_p(a, n=2 * (shape_of(a)[axis] - 1) if n is None else n, axis=axis, norm=norm)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The (real) transform of a signal with Hermitian symmetry, given by its first half, as ``numpy.fft.hfft``.

    >>> import numpy as np
    >>> hfft(np.array([1.0, 2.0, 3.0]))
    array([ 8., -2.,  0., -2.])
    """
    a, axis = prepared(a, axis, out, "hfft")
    return irfft(conj(a), n, axis, swapped(norm, "hfft"))


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of ``hfft``: the first half of the Hermitian spectrum of a real signal, as ``numpy.fft.ihfft``.

    >>> import numpy as np
    >>> ihfft(hfft(np.array([1.0, 2.0, 3.0]))).real
    array([1., 2., 3.])
    """
    a, axis = prepared(a, axis, out, "ihfft")
    return conj(rfft(a, n, axis, swapped(norm, "ihfft")))
