"""Losses: mean squared error, softmax cross-entropy from logits, binary cross-entropy from logits.

All reduce by the mean, as PyTorch's defaults do, and are stable for large logits.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff.nn import functional as F

__all__ = ["mse", "softmax_cross_entropy", "binary_cross_entropy_with_logits"]


def mse(prediction, target):
    """Mean of squared differences.

    >>> float(mse(np.array([1.0, 2.0]), np.array([1.0, 4.0])))
    2.0
    """
    return anp.mean((prediction - target) ** 2)


def softmax_cross_entropy(logits, labels):
    """Mean of ``-log softmax(logits)[label]`` over the batch; ``labels`` are integer class ids.

    >>> round(float(softmax_cross_entropy(np.array([[1000.0, 0.0]]), np.array([1]))), 3)
    1000.0
    """
    logp = F.log_softmax(logits, axis=-1)
    n = np.shape(labels)[0]
    return -anp.mean(logp[np.arange(n), np.asarray(labels)])


def binary_cross_entropy_with_logits(logits, targets):
    """Mean of ``-[y log σ(z) + (1 - y) log(1 - σ(z))]``, computed as ``max(z, 0) - z y + log1p(exp(-|z|))``.

    >>> round(float(binary_cross_entropy_with_logits(np.array([-1000.0]), np.array([1.0]))), 3)
    1000.0
    """
    z = logits
    return anp.mean(anp.maximum(z, 0.0) - z * targets + anp.log1p(anp.exp(-anp.abs(z))))
