"""The convolution and its two gradients as three primitives on oneDNN, each the others' pullback.

``onednn_conv2d(x, w, stride, padding)`` is :func:`layers._conv.conv2d` computed another way.  Its pullbacks
are the two other primitives, and theirs are the three again, so ``grad`` of ``grad`` stays on them:

- ``conv_input(g, w, shape, ...)``, the input's cotangent (oneDNN's backward data): linear in ``g`` (pulled
  back by ``onednn_conv2d(h, w)``) and in ``w`` (by ``conv_weight(h, g)``);
- ``conv_weight(x, g, shape, ...)``, the weight's cotangent (backward weights): linear in ``x`` (pulled back
  by ``conv_input(g, h)``) and in ``g`` (by ``onednn_conv2d(x, h)``).

Each is linear in each array argument with the others held, so its pushforward is itself with the tangent
in place of that argument (``deflinear``); ``vmap`` folds its batch into the images, as for ``conv2d``, except
``conv_weight``, which sums over the images: per-example weight gradients are ``im2col`` and one batched
matmul, in differentiable ops.

Each forward splits by size: oneDNN's convolution where the output has at least :data:`MIN_POSITIONS`
positions per image, else the im2col kernel and ``dnnl_sgemm`` (the same OpenMP threads), whose GEMMs leave
out the kernel taps that only ever multiply padding (:func:`_trim`), as oneDNN's direct convolutions do.  A
float64 or empty argument runs the numpy reference (im2col and numpy's matmul), so every value these primitives
return is the convolution's, whatever reaches them.
"""

import functools

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import defbatch, deflinear, defvjp, primitive, value_of
from autodiff.numpy._batch_helpers import _broadcast_batch, fold_leading, shape_of

from .._conv import _dtype_like, check_window
from .._im2col import _col2im, _im2col, im2col
from .._layout import nchw, rows
from .._windows import output_size
from . import _convolutions as dnnl
from . import _weight_copies

MIN_POSITIONS = 16  # output positions per image from which oneDNN's convolution runs (bench/onednn_threshold.py)


def _float32(*arrays):
    return all(type(a) is np.ndarray and a.dtype == np.float32 and a.size for a in arrays)


def _large(out_shape):
    return out_shape[2] * out_shape[3] >= MIN_POSITIONS


def _out_shape(x_shape, w_shape, stride, padding):
    (n, _, h, wd), (o, _, kh, kw) = x_shape, w_shape
    return n, o, output_size(h, kh, stride, padding), output_size(wd, kw, stride, padding)


def _gemm(a, b, trans_a=False, trans_b=False):
    """``op(a) @ op(b)``: ``dnnl_sgemm`` in float32, numpy's matmul otherwise."""
    if _float32(a, b):
        return dnnl.sgemm(a, b, trans_a, trans_b)
    return (a.T if trans_a else a) @ (b.T if trans_b else b)


def _kept_taps(size, kernel, stride, padding):
    """``(first, stop)``: the kernel offsets along one axis that reach the image at some output position."""
    reach = [k for k in range(kernel)
             if any(0 <= o * stride - padding + k < size for o in range(output_size(size, kernel, stride, padding)))]
    return (reach[0], reach[-1] + 1) if reach else (0, kernel)


@functools.lru_cache(maxsize=256)
def _trim(hw, kernel, stride, padding):
    """``(index into the weight, padding)``: the taps that ever reach the image, and the padding that gives
    them the same windows.  On ResNet-18's last stage (1×1 images, 3×3 kernels, padding 1) only the centre
    reaches: the other eight taps multiply padding, which oneDNN's direct convolutions skip, so the GEMMs here
    skip them too (a ninth of the work).  The whole kernel when nothing is left out, or when no one padding
    (the layer's, equal on all sides) gives the trimmed kernel the same windows.

    >>> _trim((1, 1), (3, 3), 1, 1)  # a 1×1 image: the centre, no padding
    ((slice(None, None, None), slice(None, None, None), slice(1, 2, None), slice(1, 2, None)), 0)
    >>> _trim((8, 8), (3, 3), 1, 1)[1]  # every tap reaches an 8×8 image: the whole kernel
    1
    """
    (r0, r1), (c0, c1) = (_kept_taps(n, k, stride, padding) for n, k in zip(hw, kernel))
    trimmed = padding - r0
    same = r0 == c0 and all(output_size(n, stop - first, stride, trimmed) == output_size(n, k, stride, padding)
                            for n, k, (first, stop) in zip(hw, kernel, ((r0, r1), (c0, c1))))
    if not same or (r0, r1, c0, c1) == (0, kernel[0], 0, kernel[1]):
        return (slice(None),) * 4, padding
    return (slice(None), slice(None), slice(r0, r1), slice(c0, c1)), trimmed


def _forward(x, w, stride, padding):
    check_window("conv2d", stride, padding)
    n, o, ho, wo = _out_shape(x.shape, w.shape, stride, padding)
    if _float32(x, w) and _large((n, o, ho, wo)):
        return dnnl.forward(x, w, stride, padding)
    taps, padding = _trim(x.shape[2:], w.shape[2:], stride, padding)
    (kh, kw), w = w[taps].shape[2:], _matrix(w, taps)
    return nchw(_gemm(_im2col(x, kh, kw, stride, padding), w, trans_b=True).reshape(n, ho, wo, o))


def _input(g, w, shape, stride, padding):
    if _float32(g, w) and _large(g.shape):
        return dnnl.backward_data(g, w, shape, stride, padding)
    taps, padding = _trim(tuple(shape[2:]), w.shape[2:], stride, padding)
    (kh, kw), w = w[taps].shape[2:], _matrix(w, taps)
    return _col2im(_gemm(rows(g), w), shape, kh, kw, stride, padding)


def _weight(x, g, shape, stride, padding):
    if _float32(x, g) and _large(g.shape):
        return dnnl.backward_weights(x, g, shape, stride, padding)
    taps, trimmed = _trim(x.shape[2:], tuple(shape[2:]), stride, padding)
    o, c, kh, kw = (len(range(*t.indices(n))) for t, n in zip(taps, shape))
    dw = _gemm(rows(g), _im2col(x, kh, kw, stride, trimmed), trans_a=True).reshape(o, c, kh, kw)
    if dw.shape == tuple(shape):
        return dw
    full = np.zeros(shape, dw.dtype)  # the taps that only see padding get no gradient
    full[taps] = dw
    return full


def _matrix(w, taps):
    """The taps ``w[taps]`` as an ``(O, C·kh·kw)`` matrix: a view of the whole kernel, else a copy.  The forward
    and the input gradient read the same one, so it is kept from its third read under one tape's hold, and a
    first-order step keeps none (:mod:`._weight_copies`)."""
    if taps[2:] == (slice(None), slice(None)):
        return w.reshape(len(w), -1)
    return _weight_copies.copy_of(w, taps, lambda: _copied(w[taps]), keep_from=3)


def _copied(taps):
    into = np.empty((len(taps), taps[0].size), taps.dtype)
    np.copyto(into.reshape(taps.shape), taps)  # not reshape's copy: it is read-only when the weight is
    return into


onednn_conv2d = primitive(_forward, "onednn_conv2d")
conv_input = primitive(_input, "onednn_conv2d_input")
conv_weight = primitive(_weight, "onednn_conv2d_weight")


def _shape(a):
    return np.shape(value_of(a))


# Each pullback reads one array in full and the other for its shape and dtype, never the output: an entry of
# the convolution keeps ``x`` and ``w``, as torch saves them (reads=, autodiff._residuals).
defvjp(onednn_conv2d,
       lambda g, y, x, w, stride, padding: _dtype_like(conv_input(g, w, _shape(x), stride, padding), x),
       lambda g, y, x, w, stride, padding: _dtype_like(conv_weight(x, g, _shape(w), stride, padding), w),
       reads=("w", "x"), check=False)
defvjp(conv_input,
       lambda h, dx, g, w, shape, stride, padding: _dtype_like(onednn_conv2d(h, w, stride, padding), g),
       lambda h, dx, g, w, shape, stride, padding: _dtype_like(conv_weight(h, g, _shape(w), stride, padding), w),
       reads=("w", "g"), check=False)
defvjp(conv_weight,
       lambda h, dw, x, g, shape, stride, padding: _dtype_like(conv_input(g, h, _shape(x), stride, padding), x),
       lambda h, dw, x, g, shape, stride, padding: _dtype_like(onednn_conv2d(x, h, stride, padding), g),
       reads=("g", "x"), check=False)
for _prim in (onednn_conv2d, conv_input, conv_weight):
    deflinear(_prim)


def _per_example_weight(level, args, bdims, kwargs):
    """``conv_weight`` under ``vmap``: one weight gradient per example, each summing over its own images
    (folding the batch into the images would sum over all of them), as ``im2col`` and a batched matmul."""
    x, g, shape, stride, padding = args
    x, g = (a if b is not None else _broadcast_batch(a, level.size) for a, b in zip((x, g), bdims))
    (b, n, c, h, wd), o = shape_of(x), shape[0]
    cols = im2col(anp.reshape(x, (b * n, c, h, wd)), shape[2], shape[3], stride, padding)
    cols = anp.reshape(cols, (b, -1 if b else 0, c * shape[2] * shape[3]))
    g_rows = anp.reshape(anp.transpose(g, (0, 1, 3, 4, 2)), (b, -1 if b else 0, o))
    return anp.reshape(anp.matmul(anp.transpose(g_rows, (0, 2, 1)), cols), (b,) + tuple(shape)), 0


defbatch(onednn_conv2d, fold_leading(onednn_conv2d))
defbatch(conv_input, fold_leading(conv_input, shape_at=2))
defbatch(conv_weight, _per_example_weight)
