"""Batching, accelerated: the batched outer product of plain arrays in a recycled buffer, on two threads.

Per-example weight gradients are batched outer products ``xᵀg``, ``(B, n, 1) @ (B, 1, m)``: for a
784-128 layer at batch 64 that is 51 MB written per call, and a fresh array of that size costs more in
page faults than the products themselves.  When both operands are plain float arrays (no ``grad``
around the ``vmap`` records them), this writes the broadcast product into an array from
:mod:`autodiff._accel.buffers` (recycled once nothing refers to it, as torch's caching allocator does), the
examples shared between the caller and :mod:`autodiff._accel.parallel`'s worker.  Anything else goes to the
reference, ``autodiff.numpy._batch_ops._batched_outer`` (a ``multiply``).  Plugs in as
``autodiff.numpy._batch_ops.batched_outer``; off under ``AUTODIFF_REFERENCE=1`` or with ``batching`` in
``AUTODIFF_ACCEL_OFF``.

>>> import numpy as np
>>> x, y = np.arange(6.0).reshape(2, 3, 1), np.ones((2, 1, 2))
>>> np.array_equal(batched_outer_fast(x, y), x * y)
True
"""

import numpy as np

from ..numpy import _batch_ops
from . import buffers as _buffers
from . import parallel as _parallel

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
PIECE_BYTES = 1 << 20  # about this much output per piece shared between the two threads


def batched_outer_fast(x, y):
    """``x * y`` for ``(B, n, 1)`` and ``(B, 1, m)`` plain arrays of one float dtype, in a pooled buffer."""
    if type(x) is not np.ndarray or type(y) is not np.ndarray or x.dtype != y.dtype or x.dtype not in _FLOATS:
        return _batch_ops._batched_outer(x, y)
    out = _buffers.empty((x.shape[0], x.shape[1], y.shape[2]), x.dtype)
    per_example = max(out.nbytes // max(len(out), 1), 1)
    step = max(PIECE_BYTES // per_example, 1)
    pieces = [(lo, min(lo + step, len(out))) for lo in range(0, len(out), step)]

    def run(k):
        lo, hi = pieces[k]
        np.multiply(x[lo:hi], y[lo:hi], out=out[lo:hi])

    if len(pieces) > 1 and _parallel.splits([x, out]):
        _parallel._share(len(pieces), run)
    else:
        np.multiply(x, y, out=out)
    return out
