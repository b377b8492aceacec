"""Conv2d (NCHW) by im2col: a windowing primitive whose pullback scatter-adds the windows back."""

from dataclasses import dataclass

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


@dataclass
class Conv2d:
    """2-D convolution over NCHW input; ``weight`` is ``(out, in, kh, kw)`` as in torch.nn.Conv2d.

    >>> conv = Conv2d.init(3, 8, 3, stride=2, padding=1, seed=0)
    >>> conv(np.ones((2, 3, 32, 32), np.float32)).shape
    (2, 8, 16, 16)
    """

    weight: np.ndarray
    bias: object = None
    stride: int = 1
    padding: int = 0

    @classmethod
    def init(cls, c_in, c_out, kernel, stride=1, padding=0, bias=True, seed=0, dtype=np.float32):
        rng = np.random.default_rng(seed)
        bound = 1 / np.sqrt(c_in * kernel * kernel)
        weight = rng.uniform(-bound, bound, (c_out, c_in, kernel, kernel)).astype(dtype)
        b = rng.uniform(-bound, bound, c_out).astype(dtype) if bias else None
        return cls(weight, b, stride, padding)

    def forward(self, x, train=False):
        return self(x), self

    def __call__(self, x):
        out_c, in_c, kh, kw = np.shape(value_of(self.weight))
        cols = windows(pad_spatial(x, self.padding), kh, kw, self.stride)  # (N, C, Ho, Wo, kh, kw)
        n, _, ho, wo = np.shape(value_of(cols))[:4]
        rows = anp.reshape(anp.transpose(cols, (0, 2, 3, 1, 4, 5)), (n * ho * wo, in_c * kh * kw))
        y = rows @ anp.reshape(self.weight, (out_c, in_c * kh * kw)).T  # one BLAS call
        y = anp.transpose(anp.reshape(y, (n, ho, wo, out_c)), (0, 3, 1, 2))
        if self.bias is not None:
            y = y + anp.reshape(self.bias, (1, out_c, 1, 1))
        return y
