"""Pooling over NCHW input: max, average (padding counted, as torch's default) and global average."""

from dataclasses import dataclass

import numpy as np

import autodiff.numpy as anp

from ._conv import pad_spatial, windows


@dataclass
class _Pool:
    """A reduction over ``kernel`` × ``kernel`` windows; subclasses say which reduction and which padding value."""

    kernel: int
    stride: int = None
    padding: int = 0

    def forward(self, x, train=False):
        return self(x), self

    def __call__(self, x):
        padded = pad_spatial(x, self.padding, self.pad_value)
        return self.reduce(windows(padded, self.kernel, self.kernel, self.stride or self.kernel), axis=(4, 5))


class MaxPool2d(_Pool):
    """Max over ``kernel`` × ``kernel`` windows.

    >>> MaxPool2d(2)(np.arange(16.0).reshape(1, 1, 4, 4))[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """

    pad_value = -np.inf
    reduce = staticmethod(anp.max)


class AvgPool2d(_Pool):
    """Mean over ``kernel`` × ``kernel`` windows (zero padding counted).

    >>> AvgPool2d(2)(np.ones((1, 1, 4, 4)))[0, 0]
    array([[1., 1.],
           [1., 1.]])
    """

    pad_value = 0.0
    reduce = staticmethod(anp.mean)


def global_avg_pool(x):
    """Mean over the spatial axes: ``(N, C, H, W) -> (N, C)``.

    >>> global_avg_pool(np.ones((2, 3, 4, 4))).shape
    (2, 3)
    """
    return anp.mean(x, axis=(2, 3))
