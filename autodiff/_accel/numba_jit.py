"""Numba kernels of ``layers`` and ``optimisers``: plain loops compiled on first use, one dtype at a time,
never required.

A :class:`Kernel` wraps a plain Python loop and its numba signature for one
dtype.  ``kernel.compiled(dtype)`` compiles it the first time that dtype is
asked for (float32 and float64 only), with ``cache=True`` when the loop's folder is
writable and uncached (but still compiled) when it is not.  It returns
``None`` (and the caller runs the kernel's numpy twin) when numba is missing,
fails to compile, ``NUMBA_DISABLE_JIT`` is set, ``AUTODIFF_ACCEL_OFF=kernels`` or
``AUTODIFF_REFERENCE=1``: the same switches as ``autodiff._accel.kernels``.  numba is imported on first use,
never at ``import layers`` or ``import optimisers``.

>>> from autodiff._accel.numba_jit import Kernel
>>> def double(x, out):
...     for i in range(x.size):
...         out[i] = 2 * x[i]
>>> k = Kernel(double, lambda t, d: t.void(t.Array(d, 1, "C", readonly=True), t.Array(d, 1, "C")))
>>> k.compiled(np.dtype(np.int64)) is None  # only float32 and float64 are compiled
True
"""

import inspect
import os
import threading

import numpy as np

from .._hooks import enabled

FAST = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_lock = threading.Lock()


def use_numba():
    """Are compiled kernels allowed?  ``AUTODIFF_REFERENCE=1``, ``AUTODIFF_ACCEL_OFF=kernels`` or
    ``NUMBA_DISABLE_JIT=1`` say no."""
    if not enabled("kernels"):
        return False
    return os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")


def _cache_allowed(loop):
    """numba caches next to the loop's source file: allowed when that folder (its ``__pycache__``) is writable."""
    here = os.path.dirname(os.path.abspath(inspect.getfile(loop)))
    cache_dir = os.path.join(here, "__pycache__")
    return os.access(cache_dir if os.path.isdir(cache_dir) else here, os.W_OK)


class Kernel:
    """A plain loop ``loop`` compiled per dtype with the signature ``signature(numba.types, dtype)``."""

    def __init__(self, loop, signature):
        self.loop = loop
        self.signature = signature
        self._compiled = {}

    def compiled(self, dtype):
        """The compiled loop for arrays of ``dtype``, or ``None`` when the numpy twin must run."""
        k = self._compiled.get(dtype, False)
        if k is False:
            with _lock:
                if dtype not in self._compiled:
                    self._compiled[dtype] = self._compile(dtype) if dtype in FAST and use_numba() else None
                k = self._compiled[dtype]
        return k

    def _compile(self, dtype):
        try:
            import numba

            signature = self.signature(numba.types, numba.from_dtype(dtype))
            return numba.njit([signature], cache=_cache_allowed(self.loop), nogil=True, error_model="numpy")(self.loop)
        except Exception:  # no numba, or it cannot compile here: the numpy twin is never wrong
            return None


def readonly(t, d, ndim, layout="A"):
    """The numba type of a read-only array (tapes make the arrays they read read-only; writable ones convert)."""
    return t.Array(d, ndim, layout, readonly=True)


def writable(t, d, ndim):
    """The numba type of a C-ordered output array."""
    return t.Array(d, ndim, "C")
