"""im2col and col2im: one-pass numba kernels, each the other's pullback, with numpy twins.

``im2col(x, kh, kw, stride, padding)`` turns an NCHW array into the column
matrix of a convolution: one row per output position ``(n, oh, ow)``, one
column per ``(c, i, j)`` (the layout of torch's weight, so the weight needs no
copy), zeros where a window reaches into the padding.  It reads ``x``
through its strides (any layout) and writes each row once: no padded copy, no
window view, no transposing reshape.  It loops along whichever axis is
contiguous: the channels for channels-last memory (with plain indices below
``FEW`` channels), each window row for NCHW memory (the images a network
starts from, with few channels).  ``col2im(cols, shape, ...)`` is its
adjoint: every entry of ``cols`` added back where it came from, in one pass,
into a channels-last result.  Both are linear, so each one's pullback is the
other and each one's pushforward is itself.  Large calls are cut into groups
of images for two threads (:mod:`layers._pieces`).

>>> x = np.arange(2 * 9.0).reshape(1, 2, 3, 3)
>>> cols = im2col(x, 2, 2, 1, 0)
>>> cols.shape, cols[0]  # the first window: channel 0's four values, then channel 1's
((4, 8), array([ 0.,  1.,  3.,  4.,  9., 10., 12., 13.]))
>>> bool(np.all(cols == im2col_reference(x, 2, 2, 1, 0)))
True
"""

import numpy as np

from autodiff._accel import buffers as _buffers
from autodiff._accel.numba_jit import Kernel, readonly, writable
from autodiff.extend import defbatch, deflinear, defvjp, primitive, value_of
from autodiff.numpy._batch_helpers import fold_leading

from . import _pieces
from ._layout import channels_last, nchw, nhwc
from ._windows import _unwindow, _windows, output_size

FEW = 16  # channels: under this the loops copy by indices, from it through strided 1-D views (ResNet's 64-512)


def _im2col_loop(xv, kh, kw, stride, pad, out):
    """``out[(n, oh, ow), (c, i, j)] = xv[n, oh*stride - pad + i, ow*stride - pad + j, c]``, 0 outside.

    Under ``FEW`` channels each value is copied by its indices; from ``FEW`` on, through a 1-D view on each
    side (a simple strided loop, but a view per ``(row, i, j)`` costs more than a short copy: a 3x3 conv over
    8 channels at 8x8 took 168 us through views, 56 by indices)."""
    n_, h_, w_, c_ = xv.shape
    ho = (h_ + 2 * pad - kh) // stride + 1
    wo = (w_ + 2 * pad - kw) // stride + 1
    kk = kh * kw
    for r in range(n_ * ho * wo):  # the rows (n, oh, ow) in order
        n, oh, ow = r // (ho * wo), r // wo % ho, r % wo
        for i in range(kh):
            hi = oh * stride - pad + i
            for j in range(kw):
                wj = ow * stride - pad + j
                at = i * kw + j
                if not (0 <= hi < h_ and 0 <= wj < w_):
                    out[r, at::kk] = 0
                elif c_ < FEW:
                    for c in range(c_):
                        out[r, c * kk + at] = xv[n, hi, wj, c]
                else:
                    to, src = out[r, at::kk], xv[n, hi, wj]
                    for c in range(c_):
                        to[c] = src[c]


def _im2col_planes_loop(x, kh, kw, stride, pad, out):
    """:func:`_im2col_loop` for ``x`` (N, C, H, W) whose rows are contiguous (NCHW memory, such as the images a
    network starts from, with few channels): each window row is one run of ``kw`` values on both sides."""
    n_, c_, h_, w_ = x.shape
    ho = (h_ + 2 * pad - kh) // stride + 1
    wo = (w_ + 2 * pad - kw) // stride + 1
    for r in range(n_ * ho * wo):
        n, oh, ow = r // (ho * wo), r // wo % ho, r % wo
        left = ow * stride - pad
        j0, j1 = max(-left, 0), min(w_ - left, kw)  # the part of each window row inside x
        for c in range(c_):
            for i in range(kh):
                hi = oh * stride - pad + i
                at = (c * kh + i) * kw
                inside = 0 <= hi < h_
                for j in range(kw):
                    out[r, at + j] = x[n, c, hi, left + j] if inside and j0 <= j < j1 else 0


def _col2im_loop(cols, kh, kw, stride, pad, out):
    """``out`` (N, H, W, C) zeroed, then every ``cols[(n, oh, ow), (c, i, j)]`` added where it came from (by
    indices under ``FEW`` channels, through 1-D views from ``FEW`` on, as :func:`_im2col_loop`)."""
    n_, h_, w_, c_ = out.shape
    ho = (h_ + 2 * pad - kh) // stride + 1
    wo = (w_ + 2 * pad - kw) // stride + 1
    kk = kh * kw
    out[:] = 0
    for r in range(n_ * ho * wo):
        n, oh, ow = r // (ho * wo), r // wo % ho, r % wo
        for i in range(kh):
            hi = oh * stride - pad + i
            for j in range(kw):
                wj = ow * stride - pad + j
                if not (0 <= hi < h_ and 0 <= wj < w_):
                    continue
                at = i * kw + j
                if c_ < FEW:
                    for c in range(c_):
                        out[n, hi, wj, c] += cols[r, c * kk + at]
                else:
                    to, src = out[n, hi, wj], cols[r, at::kk]
                    for c in range(c_):
                        to[c] += src[c]


def _window_signature(source_ndim, target_ndim):
    return lambda t, d: t.void(readonly(t, d, source_ndim), t.int64, t.int64, t.int64, t.int64,
                               writable(t, d, target_ndim))


IM2COL = Kernel(_im2col_loop, _window_signature(4, 2))
IM2COL_PLANES = Kernel(_im2col_planes_loop, _window_signature(4, 2))
COL2IM = Kernel(_col2im_loop, _window_signature(2, 4))


def im2col_reference(x, kh, kw, stride, padding):
    """The numpy twin of :func:`im2col`: pad, take the window view, transpose and copy."""
    x = np.asarray(x)
    n, c = x.shape[:2]
    padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    win = _windows(padded, kh, kw, stride)  # (N, C, Ho, Wo, kh, kw)
    return win.transpose(0, 2, 3, 1, 4, 5).reshape(n * win.shape[2] * win.shape[3], c * kh * kw)


def col2im_reference(cols, shape, kh, kw, stride, padding):
    """The numpy twin of :func:`col2im`: one strided add per window offset into a padded array, then a crop."""
    n, c, h, w = shape
    ho, wo = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
    g = np.asarray(cols).reshape(n, ho, wo, c, kh, kw).transpose(0, 3, 1, 2, 4, 5)
    full = _unwindow(g, (n, c, h + 2 * padding, w + 2 * padding), kh, kw, stride)
    return full[:, :, padding:padding + h, padding:padding + w]


def _im2col(x, kh, kw, stride, padding):
    planes = type(x) is np.ndarray and x.strides[3] == x.itemsize and (
        x.shape[1] == 1 or not nhwc(x).flags.c_contiguous)  # one channel: its runs are the window rows
    k = (IM2COL_PLANES if planes else IM2COL).compiled(np.result_type(x))  # loop along the contiguous axis
    if k is None or type(x) is not np.ndarray:
        return im2col_reference(x, kh, kw, stride, padding)
    n, c, h, w = x.shape
    per_image = output_size(h, kh, stride, padding) * output_size(w, kw, stride, padding)
    out = _buffers.empty((n * per_image, c * kh * kw), x.dtype)
    xv = x if planes else nhwc(x)
    try:
        _pieces.run(_pieces.ranges(n, out.nbytes),
                    lambda a, b: k(xv[a:b], kh, kw, stride, padding, out[a * per_image:b * per_image]))
    except Exception:  # never a wrong answer: the twin
        return im2col_reference(x, kh, kw, stride, padding)
    return out


def _col2im(cols, shape, kh, kw, stride, padding):
    k = COL2IM.compiled(np.result_type(cols))
    if k is None or type(cols) is not np.ndarray:
        return channels_last(col2im_reference(cols, shape, kh, kw, stride, padding))  # the same layout either way
    n, c, h, w = shape
    per_image = len(cols) // max(n, 1)
    out = _buffers.empty((n, h, w, c), cols.dtype)
    try:
        _pieces.run(_pieces.ranges(n, cols.nbytes),
                    lambda a, b: k(cols[a * per_image:b * per_image], kh, kw, stride, padding, out[a:b]))
    except Exception:  # never a wrong answer: the twin
        return channels_last(col2im_reference(cols, shape, kh, kw, stride, padding))
    return nchw(out)


im2col = primitive(_im2col, "im2col")
col2im = primitive(_col2im, "col2im")
# Linear maps read no value, only a shape: an entry keeps no array, least of all the column matrix.
defvjp(im2col, lambda g, cols, x, kh, kw, stride, padding: col2im(g, np.shape(value_of(x)), kh, kw, stride, padding),
       reads=("",), check=False)
defvjp(col2im, lambda g, x, cols, shape, kh, kw, stride, padding: im2col(g, kh, kw, stride, padding),
       reads=("",), check=False)
deflinear(im2col)  # linear maps: the tangent goes through the same map
defbatch(im2col, fold_leading(im2col))
deflinear(col2im)
defbatch(col2im, fold_leading(col2im, shape_at=1))
