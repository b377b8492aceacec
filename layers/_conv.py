"""Conv2d (NCHW): one im2col kernel pass and one GEMM forward; GEMMs, im2col and col2im backward.

``conv2d(x, w, stride, padding)`` is a primitive.  Its forward writes the
column matrix of ``x`` (:mod:`layers._im2col`) and multiplies it by the
weight seen as ``(out, in·kh·kw)`` in one BLAS call; the result is
channels-last memory behind an NCHW view (:mod:`layers._layout`), and the
column matrix is dropped at once.  Its pullbacks are written in
differentiable ops, so convolutions nest to any order:

- input:  ``col2im(g_rows @ W)``, the adjoint scatter in one kernel pass;
- weight: ``g_rowsᵀ @ im2col(x)``, the column matrix built again rather than
  kept since the forward, so the tape holds ``x`` and ``w`` only (as torch
  saves its input), not a matrix ``kh·kw`` times larger than ``x``.

``conv2d`` is bilinear, so its pushforward is ``conv2d(tx, w) + conv2d(x, tw)``.
Its twin, :func:`conv2d_reference`, is the plain path: pad, take the window
view (the ``windows`` primitive, whose pullback ``unwindow`` scatter-adds one
window offset at a time), transpose, and multiply.
"""

from dataclasses import dataclass

import numpy as np

import autodiff.numpy as anp
from autodiff._hooks import hooks, slot
from autodiff.extend import defbatch, deflinear, defvjp, primitive, value_of
from autodiff.numpy._batch_helpers import fold_leading

from ._checks import positive_sizes
from ._im2col import _im2col, col2im, im2col
from ._layout import nchw
from ._windows import _unwindow, _windows, output_size

windows = primitive(_windows, "windows")
unwindow = primitive(_unwindow, "unwindow")
# Each reads an argument for its shape at most: an entry keeps no array (reads=, autodiff._residuals).
defvjp(windows, lambda g, ans, x, kh, kw, stride: unwindow(g, np.shape(value_of(x)), kh, kw, stride),
       reads=("",), check=False)
defvjp(unwindow, lambda h, ans, g, shape, kh, kw, stride: windows(h, kh, kw, stride), reads=("",), check=False)
deflinear(windows)  # each moves values around: the tangent moves the same way
defbatch(windows, fold_leading(windows))
deflinear(unwindow)
defbatch(unwindow, fold_leading(unwindow, shape_at=1))


def pad_spatial(x, padding, value=0.0):
    """Pad the last two axes of an NCHW array."""
    if not padding:
        return x
    return anp.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), constant_values=value)


def conv2d_reference(x, w, stride, padding):
    """The twin of :func:`conv2d` in differentiable ops: windows of the padded input, transposed, times the weight."""
    out_c, in_c, kh, kw = np.shape(value_of(w))
    cols = windows(pad_spatial(x, padding), kh, kw, stride)  # (N, C, Ho, Wo, kh, kw)
    n, _, ho, wo = np.shape(value_of(cols))[:4]
    rows = anp.reshape(anp.transpose(cols, (0, 2, 3, 1, 4, 5)), (n * ho * wo, in_c * kh * kw))
    y = rows @ anp.reshape(w, (out_c, in_c * kh * kw)).T
    return anp.transpose(anp.reshape(y, (n, ho, wo, out_c)), (0, 3, 1, 2))


def check_window(name, stride, padding, kernel=1):
    """Refuse what torch refuses: a ``kernel`` or ``stride`` below 1 (a ZeroDivisionError, or windows going
    nowhere), a negative ``padding`` (which would crop)."""
    for arg, value, least in (("kernel", kernel, 1), ("stride", stride, 1), ("padding", padding, 0)):
        if value < least:
            raise ValueError(f"{name}: {arg} must be at least {least}, got {value}; pass {arg}={least} or more")


def _conv2d(x, w, stride, padding):
    check_window("conv2d", stride, padding)
    o, c, kh, kw = w.shape
    n, _, h, wd = x.shape
    cols = _im2col(x, kh, kw, stride, padding)
    y = np.matmul(cols, w.reshape(o, c * kh * kw).T)  # (N·Ho·Wo, O): channels-last already
    del cols  # the largest array of the step: gone before the next layer runs
    return nchw(y.reshape(n, output_size(h, kh, stride, padding), output_size(wd, kw, stride, padding), o))


conv2d = primitive(_conv2d, "conv2d")


def _rows(g):
    """``g`` (N, O, Ho, Wo) as the ``(N·Ho·Wo, O)`` matrix the GEMMs read: a view when ``g`` is channels-last."""
    n, o, ho, wo = np.shape(value_of(g))
    return anp.reshape(anp.transpose(g, (0, 2, 3, 1)), (n * ho * wo, o))


def _conv2d_vjp_input(g, y, x, w, stride, padding):
    o, c, kh, kw = np.shape(value_of(w))
    dx = col2im(_rows(g) @ anp.reshape(w, (o, c * kh * kw)), np.shape(value_of(x)), kh, kw, stride, padding)
    return _dtype_like(dx, x)


def _conv2d_vjp_weight(g, y, x, w, stride, padding):
    o, c, kh, kw = np.shape(value_of(w))
    dw = anp.reshape(anp.transpose(_rows(g)) @ im2col(x, kh, kw, stride, padding), (o, c, kh, kw))
    return _dtype_like(dw, w)


def _dtype_like(ct, x):
    """A float32 argument gets a float32 cotangent, even when the other argument made the product float64."""
    dtype = np.result_type(value_of(x))
    return ct if np.result_type(value_of(ct)) == dtype else anp.astype(ct, dtype)


# The input's cotangent reads the weight, the weight's the input (each reads the other only for its shape and
# dtype): an entry keeps ``x`` and ``w``, as torch saves them, never the output.
defvjp(conv2d, _conv2d_vjp_input, _conv2d_vjp_weight, reads=("w", "x"), check=False)
deflinear(conv2d)
defbatch(conv2d, fold_leading(conv2d))

slot("convolve", conv2d, "Conv2d's convolution (the accelerated twin: oneDNN's for float32, the [onednn] "
     "extra; docs/convolutions.md)")


@dataclass
class Conv2d:
    """2-D convolution over NCHW input; ``weight`` is ``(out, in, kh, kw)`` as in torch.nn.Conv2d.

    The output has NCHW shape and channels-last memory (see :mod:`layers._layout`).

    >>> conv = Conv2d.init(3, 8, 3, stride=2, padding=1, seed=0)
    >>> conv(np.ones((2, 3, 32, 32), np.float32)).shape
    (2, 8, 16, 16)
    """

    weight: np.ndarray
    bias: object = None
    stride: int = 1
    padding: int = 0

    def __post_init__(self):
        check_window("Conv2d", self.stride, self.padding)
        if np.ndim(value_of(self.weight)) != 4:
            raise ValueError(f"Conv2d: the weight must have 4 axes (out, in, kh, kw), as torch.nn.Conv2d's, got "
                             f"shape {np.shape(value_of(self.weight))}; pass a weight laid out (out, in, kh, kw), "
                             "or build one with Conv2d.init(c_in, c_out, kernel)")

    @classmethod
    def init(cls, c_in, c_out, kernel, stride=1, padding=0, bias=True, seed=0, dtype=np.float32):
        positive_sizes("Conv2d.init", c_in=c_in, c_out=c_out, kernel=kernel)
        rng = np.random.default_rng(seed)
        bound = 1 / np.sqrt(c_in * kernel * kernel)
        weight = rng.uniform(-bound, bound, (c_out, c_in, kernel, kernel)).astype(dtype)
        b = rng.uniform(-bound, bound, c_out).astype(dtype) if bias else None
        return cls(weight, b, stride, padding)

    def forward(self, x, train=False):
        return self(x), self

    def __call__(self, x):
        self._check(np.shape(value_of(x)))
        y = hooks.convolve(x, self.weight, self.stride, self.padding)
        if self.bias is not None:
            y = y + anp.reshape(self.bias, (1, -1, 1, 1))
        return y

    def _check(self, shape):
        out_c, in_c, kh, kw = np.shape(value_of(self.weight))
        if len(shape) != 4 or shape[1] != in_c:
            raise ValueError(f"Conv2d: expected input of shape (N, {in_c}, H, W) for a weight of shape "
                             f"{(out_c, in_c, kh, kw)}, got {tuple(shape)}; pass an NCHW batch with {in_c} channels")
        if min(output_size(shape[2], kh, self.stride, self.padding),
               output_size(shape[3], kw, self.stride, self.padding)) < 1:
            raise ValueError(f"Conv2d: input of spatial size {tuple(shape[2:])} with padding {self.padding} is "
                             f"smaller than the kernel {(kh, kw)}; pad more or use a smaller kernel")
