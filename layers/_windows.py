"""Window views of NCHW arrays in plain numpy: the reference im2col that the kernels are tested against.

``windows`` is a primitive (a strided view of every ``kh`` × ``kw`` window)
whose pullback ``unwindow`` scatter-adds the windows back, one strided pass
per window offset; each is the other's adjoint.  The fast paths
(:mod:`layers._im2col`, :mod:`layers._max_pool`) use numba kernels instead.

>>> windows(np.arange(16.0).reshape(1, 1, 4, 4), 2, 2, 2)[0, 0, 1, 1]
array([[10., 11.],
       [14., 15.]])
"""

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import deflinear, defvjp, primitive, value_of


def _windows(x, kh, kw, stride):
    view = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return view[:, :, ::stride, ::stride]


def _unwindow(g, shape, kh, kw, stride):
    """The pullback of ``_windows``: add every window's cotangent back where it came from."""
    out = np.zeros(shape, np.result_type(g))
    ho, wo = g.shape[2], g.shape[3]
    for i in range(kh):
        for j in range(kw):
            out[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride] += g[:, :, :, :, i, j]
    return out


windows = primitive(_windows, "windows")
unwindow = primitive(_unwindow, "unwindow")
defvjp(windows, lambda g, ans, x, kh, kw, stride: unwindow(g, np.shape(value_of(x)), kh, kw, stride))
defvjp(unwindow, lambda h, ans, g, shape, kh, kw, stride: windows(h, kh, kw, stride))
deflinear(windows)  # each moves values around: the tangent moves the same way
deflinear(unwindow)


def pad_spatial(x, padding, value=0.0):
    """Pad the last two axes of an NCHW array."""
    if not padding:
        return x
    return anp.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), constant_values=value)


def output_size(size, kernel, stride, padding):
    """The length of an axis of ``size`` after a window of ``kernel`` at ``stride`` over ``padding`` each side."""
    return (size + 2 * padding - kernel) // stride + 1
