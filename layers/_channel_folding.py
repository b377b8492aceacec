"""``vmap`` of the batch-norm primitives: each example its own statistics, the batch folded into the channels.

As ``torch.func.vmap`` does for batch norm in training, every example is normalised by its own statistics.
One call does it: the examples' channels side by side, ``(B, N, C, ...)`` seen as ``(N, B·C, ...)``, so
that per-channel statistics are per example and channel.  :func:`folding_rule` builds a primitive's
batching rule from the kind of each argument (an image, a per-channel vector, a ``(2, C)`` pair of them, or
a constant every example shares) and of its output.

>>> import autodiff
>>> from layers._batch_norm import batch_norm
>>> x = np.random.default_rng(0).standard_normal((3, 4, 2, 5))  # 3 examples of 4 rows, 2 channels
>>> means = autodiff.vmap(lambda xi: batch_norm(xi, np.ones(2), np.zeros(2), 1e-5)[1])(x)
>>> bool(np.allclose(means, x.mean(axis=(1, 3))))
True
"""

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import batch_loop, value_of


def _front(a, bdim, size):
    """``a`` with a leading batch axis: broadcast along it when ``a`` is the same for every example."""
    return a if bdim is not None else anp.broadcast_to(a, (size,) + np.shape(value_of(a)))


def _fold_channels(a, bdim, size):
    """``(B, N, C, ...)`` as ``(N, B·C, ...)``: example ``b``'s channel ``c`` becomes channel ``b·C + c``, so
    per-channel statistics are per example and channel (free of copies when ``N`` is 1)."""
    a = anp.moveaxis(_front(a, bdim, size), 0, 1)
    shape = np.shape(value_of(a))
    return anp.reshape(a, (shape[0], shape[1] * shape[2]) + shape[3:])


def _unfold_channels(a, size, channels):
    """The inverse of :func:`_fold_channels`: ``(N, B·C, ...)`` back to ``(B, N, C, ...)``."""
    shape = np.shape(value_of(a))
    return anp.moveaxis(anp.reshape(a, (shape[0], size, channels) + shape[2:]), 1, 0)


def _fold_vectors(v, bdim, size, lead=0):
    """Per-channel vectors ``(B, [lead,] C)`` (or one ``([lead,] C)`` for all) as ``([lead,] B·C)``."""
    v = _front(v, bdim, size)
    if lead:
        v = anp.moveaxis(v, 0, 1)
    shape = np.shape(value_of(v))
    return anp.reshape(v, shape[:lead] + (shape[lead] * shape[lead + 1],))


def _unfold_vectors(v, size, channels, lead=0):
    """``([lead,] B·C)`` back to ``(B, [lead,] C)``."""
    shape = np.shape(value_of(v))
    v = anp.reshape(v, shape[:lead] + (size, channels))
    return anp.moveaxis(v, lead, 0) if lead else v


FOLD = {"image": _fold_channels, "vector": _fold_vectors,
        "pair": lambda a, bdim, size: _fold_vectors(a, bdim, size, lead=1)}
UNFOLD = {"image": _unfold_channels, "vector": _unfold_vectors,
          "pair": lambda a, size, channels: _unfold_vectors(a, size, channels, lead=1)}


def _channels(args, bdims, kinds):
    """One example's channel count: a per-channel argument's last axis (an empty batch has no B·C to divide),
    else an image's channel axis."""
    for a, kind in zip(args, kinds):
        if kind in ("vector", "pair"):
            return np.shape(value_of(a))[-1]
    a, b = next((a, b) for a, b, kind in zip(args, bdims, kinds) if kind == "image")
    return np.shape(value_of(a))[1 if b is None else 2]


def folding_rule(prim, kinds, out):
    """The batching rule of ``prim``, whose arguments are of ``kinds`` (``"image"``, ``"vector"``, ``"pair"``, or
    ``None`` for a constant every example shares; an image argument may be ``None``) and whose output is of
    ``out`` (a kind, or a tuple of kinds): one call on the folded arguments.  A batched constant, or a keyword,
    runs the loop."""

    def rule(level, args, bdims, kwargs):
        if kwargs or any(kind is None and b is not None for kind, b in zip(kinds, bdims)):
            return batch_loop(prim, level, args, bdims, kwargs)
        n, c = level.size, _channels(args, bdims, kinds)
        result = prim(*[a if kind is None or a is None else FOLD[kind](a, b, n)
                        for a, b, kind in zip(args, bdims, kinds)])
        if type(out) is tuple:
            return tuple(UNFOLD[kind](result[k], n, c) for k, kind in enumerate(out)), 0
        return UNFOLD[out](result, n, c), 0

    return rule
