"""A small recycling allocator for large gradient arrays.

Fresh multi-megabyte arrays cost page faults on first touch: for a
ResNet-18-sized parameter set that is ~7 ms of a ~10 ms gradient.  Like
PyTorch's caching allocator, we keep the large arrays we handed out and reuse
one once nothing else refers to it (its reference count shows only the pool
holds it; a live view keeps its base referenced, so it is never reused).
With ``AUTODIFF_ACCEL_OFF=buffers`` or ``AUTODIFF_REFERENCE=1`` in the environment nothing is pooled
(``POOLING`` is false): :func:`empty` is ``np.empty``.
"""

import math
import sys
import threading

import numpy as np

from .._hooks import enabled

MIN_BYTES = 1 << 20  # smaller arrays come from numpy's own allocator
MAX_BYTES = 1 << 30  # the pool never keeps more than this
POOLING = enabled("buffers")

_pool = []
_lock = threading.Lock()


def empty(shape, dtype):
    """An uninitialised array of ``shape`` and ``dtype``, recycled when a large one is free."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES or not POOLING:
        return np.empty(shape, dtype)
    with _lock:
        for i in range(len(_pool)):
            if _pool[i].nbytes == nbytes and _pool[i].dtype == dtype and sys.getrefcount(_pool[i]) == 2:
                array = _pool[i]
                array.flags.writeable = True
                return array.reshape(shape) if array.shape != tuple(shape) else array
        array = np.empty(shape, dtype)
        _pool.append(array)
        _trim()
        return array


def _trim():
    total = sum(a.nbytes for a in _pool)
    while total > MAX_BYTES and len(_pool) > 1:
        total -= _pool.pop(0).nbytes


def clear():
    """Forget every pooled array (they are freed once nothing else holds them)."""
    with _lock:
        _pool.clear()
