"""The four one-axis transforms every ``autodiff.numpy.fft`` function is built from, and their rules.

``fft``, ``ifft``, ``rfft`` and ``irfft`` along one ``axis``, each resizing the
input to ``n`` points first (numpy's zero-padding or truncation) and scaled by
``norm``.  All four are linear, so each pushes a tangent forward through itself
(``deflinear``), and each pulls a cotangent back through its *transpose* under
the engine's pairing ``Re(sum(u * v))`` (``docs/complex.md``: no conjugation):

- The DFT matrix is symmetric, so ``fft``'s transpose is ``fft`` itself with the
  same ``norm``, followed by the transpose of the resize (truncate what was padded,
  pad what was truncated); ``ifft``'s likewise.
- ``rfft`` keeps the first ``n // 2 + 1`` bins of the full spectrum of a real
  signal.  Its transpose is ``Re(F_n embed(g))``: ``irfft`` of ``conj(g)`` with
  the non-edge bins halved (``irfft`` counts each of them twice, for the bin and
  its mirror image), scaled the other way (``"backward"`` and ``"forward"`` swap).
- ``irfft`` is then the mirror case: ``conj(rfft(g))`` with the non-edge bins
  doubled, ``norm`` swapped likewise.  The edge bins (0 and, for even ``n``, ``n / 2``)
  enter ``irfft`` through their real parts only, and their cotangents come out real.

Every pullback is written with these same primitives, so derivatives nest to any
order.  A real input gets a real cotangent, in its own dtype (float32 stays float32).
"""

import numpy as np

from ...extend import defbatch, deflinear, defvjp, primitive
from .._batch_helpers import along
from .._broadcast import cast, dtype_of, shape_of
from .._complex import conj
from .._elementwise import multiply
from .._indexing import getitem
from .._shape import pad

# the norm of the transpose of irfft/rfft: the scale 1/n moves from the inverse to the forward direction
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def swapped(norm, name):
    """The norm that scales the other direction the same way (numpy's hfft swaps it too)."""
    if norm not in _SWAPPED:
        raise ValueError(f'autodiff.numpy.fft.{name}: invalid norm {norm!r}; should be "backward", "ortho", '
                         '"forward" or None (same as "backward")')
    return _SWAPPED[norm]


def _resized(g, size, axis):
    """``g`` truncated or zero-padded to ``size`` points along ``axis`` (the transpose of numpy's resize)."""
    shape = shape_of(g)
    if shape[axis] > size:
        return getitem(g, (slice(None),) * axis + (slice(0, size),))
    if shape[axis] < size:
        return pad(g, [(0, size - shape[axis]) if i == axis else (0, 0) for i in range(len(shape))])
    return g


def _like(g, x):
    """``g`` in ``x``'s dtype: the real part for a real ``x``."""
    return g if dtype_of(g) == dtype_of(x) else cast(g, dtype_of(x))


def _edge_weights(g, n, axis, inner):
    """``1`` at the bins ``irfft`` reads once (0 and, for even ``n``, ``n / 2``), ``inner`` at the others,
    shaped to scale ``g``'s bins along ``axis`` and in ``g``'s real precision (float32 stays float32)."""
    bins = n // 2 + 1
    weights = np.full(bins, inner, np.finfo(dtype_of(g)).dtype)
    weights[0] = 1
    if n % 2 == 0:
        weights[-1] = 1
    return weights.reshape((bins,) + (1,) * (len(shape_of(g)) - 1 - axis))


def _fft_value(x, n, axis, norm):
    return np.fft.fft(x, n, axis, norm)


fft_p = primitive(_fft_value, "fft")


def _fft_vjp(g, ans, x, n, axis, norm):
    return _like(_resized(fft_p(g, n=n, axis=axis, norm=norm), shape_of(x)[axis], axis), x)


defvjp(fft_p, _fft_vjp)
deflinear(fft_p)  # the JVP of a linear map is the map applied to the tangent
defbatch(fft_p, along(fft_p))  # the batch axis leads, and the transform's axis moves past it


def _ifft_value(x, n, axis, norm):
    return np.fft.ifft(x, n, axis, norm)


ifft_p = primitive(_ifft_value, "ifft")


def _ifft_vjp(g, ans, x, n, axis, norm):
    return _like(_resized(ifft_p(g, n=n, axis=axis, norm=norm), shape_of(x)[axis], axis), x)


defvjp(ifft_p, _ifft_vjp)
deflinear(ifft_p)
defbatch(ifft_p, along(ifft_p))


def _rfft_value(x, n, axis, norm):
    return np.fft.rfft(x, n, axis, norm)


rfft_p = primitive(_rfft_value, "rfft")


def _rfft_vjp(g, ans, x, n, axis, norm):
    halved = multiply(conj(g), _edge_weights(g, n, axis, 0.5))
    back = irfft_p(halved, n=n, axis=axis, norm=swapped(norm, "rfft"))
    return _like(_resized(back, shape_of(x)[axis], axis), x)


defvjp(rfft_p, _rfft_vjp)
deflinear(rfft_p)
defbatch(rfft_p, along(rfft_p))


def _irfft_value(x, n, axis, norm):
    return np.fft.irfft(x, n, axis, norm)


irfft_p = primitive(_irfft_value, "irfft")


def _irfft_vjp(g, ans, x, n, axis, norm):
    spectrum = conj(rfft_p(g, n=n, axis=axis, norm=swapped(norm, "irfft")))
    doubled = multiply(spectrum, _edge_weights(spectrum, n, axis, 2.0))
    return _like(_resized(doubled, shape_of(x)[axis], axis), x)


defvjp(irfft_p, _irfft_vjp)
deflinear(irfft_p)
defbatch(irfft_p, along(irfft_p))
