"""oneDNN's convolution primitives on float32 numpy arrays: forward, backward data, backward weights, sgemm.

A :class:`Plan` holds, for one shape (``N, C, H, W``, weight ``O, C, kh, kw``, stride, padding), the three
primitive descriptors built from one forward descriptor (oneDNN's hint), each built on first use.  The
images and output gradients are channels-last memory behind NCHW shapes (:mod:`layers._layout`), which
oneDNN reads and writes in place (its ``nhwc``); the weight is torch's ``(O, C, kh, kw)``, reordered to the
layout each primitive picks (``format_tag_any``) and back; a reordered weight is kept while a tape holds the
weight unchanged (:mod:`._weight_copies`).  Each call waits for its stream, so a result is
ready when the function returns.  :func:`sgemm` is ``dnnl_sgemm``: the small convolutions' GEMMs on the same
OpenMP threads as the large ones'.
"""

import ctypes
import functools

import numpy as np

from .._layout import channels_last, nchw, nhwc
from .._windows import output_size
from . import _library as lib
from . import _weight_copies


def _strides_md(shape, strides):
    return lib.out("dnnl_memory_desc_create_with_strides", len(shape), lib.dims(shape), lib.F32, lib.dims(strides))


def _nhwc_md(n, c, h, w):
    return _strides_md((n, c, h, w), (h * w * c, 1, w * c, c))


def _plain_md(shape):
    strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    return _strides_md(shape, strides)


def _aligned(nbytes):
    """``nbytes`` of scratch memory aligned to 64 bytes (a cache line, oneDNN's preference)."""
    raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + nbytes]


def _reorder(src_md, dst_md):
    """A reorder primitive between two layouts of one weight."""
    pd = lib.out("dnnl_reorder_primitive_desc_create", src_md, lib.engine(), dst_md, lib.engine(), None)
    primitive = lib.out("dnnl_primitive_create", pd)
    lib.call("dnnl_primitive_desc_destroy", pd)
    return primitive


class _Direction:
    """One primitive (forward, backward data or backward weights) and how its weight argument is laid out."""

    def __init__(self, pd, weights_query, plain_md, to_plain):
        self.pd, self.primitive = pd, lib.out("dnnl_primitive_create", pd)
        self.weights_md = lib.load().dnnl_primitive_desc_query_md(pd, weights_query, 0)
        self.weights_bytes = lib.load().dnnl_memory_desc_get_size(self.weights_md)
        self.reorder = None
        if not lib.load().dnnl_memory_desc_equal(self.weights_md, plain_md):
            src, dst = (self.weights_md, plain_md) if to_plain else (plain_md, self.weights_md)
            self.reorder = _reorder(src, dst)

    def implementation(self):
        """oneDNN's name for the kernel it chose (``brg:avx512_core``, ``jit:avx2``, ``gemm:jit``, ...)."""
        name = ctypes.c_char_p()
        lib.call("dnnl_primitive_desc_query", self.pd, lib.IMPL_INFO, 0, ctypes.byref(name))
        return name.value.decode()


def _execute(primitive, pairs):
    """Run ``primitive`` on ``[(argument, md, array)]`` (each array's memory handed over, never copied)."""
    memories = [lib.out("dnnl_memory_create", md, lib.engine(), ctypes.c_void_p(a.ctypes.data)) for _, md, a in pairs]
    try:
        args = (lib.ExecArg * len(pairs))(*[lib.ExecArg(arg, m) for (arg, _, _), m in zip(pairs, memories)])
        lib.call("dnnl_primitive_execute", primitive, lib.stream(), len(pairs), args)
        lib.call("dnnl_stream_wait", lib.stream())
    finally:
        for m in memories:
            lib.call("dnnl_memory_destroy", m)


class Plan:
    """The convolution of one shape, its three directions built on first use."""

    def __init__(self, x_shape, w_shape, stride, padding):
        n, c, h, w = x_shape
        o, _, kh, kw = w_shape
        ho, wo = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
        self.x_shape, self.w_shape, self.y_shape = tuple(x_shape), tuple(w_shape), (n, o, ho, wo)
        self.src, self.dst = _nhwc_md(n, c, h, w), _nhwc_md(n, o, ho, wo)
        self.plain = _plain_md(w_shape)
        self.any = lib.out("dnnl_memory_desc_create_with_tag", 4, lib.dims(w_shape), lib.F32, lib.FORMAT_ANY)
        self.window = [lib.dims((stride, stride)), lib.dims((0, 0)), lib.dims((padding, padding)),
                       lib.dims((padding, padding))]  # strides, dilations (0: none), padding left and right
        self.hint = lib.out("dnnl_convolution_forward_primitive_desc_create", lib.engine(), lib.FORWARD_TRAINING,
                            lib.CONVOLUTION_DIRECT, self.src, self.any, None, self.dst, *self.window, None)

    @functools.cached_property
    def forward(self):
        return _Direction(self.hint, lib.WEIGHTS_MD, self.plain, to_plain=False)

    @functools.cached_property
    def backward_data(self):
        pd = lib.out("dnnl_convolution_backward_data_primitive_desc_create", lib.engine(), lib.CONVOLUTION_DIRECT,
                     self.src, self.any, self.dst, *self.window, self.hint, None)
        return _Direction(pd, lib.WEIGHTS_MD, self.plain, to_plain=False)

    @functools.cached_property
    def backward_weights(self):
        pd = lib.out("dnnl_convolution_backward_weights_primitive_desc_create", lib.engine(),
                     lib.CONVOLUTION_DIRECT, self.src, self.any, None, self.dst, *self.window, self.hint, None)
        return _Direction(pd, lib.DIFF_WEIGHTS_MD, self.plain, to_plain=True)


@functools.lru_cache(maxsize=256)
def plan(x_shape, w_shape, stride, padding):
    """The :class:`Plan` of a shape, built once (ResNet-18 has 20 convolution shapes per batch size)."""
    return Plan(x_shape, w_shape, stride, padding)


def _weights_in(direction, plain, w):
    """``w`` in the layout ``direction`` reads: itself, or a reordered copy (kept while a tape holds ``w``)."""
    if direction.reorder is None:
        return np.ascontiguousarray(w, np.float32)
    return _weight_copies.copy_of(w, direction, lambda: _reordered(direction, plain, w))


def _reordered(direction, plain, w):
    """``w`` reordered into ``direction``'s layout, in new memory."""
    copy = _aligned(direction.weights_bytes)
    _execute(direction.reorder, [(lib.ARG_SRC, plain, np.ascontiguousarray(w, np.float32)),
                                 (lib.ARG_DST, direction.weights_md, copy)])
    return copy


def _nhwc_of(a):
    """The contiguous ``(N, H, W, C)`` memory of an NCHW float32 array (a view when it is channels-last)."""
    return nhwc(channels_last(np.asarray(a, np.float32)))


def forward(x, w, stride, padding):
    """``conv2d(x, w)`` (NCHW shapes, channels-last output), on oneDNN's forward primitive."""
    pl = plan(np.shape(x), np.shape(w), stride, padding)
    d = pl.forward
    n, o, ho, wo = pl.y_shape
    y = np.empty((n, ho, wo, o), np.float32)
    _execute(d.primitive, [(lib.ARG_SRC, pl.src, _nhwc_of(x)),
                           (lib.ARG_WEIGHTS, d.weights_md, _weights_in(d, pl.plain, w)), (lib.ARG_DST, pl.dst, y)])
    return nchw(y)


def backward_data(g, w, x_shape, stride, padding):
    """The input's cotangent of ``conv2d`` at the output cotangent ``g`` (channels-last)."""
    pl = plan(tuple(x_shape), np.shape(w), stride, padding)
    d = pl.backward_data
    n, c, h, wd = x_shape
    dx = np.empty((n, h, wd, c), np.float32)
    _execute(d.primitive, [(lib.ARG_DIFF_DST, pl.dst, _nhwc_of(g)),
                           (lib.ARG_WEIGHTS, d.weights_md, _weights_in(d, pl.plain, w)),
                           (lib.ARG_DIFF_SRC, pl.src, dx)])
    return nchw(dx)


def backward_weights(x, g, w_shape, stride, padding):
    """The weight's cotangent of ``conv2d`` at the output cotangent ``g``, as ``(O, C, kh, kw)``."""
    pl = plan(np.shape(x), tuple(w_shape), stride, padding)
    d = pl.backward_weights
    dw = np.empty(w_shape, np.float32)
    target = dw if d.reorder is None else _aligned(d.weights_bytes)
    _execute(d.primitive, [(lib.ARG_SRC, pl.src, _nhwc_of(x)), (lib.ARG_DIFF_DST, pl.dst, _nhwc_of(g)),
                           (lib.ARG_DIFF_WEIGHTS, d.weights_md, target)])
    if d.reorder is not None:
        _execute(d.reorder, [(lib.ARG_SRC, d.weights_md, target), (lib.ARG_DST, pl.plain, dw)])
    return dw


def _gemm_operand(a):
    """``a`` (2-D float32) with unit column stride, and its row stride in elements (a copy only if needed)."""
    a = np.asarray(a, np.float32)
    if a.strides[1] != 4 or a.strides[0] % 4 or a.strides[0] < 4 * a.shape[1]:
        a = np.ascontiguousarray(a)
    return a, max(a.strides[0] // 4, a.shape[1], 1)


def sgemm(a, b, trans_a=False, trans_b=False):
    """``op(a) @ op(b)`` in float32 on ``dnnl_sgemm`` (row-major), ``op`` transposing when asked."""
    (a, lda), (b, ldb) = _gemm_operand(a), _gemm_operand(b)
    m, k = a.shape[::-1] if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    out = np.empty((m, n), np.float32)
    if m and n:
        if k == 0:
            out[:] = 0
        else:
            lib.call("dnnl_sgemm", b"T" if trans_a else b"N", b"T" if trans_b else b"N", m, n, k, 1.0,
                     a.ctypes.data, lda, b.ctypes.data, ldb, 0.0, out.ctypes.data, max(n, 1))
    return out
