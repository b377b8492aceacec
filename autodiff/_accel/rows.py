"""Reductions along a short last axis in one compiled loop over the rows: jit's forms of ``sum``, ``softmax`` and
``log_softmax`` there (:mod:`.specialise` gives them to a program's equations).

numpy reduces a C-ordered array along its last axis one row at a time, a call of its inner loop per row, so on many
short rows the calls cost more than the arithmetic: on 128 rows of 10 float32 values ``np.sum(x, axis=1)`` took
5.3 µs, ``np.max(x, axis=1)`` 9.2 and the reference ``log_softmax`` 20.5, against 1.1 µs for one numba loop over
every row (AMD EPYC, Zen 3, 2026-12-07).  Here the rows' sums and maxima are such loops, and ``softmax`` and
``log_softmax`` use them beside numpy's vectorised ``exp`` and ``log`` (numba's scalar ``exp`` is not vectorised:
all in one loop, the same ``log_softmax`` took 8.7 µs).

The arithmetic is the reference's except the order of each row's sum: a row is summed left to right in float64
(float32 rows too, then rounded once), within jit's promise of 1e-12 (float64) and 1e-6 (float32) relative to the
result's scale for rows of at most :data:`ROW_LIMIT` values, beyond which numpy's own loop is fast anyway.  A
row's maximum is numpy's, a NaN included.  The kernels compile on a form's :data:`COMPILE_AFTER`-th call (before,
and with numba off, the reference runs).

>>> import numpy as np
>>> x = np.array([[1.0, 2.0, 3.0], [0.0, np.nan, 1.0]])
>>> row_sums(x), row_maxes(x)
(array([ 6., nan]), array([ 3., nan]))
"""

import numpy as np

from .numba_jit import Kernel, readonly

ROW_LIMIT = 256  # values per row up to which a row's sum runs here
COMPILE_AFTER = 10  # a form's calls on the reference before its kernel compiles (fused.py's tiers)


def _sums(x, out):
    for i in range(x.shape[0]):
        total = 0.0  # float64, whatever x's dtype
        for j in range(x.shape[1]):
            total += x[i, j]
        out[i] = total


def _maxes(x, out):
    for i in range(x.shape[0]):
        top = x[i, 0]
        for j in range(1, x.shape[1]):
            v = x[i, j]
            if v > top or v != v:  # a NaN wins and stays, as in numpy
                top = v
        out[i] = top


def _signature(t, d):
    return t.void(readonly(t, d, 2), t.Array(d, 1, "C"))


_SUMS, _MAXES = Kernel(_sums, _signature), Kernel(_maxes, _signature)


def row_sums(x):
    """The sums of ``x`` (float32 or float64, at least one axis) along its last axis, as ``np.sum(x, axis=-1)``."""
    return _rowwise(_SUMS, np.sum, x) if x.shape[-1] else np.zeros(x.shape[:-1], x.dtype)


def row_maxes(x):
    """The maxima of ``x`` (float32 or float64, a last axis of at least one value) along its last axis."""
    return _rowwise(_MAXES, np.max, x)


def _rowwise(kernel, twin, x):
    """``kernel`` over the rows of ``x`` (numpy's ``twin`` reduction when numba is off): an array of
    ``x.shape[:-1]``."""
    rows = x.reshape(-1, x.shape[-1])
    compiled = kernel.compiled(x.dtype)
    if compiled is None:
        return twin(x, axis=-1)
    out = np.empty(len(rows), x.dtype)
    compiled(rows, out)
    return out.reshape(x.shape[:-1])


def log_softmax_rows(x):
    """``log_softmax(x, axis=-1)``: ``x`` shifted by its rows' maxima, less the log of the rows' sums of ``exp``."""
    shifted = np.subtract(x, row_maxes(x)[..., None])
    lse = np.log(row_sums(np.exp(shifted)))
    return np.subtract(shifted, lse[..., None], out=shifted)


def softmax_rows(x):
    """``softmax(x, axis=-1)``: ``exp`` of ``x`` shifted by its rows' maxima, over the rows' sums."""
    e = np.exp(np.subtract(x, row_maxes(x)[..., None]))
    return np.divide(e, row_sums(e)[..., None], out=e)


class Tiered:
    """``fast`` on a form's calls from its :data:`COMPILE_AFTER`-th on, ``reference`` before (a program run once
    pays no compilation)."""

    def __init__(self, fast, reference):
        self.fast, self.reference, self.calls = fast, reference, 0

    def __call__(self, *args, **kwargs):
        if self.calls < COMPILE_AFTER:
            self.calls += 1
            return self.reference(*args, **kwargs)
        return self.fast(*args)
