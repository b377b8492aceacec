"""Channels-last memory behind NCHW shapes: how the kernels lay out what they make.

Arrays keep torch's logical layout, ``(N, C, H, W)``, but the convolution,
pooling and normalisation kernels write their outputs channels-last (the
memory of an ``(N, H, W, C)`` array, seen through a transposed view), as
torch's ``channels_last`` does.  A GEMM then reads and writes them without a
transposing copy, a channel's values sit side by side for the per-channel
loops, and numpy's elementwise ops (ReLU, the residual add) keep the layout.
Any other layout is still accepted: kernels read it through strides, and
:func:`rows` copies it once.

>>> x = channels_last(np.arange(24.0).reshape(1, 2, 3, 4))
>>> x.shape, nhwc(x).flags.c_contiguous, rows(x).shape
((1, 2, 3, 4), True, (12, 2))
"""

import math

import numpy as np


def nhwc(x):
    """The ``(N, H, W, C)`` view of an NCHW array (no copy)."""
    return x.transpose(0, 2, 3, 1)


def nchw(buffer):
    """The NCHW view of an ``(N, H, W, C)`` array (no copy)."""
    return buffer.transpose(0, 3, 1, 2)


def channels_last(x):
    """``x`` (NCHW) with channels-last memory: itself when it already is, else a copy."""
    return nchw(np.ascontiguousarray(nhwc(x)))


def rows(x):
    """``x`` (``(N, C, ...)``) as a C-ordered ``(M, C)`` matrix, one row per position, channels along the row.

    A view when the memory is already channels-last, else a copy.
    """
    x = np.asarray(x)
    positions = x.shape[0] * math.prod(x.shape[2:])  # not -1: numpy cannot infer it when there are no channels
    return np.ascontiguousarray(x.transpose((0,) + tuple(range(2, x.ndim)) + (1,))).reshape(positions, x.shape[1])


def from_rows(r, shape):
    """The ``(M, C)`` matrix ``r`` seen as an array of ``shape`` (the inverse of :func:`rows`, no copy)."""
    last = len(shape) - 1
    return r.reshape((shape[0],) + tuple(shape[2:]) + (shape[1],)).transpose((0, last) + tuple(range(1, last)))


def channel_axes(ndim):
    """The axes a per-channel statistic reduces over: all but axis 1."""
    return (0,) + tuple(range(2, ndim))


def per_channel(ndim):
    """The shape that broadcasts a ``(C,)`` vector along axis 1 of an ``ndim``-dimensional array."""
    return (1, -1) + (1,) * (ndim - 2)
