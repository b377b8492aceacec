"""Pooling over NCHW input: max, average (padding counted, as torch's default) and global average.

Max pooling is one kernel pass each way (:mod:`layers._max_pool`); average
pooling is the mean of the column matrix's window entries (:mod:`layers._im2col`),
so its pullback is the col2im kernel.  Both write channels-last memory.
"""

from dataclasses import dataclass

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import value_of

from ._conv import check_window
from ._im2col import im2col
from ._max_pool import max_pool
from ._windows import output_size


@dataclass
class _Pool:
    """A reduction over ``kernel`` × ``kernel`` windows; subclasses say which."""

    kernel: int
    stride: int = None
    padding: int = 0

    def __post_init__(self):
        check_window(type(self).__name__, self.kernel if self.stride is None else self.stride, self.padding,
                     self.kernel)

    def forward(self, x, train=False):
        return self(x), self

    def __call__(self, x):
        shape = np.shape(value_of(x))
        self._check(shape)
        return self.pool(x, shape, self.kernel if self.stride is None else self.stride)

    def _check(self, shape):
        name = type(self).__name__
        if len(shape) != 4:
            raise ValueError(f"{name}: expected NCHW input (4 axes), got shape {tuple(shape)}")
        if self.padding > self.kernel // 2:
            raise ValueError(f"{name}: padding {self.padding} is more than half the kernel {self.kernel}, so a "
                             f"window could lie wholly in the padding; use padding <= {self.kernel // 2}")
        if min(shape[2:]) + 2 * self.padding < self.kernel:
            raise ValueError(f"{name}: input of spatial size {tuple(shape[2:])} with padding {self.padding} is "
                             f"smaller than the kernel {self.kernel}")


class MaxPool2d(_Pool):
    """Max over ``kernel`` × ``kernel`` windows; the gradient goes to the first maximum of each window, as torch's.

    >>> MaxPool2d(2)(np.arange(16.0).reshape(1, 1, 4, 4))[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """

    def pool(self, x, shape, stride):
        return max_pool(x, self.kernel, stride, self.padding)


class AvgPool2d(_Pool):
    """Mean over ``kernel`` × ``kernel`` windows (zero padding counted).

    >>> AvgPool2d(2)(np.ones((1, 1, 4, 4)))[0, 0]
    array([[1., 1.],
           [1., 1.]])
    """

    def pool(self, x, shape, stride):
        n, c, h, w = shape
        k, p = self.kernel, self.padding
        ho, wo = output_size(h, k, stride, p), output_size(w, k, stride, p)
        cols = anp.reshape(im2col(x, k, k, stride, p), (n * ho * wo, c, k * k))
        means = anp.reshape(anp.mean(cols, axis=2), (n, ho, wo, c))
        return anp.transpose(means, (0, 3, 1, 2))


def global_avg_pool(x):
    """Mean over the spatial axes: ``(N, C, H, W) -> (N, C)``.

    >>> global_avg_pool(np.ones((2, 3, 4, 4))).shape
    (2, 3)
    """
    return anp.mean(x, axis=(2, 3))
