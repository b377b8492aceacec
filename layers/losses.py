"""Losses: mean squared error, softmax cross-entropy from logits, binary cross-entropy from logits.

All reduce by the mean, as PyTorch's defaults do, and are stable for large logits.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import plain_value
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

    ``logits`` has shape ``labels.shape + (classes,)``: ``(n, classes)`` with ``n`` labels, or one example's
    ``(classes,)`` with one label (as under ``vmap``, where batched labels work too).

    >>> round(float(softmax_cross_entropy(np.array([[1000.0, 0.0]]), np.array([1]))), 3)
    1000.0
    >>> round(float(softmax_cross_entropy(np.array([0.0, 0.0]), 1)), 4)  # one example: log 2
    0.6931
    """
    labels = anp.asarray(labels)
    _check_labels(logits, labels)
    logp = F.log_softmax(logits, axis=-1)
    # The label's column picked by a mask, not by indexing with the labels: a comparison stays per example
    # under vmap, so batched labels batch like any other value (an index array would have to be plain).
    picked = labels[..., None] == np.arange(np.shape(logp)[-1])
    return -anp.mean(anp.sum(anp.where(picked, logp, 0.0), axis=-1))


def _check_labels(logits, labels):
    if np.result_type(labels).kind not in "iu" or np.shape(labels) != np.shape(logits)[:-1]:
        raise ValueError(
            f"softmax_cross_entropy: expected integer labels of shape logits.shape[:-1] = {np.shape(logits)[:-1]} "
            f"(one class id per row of logits), got {np.result_type(labels)} labels of shape {np.shape(labels)}; "
            "pass class ids, not one-hot rows or probabilities, one per row"
        )
    classes, values = np.shape(logits)[-1], plain_value(labels)  # under vmap, every example's labels
    if type(values) is np.ndarray and values.size and not 0 <= values.min() <= values.max() < classes:
        raise ValueError(f"softmax_cross_entropy: labels must lie in [0, {classes}) for {classes} classes, got "
                         f"labels from {values.min()} to {values.max()}; pass class ids counted from 0")


def binary_cross_entropy_with_logits(logits, targets):
    """Mean of ``-[y log σ(z) + (1 - y) log(1 - σ(z))]``, computed as ``max(z, 0) - z y + log1p(exp(-|z|))``.

    >>> round(float(binary_cross_entropy_with_logits(np.array([-1000.0]), np.array([1.0]))), 3)
    1000.0
    """
    z = logits
    return anp.mean(anp.maximum(z, 0.0) - z * targets + anp.log1p(anp.exp(-anp.abs(z))))
