"""A numpy-style positional call to a reduction whose parameters come in another order: named, not misread.

numpy's reductions take ``dtype`` or ``out`` third (``np.sum(a, axis, dtype, out, keepdims)``,
``np.max(a, axis, out, keepdims)``); ours take ``keepdims`` third (``ddof`` for ``var`` and ``std``), ``dtype`` by
keyword where they have it, and no ``out`` (a result is always a new array).  So ``anp.sum(x, 0, None)`` or
``anp.mean(x, 0, np.float32)`` puts numpy's ``dtype`` where ours reads ``keepdims``.  Such a value (``None``, a
dtype, a dtype's name, an array) is never a flag or a count: it is refused naming the function and the fix, where
numpy's own error said "'NoneType' object cannot be interpreted as an integer".  Every other value goes on as
given.

>>> keepdims_given("sum", "dtype", True)
True
>>> keepdims_given("sum", "dtype", None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
TypeError: autodiff.numpy.sum: keepdims must be True or False, got None; numpy's sum takes dtype there...
"""

import numpy as np

_MISPLACED = (type, np.dtype, str, np.ndarray)  # a dtype, its name, or an out= array: numpy's third argument


def keepdims_given(name, numpy_takes, keepdims):
    """``keepdims``, unless it is a value numpy's order put there (see above)."""
    if keepdims is None or isinstance(keepdims, _MISPLACED):
        raise TypeError(f"autodiff.numpy.{name}: keepdims must be True or False, got {keepdims!r}; numpy's {name} "
                        f"takes {numpy_takes} there: {_fix(numpy_takes)}, as {name}(x, axis, keepdims=True)")
    return keepdims


def ddof_given(name, numpy_takes, ddof):
    """``ddof``, unless it is a value numpy's order put there (see above)."""
    if ddof is None or isinstance(ddof, _MISPLACED):
        raise TypeError(f"autodiff.numpy.{name}: ddof must be a number, got {ddof!r}; numpy's {name} "
                        f"takes {numpy_takes} there: {_fix(numpy_takes)}, as {name}(x, axis, ddof=1)")
    return ddof


def method_given(name, method):
    """``method`` of ``quantile`` and ``percentile``, unless it is numpy's ``out`` (``None`` or an array), which
    numpy's order puts there (``np.quantile(a, q, axis, out, overwrite_input, method, keepdims)``)."""
    if method is None or isinstance(method, np.ndarray):
        raise TypeError(f"autodiff.numpy.{name}: method must be a string, got {_shown(method)}; numpy's {name} takes "
                        f"out there: {_fix('out')}, as {name}(x, q, axis, method='linear')")
    return method


def _shown(value):
    return f"an array of shape {value.shape}" if isinstance(value, np.ndarray) else repr(value)


def _fix(numpy_takes):
    if numpy_takes == "out":
        return "ours has no out= (a result is always a new array), so leave it out and pass what follows by keyword"
    return "pass what follows axis by keyword"
