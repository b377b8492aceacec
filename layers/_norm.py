"""BatchNorm (running statistics are non-trainable state, updated functionally) and LayerNorm.

BatchNorm in training runs the fused kernels of :mod:`layers._batch_norm` as two primitives, the batch's
statistics and the normalisation (:mod:`layers._normalise`), so that a tape keeps the input and the statistics,
never the output; ``forward_relu`` ends a ResNet block (the skip added, the ReLU) in the same pass.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import value_of
from autodiff.nn.functional import relu
from traversal import trainable

from ._layout import per_channel
from ._normalise import batch_stats, normalise, normalise_relu


@dataclass
class BatchNorm:
    """Batch normalisation over axis 1 (``(N, C)`` or ``(N, C, H, W)``), as torch.nn.BatchNorm.

    In training it normalises with the batch's statistics and returns itself
    with updated running statistics; in evaluation it uses the running ones.
    Only ``gamma`` and ``beta`` are trainable.

    >>> bn = BatchNorm.init(3)
    >>> y, bn2 = bn.forward(np.arange(6.0).reshape(2, 3), train=True)
    >>> bn2.running_mean
    array([0.15, 0.25, 0.35], dtype=float32)
    """

    gamma: np.ndarray
    beta: np.ndarray
    running_mean: np.ndarray
    running_var: np.ndarray
    momentum: float = 0.1
    eps: float = 1e-5

    @classmethod
    def init(cls, channels, dtype=np.float32):
        ones, zeros = np.ones(channels, dtype), np.zeros(channels, dtype)
        return cls(ones, zeros.copy(), zeros.copy(), ones.copy())

    def forward(self, x, train=False):
        shape = np.shape(value_of(x))
        self._check(shape)
        if not train:
            return self._evaluate(x, per_channel(len(shape))), self
        stats = batch_stats(x)
        return normalise(x, self.gamma, self.beta, stats, self.eps), self._learnt(stats, shape)

    def forward_relu(self, x, train=False, skip=None):
        """``relu(self(x) + skip)`` (``skip`` ``None``: ``relu(self(x))``) and the updated layer, in one pass in
        training (a ResNet block's ending): the tape keeps the output for the ReLU, never the sum before it.

        >>> y, _ = BatchNorm.init(2).forward_relu(np.arange(8.0).reshape(4, 2), train=True, skip=np.ones((4, 2)))
        >>> y[:, 0].round(3)
        array([0.   , 0.553, 1.447, 2.342])
        """
        shape = np.shape(value_of(x))
        self._check(shape)
        if not train:
            y = self._evaluate(x, per_channel(len(shape)))
            return relu(y if skip is None else y + skip), self
        stats = batch_stats(x)
        return normalise_relu(x, self.gamma, self.beta, stats, self.eps, skip), self._learnt(stats, shape)

    def _learnt(self, stats, shape):
        """The layer with its running statistics updated from the batch's ``stats``."""
        count = math.prod(shape[:1] + shape[2:])  # values per channel
        if count == 0:  # an empty batch has no statistics to learn: the running ones stay, as in torch
            return self
        stats = value_of(stats)
        return self._updated(stats[0], stats[1], count)

    def _evaluate(self, x, shape):
        scale = self.gamma / anp.sqrt(self.running_var + self.eps)
        return (x - np.reshape(self.running_mean, shape)) * anp.reshape(scale, shape) + anp.reshape(self.beta, shape)

    def _check(self, shape):
        channels = np.shape(value_of(self.gamma))[0]
        if len(shape) < 2 or shape[1] != channels:
            raise ValueError(f"BatchNorm: expected input of shape (N, {channels}, ...) such as (N, {channels}, H, W), "
                             f"got {tuple(shape)}; the channels are axis 1")

    def _updated(self, mean, var, count):
        m = self.momentum
        unbiased = var.reshape(-1) * count / max(count - 1, 1)
        dtype = self.running_mean.dtype
        return replace(
            self,
            running_mean=((1 - m) * self.running_mean + m * mean.reshape(-1)).astype(dtype),
            running_var=((1 - m) * self.running_var + m * unbiased).astype(dtype),
        )

    def __call__(self, x):
        return self.forward(x)[0]


@trainable.register(BatchNorm)
def _(layer):
    return ("gamma", "beta")


@dataclass
class LayerNorm:
    """Normalise over the last axis, then scale and shift, as torch.nn.LayerNorm.

    >>> LayerNorm.init(4)(np.arange(8.0).reshape(2, 4)).round(3)
    array([[-1.342, -0.447,  0.447,  1.342],
           [-1.342, -0.447,  0.447,  1.342]])
    """

    gamma: np.ndarray
    beta: np.ndarray
    eps: float = 1e-5

    @classmethod
    def init(cls, features, dtype=np.float32):
        return cls(np.ones(features, dtype), np.zeros(features, dtype))

    def forward(self, x, train=False):
        return self(x), self

    def __call__(self, x):
        mean = anp.mean(x, axis=-1, keepdims=True)
        var = anp.var(x, axis=-1, keepdims=True)
        return (x - mean) / anp.sqrt(var + self.eps) * self.gamma + self.beta


@trainable.register(LayerNorm)
def _(layer):
    return ("gamma", "beta")  # eps is a constant for every transform, as BatchNorm's (design.md 1)
