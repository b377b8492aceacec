"""Max pooling as adjoint primitives, each one numba kernel pass: gather at the window maxima, scatter to them.

``pool_gather(h, x, kernel, stride, padding)`` takes, for every window of
``x``, the element of ``h`` where ``x`` is largest; ``pool_scatter(g, x, ...)``
adds each of ``g``'s entries to that same place.  For a fixed ``x`` they are
linear in ``h`` and ``g`` and each other's adjoint, and the positions of the
maxima do not move under a small change of ``x`` (almost everywhere), so

- max pooling is ``pool_gather(x, x)``;
- its pullback is ``pool_scatter(g, x)``, its pushforward ``pool_gather(t, x)``;
- the pullback's pullback is ``pool_gather`` again, and so on to any order.

Their pullbacks keep only ``x`` and find the maxima again.  :func:`max_pool`
itself finds them once instead, as one byte per output (``maxima``), and
pools with ``gather_at`` (pulled back by ``scatter_at``, and that by
``gather_at``), so a tape keeps those bytes rather than ``x``, as torch keeps
its indices.  Of equal values the first in the window (row-major) wins,
as in torch.nn.MaxPool2d, and a NaN wins over numbers (the first NaN, as
``np.argmax``).  Positions in the padding never win.

>>> x = np.array([[[[1.0, 3.0], [2.0, 0.0]]]])
>>> pool_gather(x, x, 2, 2, 0)[0, 0], pool_scatter(np.ones((1, 1, 1, 1)), x, 2, 2, 0)[0, 0]
(array([[3.]]), array([[0., 1.],
       [0., 0.]]))
"""

import numpy as np

from autodiff._accel.numba_jit import Kernel, readonly, writable
from autodiff.extend import ZeroTangent, defbatch, defjvp, deflinear, defvjp, primitive, value_of
from autodiff.numpy._batch_helpers import fold_leading, shape_of

from . import _pieces
from ._conv import check_window
from ._layout import channels_last, nchw, nhwc
from ._windows import _windows, output_size


def _max_window_loop(src, xv, kernel, stride, pad, out, scatter):
    """Per window of ``xv`` (N, H, W, C) and channel, the first maximum; then gather ``out = src`` there
    (``out`` is N, Ho, Wo, C) or, with ``scatter``, add ``src`` there (``out`` is N, H, W, C, zeroed).

    One pass per window, branch-free along the (contiguous) channels so that it vectorises: the position
    of the best value so far is kept in ``xv``'s dtype, exact below 2**24 positions per image.
    """
    n_, h_, w_, c_ = xv.shape
    ho = (h_ + 2 * pad - kernel) // stride + 1
    wo = (w_ + 2 * pad - kernel) // stride + 1
    top = np.empty(c_, xv.dtype)
    at = np.empty(c_, xv.dtype)
    for q in range(n_ * ho * wo):  # the output positions (n, oh, ow) in order
        n, oh, ow = q // (ho * wo), q // wo % ho, q % wo
        i0, j0 = max(oh * stride - pad, 0), max(ow * stride - pad, 0)
        i1, j1 = min(oh * stride - pad + kernel, h_), min(ow * stride - pad + kernel, w_)
        top[:] = xv[n, i0, j0]  # padding never wins: start from the window's first position inside x
        at[:] = i0 * w_ + j0
        for hi in range(i0, i1):
            for wj in range(j0, j1):
                for c in range(c_):
                    v, t = xv[n, hi, wj, c], top[c]
                    take = (v > t) | ((v != v) & (t == t))  # larger, or the first NaN (as np.argmax)
                    top[c] = v if take else t
                    at[c] = hi * w_ + wj if take else at[c]
        for c in range(c_):
            p = int(at[c])
            if scatter:
                out[n, p // w_, p % w_, c] += src[n, oh, ow, c]
            else:
                out[n, oh, ow, c] = src[n, p // w_, p % w_, c]


MAX_WINDOW = Kernel(_max_window_loop, lambda t, d: t.void(
    readonly(t, d, 4, "C"), readonly(t, d, 4, "C"), t.int64, t.int64, t.int64, writable(t, d, 4), t.boolean))


def _first_offsets(x, kernel, stride, padding):
    """The offset ``i·kernel + j`` in its window of each window's first maximum inside ``x``, ``(N, C, Ho, Wo)``."""
    widths = ((0, 0), (0, 0), (padding, padding), (padding, padding))
    win = _windows(np.pad(x, widths, constant_values=-np.inf), kernel, kernel, stride)
    inside = _windows(np.pad(np.ones((1, 1) + x.shape[2:], bool), widths), kernel, kernel, stride)
    top = win.max(axis=(4, 5), keepdims=True)
    hit = ((win == top) | (np.isnan(win) & np.isnan(top))) & inside
    return hit.reshape(hit.shape[:4] + (kernel * kernel,)).argmax(axis=-1)  # not -1: N = 0 leaves it unknown


def _places(offsets, kernel, stride):
    """Padded-coordinate rows and columns of the window ``offsets`` ``(N, C, Ho, Wo)``."""
    offsets = np.asarray(offsets, np.int64)
    oh, ow = np.ogrid[:offsets.shape[2], :offsets.shape[3]]
    return oh * stride + offsets // kernel, ow * stride + offsets % kernel


def _gather_places(h, rows, cols, padding):
    widths = ((0, 0), (0, 0), (padding, padding), (padding, padding))
    padded = np.pad(np.asarray(h), widths)
    n, c = np.ogrid[:rows.shape[0], :rows.shape[1]]
    return padded[n[..., None, None], c[..., None, None], rows, cols]


def _scatter_places(g, rows, cols, shape, padding):
    n, c, h, w = shape
    out = np.zeros((n, c, h + 2 * padding, w + 2 * padding), np.result_type(g))
    ni, ci = np.ogrid[:n, :c]
    np.add.at(out, (ni[..., None, None], ci[..., None, None], rows, cols), g)
    return out[:, :, padding:padding + h, padding:padding + w]


def pool_gather_reference(h, x, kernel, stride, padding):
    """The numpy twin of :func:`pool_gather`."""
    return _gather_places(h, *_places(_first_offsets(np.asarray(x), kernel, stride, padding), kernel, stride), padding)


def pool_scatter_reference(g, x, kernel, stride, padding):
    """The numpy twin of :func:`pool_scatter`."""
    x = np.asarray(x)
    rows, cols = _places(_first_offsets(x, kernel, stride, padding), kernel, stride)
    return _scatter_places(g, rows, cols, x.shape, padding)


def _run(src, x, kernel, stride, padding, out, scatter):
    """The kernel over groups of images; ``False`` when the twin must run instead."""
    dtype = np.result_type(x)
    k = MAX_WINDOW.compiled(dtype)
    if k is None or type(src) is not np.ndarray or type(x) is not np.ndarray or src.dtype != dtype:
        return False
    if x.shape[2] * x.shape[3] >= 1 << 24:  # positions are kept in the data's dtype (float32: exact below 2**24)
        return False
    sv, xv = _channels_last_memory(src), _channels_last_memory(x)
    try:
        _pieces.run(_pieces.ranges(x.shape[0], x.nbytes),
                    lambda a, b: k(sv[a:b], xv[a:b], kernel, stride, padding, out[a:b], scatter))
    except Exception:  # never a wrong answer: the twin
        return False
    return True


def _channels_last_memory(a):
    """The C-ordered (N, H, W, C) array behind ``a``: a view when ``a`` is channels-last, else one copy."""
    return np.ascontiguousarray(nhwc(a))


def _pool_gather(h, x, kernel, stride, padding):
    n, c, hh, ww = np.shape(x)
    out = np.empty((n, output_size(hh, kernel, stride, padding), output_size(ww, kernel, stride, padding), c),
                   np.result_type(h))
    if _run(h, x, kernel, stride, padding, out, False):
        return nchw(out)
    return channels_last(pool_gather_reference(h, x, kernel, stride, padding))  # the same layout either way


def _pool_scatter(g, x, kernel, stride, padding):
    n, c, hh, ww = np.shape(x)
    out = np.zeros((n, hh, ww, c), np.result_type(g))
    if _run(g, x, kernel, stride, padding, out, True):
        return nchw(out)
    return channels_last(pool_scatter_reference(g, x, kernel, stride, padding))


pool_gather = primitive(_pool_gather, "pool_gather")
pool_scatter = primitive(_pool_scatter, "pool_scatter")


def _constant(*args, **kwargs):
    """The positions of the maxima are locally constant in ``x``: no derivative flows through them."""
    return ZeroTangent()


# Each reads x in full and h or g not at all (an entry keeps x alone: reads=, autodiff._residuals).
defvjp(pool_gather, lambda g, ans, h, x, k, s, p: pool_scatter(g, x, k, s, p), _constant, reads=("x", ""), check=False)
defvjp(pool_scatter, lambda g, ans, h, x, k, s, p: pool_gather(g, x, k, s, p), _constant, reads=("x", ""), check=False)
defjvp(pool_gather, lambda t, ans, h, x, k, s, p: pool_gather(t, x, k, s, p), _constant)
defjvp(pool_scatter, lambda t, ans, h, x, k, s, p: pool_scatter(t, x, k, s, p), _constant)
defbatch(pool_gather, fold_leading(pool_gather, arrays=2))  # under vmap: the examples' images are one bigger stack
defbatch(pool_scatter, fold_leading(pool_scatter, arrays=2))


# --- max pooling that keeps where the maxima were: one byte per output, not the input ---


def _offsets_loop(xv, kernel, stride, pad, out):
    """``out[n, oh, ow, c]``: the offset ``i·kernel + j`` in its window of the first maximum of ``xv``
    (N, H, W, C) over the window's positions inside ``xv`` (a NaN over numbers, as :func:`_max_window_loop`)."""
    n_, h_, w_, c_ = xv.shape
    ho, wo = out.shape[1], out.shape[2]
    top = np.empty(c_, xv.dtype)
    # The offsets are chosen in int32 lanes and stored as bytes once per window: a select between float and
    # uint8 lanes did not vectorise, and took seven times as long (the stem's pooling, batch 8: 1.9 against
    # 0.26 ms, one thread, AMD EPYC VM, 2026-12-07; issue 43's step profile).
    at = np.empty(c_, np.int32)
    for q in range(n_ * ho * wo):
        n, oh, ow = q // (ho * wo), q // wo % ho, q % wo
        up, left = oh * stride - pad, ow * stride - pad
        i0, j0, i1, j1 = max(up, 0), max(left, 0), min(up + kernel, h_), min(left + kernel, w_)
        top[:] = xv[n, i0, j0]
        at[:] = (i0 - up) * kernel + j0 - left
        for hi in range(i0, i1):
            for wj in range(j0, j1):
                here, row = np.int32((hi - up) * kernel + wj - left), xv[n, hi, wj]
                for c in range(c_):
                    v, t = row[c], top[c]
                    take = (v > t) | ((v != v) & (t == t))
                    top[c] = v if take else t
                    at[c] = here if take else at[c]
        window = out[n, oh, ow]
        for c in range(c_):
            window[c] = at[c]


def _move_loop(src, at, kernel, stride, pad, out, scatter):
    """Per window ``(n, oh, ow)`` and channel, the place its offset ``at`` (N, Ho, Wo, C) names: gather
    ``out = src`` there (``out`` N, Ho, Wo, C) or, with ``scatter``, add ``src`` there (``out`` N, H, W, C, zeroed)."""
    n_, ho, wo, c_ = at.shape
    for q in range(n_ * ho * wo):
        n, oh, ow = q // (ho * wo), q // wo % ho, q % wo
        for c in range(c_):
            k = np.int64(at[n, oh, ow, c])
            hi, wj = oh * stride - pad + k // kernel, ow * stride - pad + k % kernel
            if scatter:
                out[n, hi, wj, c] += src[n, oh, ow, c]
            else:
                out[n, oh, ow, c] = src[n, hi, wj, c]


OFFSETS = Kernel(_offsets_loop, lambda t, d: t.void(
    readonly(t, d, 4, "C"), t.int64, t.int64, t.int64, writable(t, t.uint8, 4)))
MOVE = Kernel(_move_loop, lambda t, d: t.void(
    readonly(t, d, 4, "C"), readonly(t, t.uint8, 4, "C"), t.int64, t.int64, t.int64, writable(t, d, 4), t.boolean))


def maxima_reference(x, kernel, stride, padding):
    """The numpy twin of :func:`maxima`."""
    offsets = _first_offsets(np.asarray(x), kernel, stride, padding)
    return channels_last(offsets.astype(np.uint8 if kernel * kernel <= 256 else np.int64))


def gather_at_reference(h, at, kernel, stride, padding):
    """The numpy twin of :func:`gather_at`."""
    return _gather_places(h, *_places(at, kernel, stride), padding)


def scatter_at_reference(g, at, shape, kernel, stride, padding):
    """The numpy twin of :func:`scatter_at`."""
    return _scatter_places(g, *_places(at, kernel, stride), shape, padding)


def _pieces_of(kernel_pass, n, nbytes):
    """``kernel_pass(a, b)`` over groups of images; ``False`` when it raised and the twin must run instead."""
    try:
        _pieces.run(_pieces.ranges(n, nbytes), kernel_pass)
    except Exception:  # never a wrong answer: the twin
        return False
    return True


def _maxima(x, kernel, stride, padding):
    n, c, hh, ww = np.shape(x)
    k = OFFSETS.compiled(np.result_type(x)) if kernel * kernel <= 256 and type(x) is np.ndarray else None
    out = np.empty((n, output_size(hh, kernel, stride, padding), output_size(ww, kernel, stride, padding), c), np.uint8)
    if k is not None:
        xv = _channels_last_memory(x)
        if _pieces_of(lambda a, b: k(xv[a:b], kernel, stride, padding, out[a:b]), n, x.nbytes):
            return nchw(out)
    return maxima_reference(x, kernel, stride, padding)


def _moves(src, at):
    """The compiled move for ``src`` and offsets ``at``, or ``None`` for the twin."""
    if type(src) is not np.ndarray or type(at) is not np.ndarray or at.dtype != np.uint8:
        return None
    return MOVE.compiled(src.dtype)


def _gather_at(h, at, kernel, stride, padding):
    k, out = _moves(h, at), np.empty(nhwc(at).shape, np.result_type(h))
    if k is not None:
        hv, av = _channels_last_memory(h), _channels_last_memory(at)
        if _pieces_of(lambda a, b: k(hv[a:b], av[a:b], kernel, stride, padding, out[a:b], False), len(out), out.nbytes):
            return nchw(out)
    return channels_last(gather_at_reference(h, at, kernel, stride, padding))  # the same layout either way


def _scatter_at(g, at, shape, kernel, stride, padding):
    n, c, hh, ww = shape
    k, out = _moves(g, at), np.zeros((n, hh, ww, c), np.result_type(g))
    if k is not None:
        gv, av = _channels_last_memory(g), _channels_last_memory(at)
        if _pieces_of(lambda a, b: k(gv[a:b], av[a:b], kernel, stride, padding, out[a:b], True), n, out.nbytes):
            return nchw(out)
    return channels_last(scatter_at_reference(g, at, shape, kernel, stride, padding))


maxima = primitive(_maxima, "maxima")
gather_at = primitive(_gather_at, "gather_at")
scatter_at = primitive(_scatter_at, "scatter_at")
# Linear in h and g, each the other's pullback; the offsets are integers, held as they are: an entry keeps
# them alone (reads=), never the pooled input or output.
defvjp(gather_at, lambda g, ans, h, at, k, s, p: scatter_at(g, at, shape_of(h), k, s, p), None,
       reads=("at", ""), check=False)
defvjp(scatter_at, lambda h, ans, g, at, shape, k, s, p: gather_at(h, at, k, s, p), None, reads=("at", ""), check=False)
deflinear(gather_at)
deflinear(scatter_at)
defbatch(maxima, fold_leading(maxima))
defbatch(gather_at, fold_leading(gather_at, arrays=2))
defbatch(scatter_at, fold_leading(scatter_at, shape_at=2, arrays=2))


def max_pool(x, kernel, stride, padding):
    """Max over ``kernel`` × ``kernel`` windows of NCHW ``x`` (padding never wins); channels-last memory out.

    The places of the maxima are found once, as one byte per output (:func:`maxima`), and the pooling is a
    gather at them, so a tape keeps those bytes, not ``x``, as torch keeps its indices.

    >>> max_pool(np.array([[[[1.0, 3.0], [2.0, 0.0]]]]), 2, 2, 0)
    array([[[[3.]]]])
    """
    check_window("max_pool", stride, padding, kernel)
    return gather_at(x, maxima(value_of(x), kernel, stride, padding), kernel, stride, padding)
