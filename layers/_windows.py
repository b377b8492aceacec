"""Window views of NCHW arrays in plain numpy, from which the kernels' twins are built.

``_windows`` is a strided view of every ``kh`` × ``kw`` window; ``_unwindow``
adds such windows back, one strided pass per window offset (each is the
other's adjoint).  The primitives made of them live in :mod:`layers._conv`.

>>> _windows(np.arange(16.0).reshape(1, 1, 4, 4), 2, 2, 2)[0, 0, 1, 1]
array([[10., 11.],
       [14., 15.]])
"""

import numpy as np


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


def output_size(size, kernel, stride, padding):
    """The length of an axis of ``size`` after a window of ``kernel`` at ``stride`` over ``padding`` each side."""
    return (size + 2 * padding - kernel) // stride + 1
