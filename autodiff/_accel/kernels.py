"""Numba kernels for the hot reductions and float64 tanh, compiled lazily, with a numpy fallback.

Plain 1-D loops accumulating in float64.  ``fastmath`` is limited to
reassociation and contraction, so loops vectorise while NaN and Inf still
propagate.  Inputs are normalised in Python to contiguous 1-D arrays (a view
when possible), so each kernel has one specialisation per dtype (float32,
float64).  This module imports nothing from autodiff but its ``_accel`` switch.

numba is imported at the first kernel call, not at import, and on a background thread: the
numpy reference runs until the kernel is loaded (see :func:`kernel`).  Compiled code is
cached next to this file when that folder is writable, and not cached (but
still compiled) when it is not.  With numba missing, ``NUMBA_DISABLE_JIT`` set,
``AUTODIFF_ACCEL_OFF=kernels`` or ``AUTODIFF_REFERENCE=1`` (see :func:`_use_numba`),
a dtype other than float32/float64, or a kernel that raises, the numpy
reference runs instead, also accumulating in float64.
"""

import functools
import math
import os
import threading

import numpy as np

from .._hooks import enabled

_FLAGS = {"reassoc", "contract"}


def _sum(x):
    acc = 0.0
    for i in range(x.size):
        acc += x[i]
    return acc


def _sumsq(x):
    acc = 0.0
    for i in range(x.size):
        v = np.float64(x[i])
        acc += v * v
    return acc


def _abssum(x):
    acc = 0.0
    for i in range(x.size):
        acc += abs(np.float64(x[i]))
    return acc


def _sumsq_double(x, out):
    """Fused forward and pullback of sumsq: the value, and ``out = 2 x`` (the gradient at g = 1)."""
    acc = 0.0
    for i in range(x.size):
        v = x[i]
        acc += np.float64(v) * np.float64(v)
        out[i] = v + v
    return acc


def _abssum_sign(x, out):
    """Fused forward and pullback of abssum: the value, and ``out = sign(x)`` (the gradient at g = 1)."""
    acc = 0.0
    for i in range(x.size):
        v = x[i]
        acc += abs(np.float64(v))
        out[i] = (v > 0) - (v < 0) if v == v else v
    return acc


def _scale_into(x, c, out):
    """``out = c x`` (the second pass of the norm's fused pullback, once ``c = 1/||x||`` is known)."""
    for i in range(x.size):
        out[i] = x[i] * c
    return 0.0


def _tanh_into(x, out):
    """``out = tanh(x)``, from ``exp`` (``expm1`` near 0, for its relative accuracy): the C library's ``tanh``,
    which numpy's float64 ``tanh`` calls once per value, is about 2.4 times slower here."""
    for i in range(x.size):
        v = np.float64(x[i])
        a = abs(v)
        if a < 0.55:
            e = math.expm1(2.0 * a)
            r = e / (e + 2.0)
        else:
            e = math.exp(-2.0 * a)
            r = (1.0 - e) / (1.0 + e)
        out[i] = math.copysign(r, v)
    return 0.0


def _dot(x, y):
    acc = 0.0
    for i in range(x.size):
        acc += np.float64(x[i]) * np.float64(y[i])
    return acc


def _wide(x):
    return x if x.dtype == np.float64 else x.astype(np.float64)


_CHUNK = 1 << 20  # values widened at a time: 8 MB of float64, not a whole copy, and few pieces (threads share the GIL)


def _wide_chunks(*arrays):
    """The arrays' values as float64, in matching pieces: each array itself when all are float64, else
    converted pieces (a whole float64 copy of each costs more memory traffic than the sum it feeds)."""
    if all(a.dtype == np.float64 for a in arrays):
        return [arrays]
    return ([_wide(a[start:start + _CHUNK]) for a in arrays] for start in range(0, arrays[0].size, _CHUNK))


def _wide_dot(x, y):
    # einsum, not BLAS's dot: a multithreaded dot per piece fights the threads around it (the kernel loader's,
    # _parallel's), which made a first call up to 3x slower
    return float(sum(np.einsum("i,i->", a, b) for a, b in _wide_chunks(x, y)))


def _wide_abssum(x):
    return float(sum(np.abs(a).sum() for (a,) in _wide_chunks(x)))


REFERENCE = {  # the numpy reference of each kernel: tests and benchmarks share this table
    "sum": lambda x: float(np.sum(x, dtype=np.float64)),
    "sumsq": lambda x: _wide_dot(x, x),
    "abssum": _wide_abssum,
    "dot": _wide_dot,
    "sumsq_double": lambda x, out: (_wide_dot(x, x), np.multiply(x, 2, out=out))[0],
    "abssum_sign": lambda x, out: (_wide_abssum(x), np.sign(x, out=out))[0],
    "scale_into": lambda x, c, out: (np.multiply(x, x.dtype.type(c), out=out), 0.0)[1],
    "tanh_into": lambda x, out: (np.tanh(x, out=out), 0.0)[1],
}
_PYTHON = {"sum": _sum, "sumsq": _sumsq, "abssum": _abssum, "dot": _dot,
           "sumsq_double": _sumsq_double, "abssum_sign": _abssum_sign, "scale_into": _scale_into,
           "tanh_into": _tanh_into}

_compiled = {}
_lock = threading.Lock()


def _use_numba():
    """May kernels compile?  Not with ``kernels`` off (``AUTODIFF_ACCEL_OFF``, ``AUTODIFF_REFERENCE=1``), nor under
    ``NUMBA_DISABLE_JIT``."""
    if not enabled("kernels"):
        return False
    return os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")


def _cache_allowed():
    here = os.path.dirname(os.path.abspath(__file__))
    cache_dir = os.path.join(here, "__pycache__")
    target = cache_dir if os.path.isdir(cache_dir) else here
    return os.access(target, os.W_OK)


def _signatures(numba, name):
    """Read-only 1-D C arrays of float32 and float64: writable arrays convert to these, so the two
    signatures serve every call (arrays a tape protects are read-only, and would otherwise compile again)."""
    def array(dtype, readonly=True):
        return numba.types.Array(dtype, 1, "C", readonly=readonly)

    floats = (numba.types.float32, numba.types.float64)
    if name in ("sumsq_double", "abssum_sign", "tanh_into"):
        return [numba.types.float64(array(d), array(d, False)) for d in floats]
    if name == "scale_into":
        return [numba.types.float64(array(d), numba.types.float64, array(d, False)) for d in floats]
    arity = 2 if name == "dot" else 1
    return [numba.types.float64(*[array(d)] * arity) for d in (numba.types.float32, numba.types.float64)]


def _compile(name):
    try:
        import numba
    except ImportError:
        return None
    jit = numba.njit(_signatures(numba, name), cache=_cache_allowed(), fastmath=_FLAGS, nogil=True,
                     error_model="numpy")
    return jit(_PYTHON[name])


def kernel(name):
    """The compiled kernel ``name``, or ``None`` while the numpy reference must run.

    Importing numba and loading even a cached kernel takes a few hundred
    milliseconds, more than the first reduction it would speed up.  So the
    first call starts loading ``name`` on a background thread and the numpy
    reference (same float64 accumulation) runs until the kernel is ready.
    A caller that keeps calling waits for it after :data:`WAIT_AFTER` calls.
    ``warmup()`` loads every kernel and waits.
    """
    k = _compiled.get(name, False)
    if k is not False:
        return k
    if not _use_numba():
        _compiled[name] = None
        return None
    with _lock:
        loader = _loading.get(name)
        if loader is None and name not in _compiled:
            loader = _loading[name] = _Loader(name)
    if loader is not None:
        loader.served()
    return _compiled.get(name)


# Calls of a kernel's reference while the kernel loads, after which the caller waits for it.  The loading thread
# needs the GIL back after each file it reads and each compiler pass, and a thread busy in Python hands it over
# only every 5 ms (sys.getswitchinterval), so beside a hot loop the load crawls: a loop of norms on two values
# waited 11 s for the sumsq kernel (5 µs a call meanwhile, 0.9 after), where the load alone takes 0.6 s
# (AMD EPYC, Zen 5, 2026-12-08).  A program that makes this many calls is in such a loop: one wait is cheaper.
WAIT_AFTER = 2000
WAIT_AT_MOST = 60.0  # seconds: a load that never ends (it cannot, but a hang is never the answer) is not awaited


class _Loader:
    """The background thread loading one kernel, and how many calls its reference has served meanwhile."""

    def __init__(self, name):
        self.calls = 0
        self.thread = threading.Thread(target=_load, args=(name,), name=f"autodiff kernel {name}", daemon=True)
        self.thread.start()

    def served(self):
        """Count one call served by the reference; the :data:`WAIT_AFTER`-th waits for the kernel."""
        self.calls += 1
        if self.calls == WAIT_AFTER and self.thread is not threading.current_thread():
            self.thread.join(WAIT_AT_MOST)


_loading = {}  # name -> the _Loader of each kernel a background thread is loading


def _load(name):
    """Compile (or load from the cache) kernel ``name`` and publish it; the numpy reference runs meanwhile."""
    try:
        k = _compile(name)
    except Exception:  # a kernel that cannot be built leaves the numpy reference in charge, never an error
        k = None
    with _lock:
        _compiled[name] = k
        _loading.pop(name, None)


def load_now(name):
    """Kernel ``name`` compiled (or loaded from the cache) in this thread, waiting for it: ``None`` when numba
    is unavailable or switched off."""
    if _compiled.get(name, False) is False:
        _load(name) if _use_numba() else _compiled.setdefault(name, None)
    return _compiled[name]


def flat(x):
    """``x`` as a contiguous 1-D array: a view when ``x`` is already contiguous."""
    x = np.asarray(x)
    return x.reshape(-1) if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(-1)


_FAST = (np.dtype(np.float32), np.dtype(np.float64))
FAST_DTYPES = frozenset(_FAST)  # the dtypes the kernels take; anything else runs the numpy reference


def all_fast(xs):
    """Every ``x`` a float32/float64 ndarray, so the kernels take them all."""
    return all(type(x) is np.ndarray and x.dtype in _FAST for x in xs)


def reduce(name, x):
    """Run the unary kernel ``name`` on the array ``x`` (any shape); a Python float back.

    The hot path of every model-wide reduction: one dictionary lookup and one
    compiled call for a contiguous float32/float64 array.
    """
    k = _compiled.get(name, False)
    if k is False:
        k = kernel(name)
    if k is not None and type(x) is np.ndarray and x.dtype in _FAST:
        try:
            return k(x if x.ndim == 1 and x.flags.c_contiguous else flat(x))
        except Exception:  # never a wrong answer: fall back to numpy
            pass
    return REFERENCE[name](flat(x))


def run(name, *xs):
    """Run kernel ``name`` on arrays ``xs`` (any shape, same dtype; scalars pass through); a Python float back."""
    arrays = [flat(x) if isinstance(x, np.ndarray) else x for x in xs]
    k = kernel(name) if arrays[0].dtype in (np.float32, np.float64) else None
    if k is not None:
        try:
            return k(*arrays)
        except Exception:  # a kernel that fails falls back to numpy, never to a wrong answer
            pass
    return REFERENCE[name](*arrays)


def fused(name, x, *scalars, out=None):
    """Run the fused kernel ``name`` on ``x``, writing into ``out`` (a fresh C-ordered array shaped like ``x``
    unless given one).

    Returns ``(value, out)``: the reduction and the gradient at g = 1 (for ``sumsq_double``: ``2 x``;
    ``abssum_sign``: ``sign(x)``; ``scale_into``: ``c x``).
    """
    if out is None:
        out = np.empty(x.shape, x.dtype)
    k = _compiled.get(name, False)
    if k is False:
        k = kernel(name)
    flat_x = x if x.ndim == 1 and x.flags.c_contiguous else flat(x)
    flat_out = out.reshape(-1)  # out is C-ordered, so this is a view
    if k is not None and x.dtype in _FAST:
        try:
            return k(flat_x, *scalars, flat_out), out
        except Exception:  # never a wrong answer: fall back to numpy
            pass
    return REFERENCE[name](flat_x, *scalars, flat_out), out


def _call(k, ref, *arrays):
    """The compiled kernel ``k`` on contiguous 1-D arrays, or its numpy reference if there is none or it raises."""
    if k is not None:
        try:
            return k(*arrays)
        except Exception:  # never a wrong answer: fall back to numpy
            pass
    return ref(*arrays)


def _compiled_and_reference(name):
    k = _compiled.get(name, False)
    return (kernel(name) if k is False else k), REFERENCE[name]


def runner(name):
    """Kernel ``name`` for contiguous 1-D float32/float64 arrays (the caller checks), numpy if it is
    unavailable or raises: the per-piece call of the two-thread paths, with no checks of its own."""
    return functools.partial(_call, *_compiled_and_reference(name))


def reduce_each(name, xs):
    """``[reduce(name, x) for x in xs]`` in one tight loop, ``None`` where ``x`` is not a float32/float64 array.

    The hot loop of model-wide reductions over many small arrays, where the
    per-call checks of :func:`reduce` would cost as much as the kernel.
    """
    k, ref = _compiled_and_reference(name)
    return [_call(k, ref, x.ravel()) if type(x) is np.ndarray and x.dtype in _FAST else None for x in xs]


def sum_each(name, xs, finish=None):
    """``(Σ finish(reduce(name, x)), dtype)`` over arrays ``xs`` of one dtype, float32 or float64, in one loop,
    summed in float64.  ``None`` if some ``x`` is not such an array, or the dtypes differ (a caller sums
    those each in its own dtype)."""
    k, ref = _compiled_and_reference(name)
    acc, dtype = 0.0, xs[0].dtype if xs and type(xs[0]) is np.ndarray else None
    if dtype not in _FAST:
        return None
    for x in xs:
        if type(x) is not np.ndarray or x.dtype is not dtype and x.dtype != dtype:
            return None
        value = _call(k, ref, x.ravel())  # ravel: a view when x is contiguous, else a contiguous copy
        acc += value if finish is None else finish(value)
    return acc, dtype


def fused_sum_each(name, xs, alloc):
    """``(Σ value, dtype, outs)`` of the fused kernel ``name`` over arrays ``xs`` of one dtype, float32 or
    float64, in one loop: the values summed in float64, and each gradient at g = 1 written into ``alloc(x)``
    (a C-ordered array shaped like ``x``).  ``None`` if some ``x`` is not such an array, or the dtypes differ."""
    k, ref = _compiled_and_reference(name)
    acc, dtype, outs = 0.0, xs[0].dtype if xs and type(xs[0]) is np.ndarray else None, []
    if dtype not in _FAST:
        return None
    for x in xs:
        if type(x) is not np.ndarray or x.dtype is not dtype and x.dtype != dtype:
            return None
        out = alloc(x)
        acc += _call(k, ref, x.ravel(), out.ravel())
        outs.append(out)
    return acc, dtype, outs


def warmup():
    """Compile (or load) every kernel for float32 and float64 now, and wait (the test suite calls this once)."""
    for name in _PYTHON:
        load_now(name)
        for dtype in (np.float32, np.float64):
            one = np.ones(3, dtype)
            args = {"dot": (one, one), "sumsq_double": (one, one.copy()), "abssum_sign": (one, one.copy()),
                    "scale_into": (one, 1.0, one.copy()), "tanh_into": (one, one.copy())}.get(name, (one,))
            run(name, *args)


def signatures():
    """``{kernel: number of compiled specialisations}`` (at most 2 each, by design)."""
    return {name: len(k.signatures) for name, k in _compiled.items() if k is not None}

