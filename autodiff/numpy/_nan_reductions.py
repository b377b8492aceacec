"""Reductions that skip NaNs: ``nansum``, ``nanprod``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanmax``,
``nanmin``, ``nancumsum`` and ``nancumprod``.

Each replaces the NaNs with the reduction's neutral element (``where`` on a mask read off the plain values)
and reduces with our op, so a NaN entry gets no cotangent and every other entry the derivative of the
reduction over the entries that are numbers.  A slice of NaNs alone gives what numpy gives (``0`` for a sum,
``nan`` and numpy's warning for a mean, a variance, a maximum).

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda x: nanmean(x))(np.array([1.0, np.nan, 3.0]))
array([0.5, 0. , 0.5])
"""

import warnings

import numpy as np

from ..extend import plain_value, surely, value_of
from ._arraylike import as_array
from ._binary import maximum
from ._construction import astype
from ._elementwise import divide, subtract, where
from ._nondiff import NONDIFF
from ._numpy_order import ddof_given, keepdims_given
from ._reductions import _float_dtype, abs_squared, cumprod, cumsum, max, min, prod, root, sum


def _filled(a, neutral):
    """``a`` (as an array) with its NaNs replaced by ``neutral``, and the mask of its NaNs."""
    a = as_array(a)
    nan = NONDIFF["isnan"](value_of(a))
    return where(nan, neutral, a), nan


def _count(nan, axis, keepdims):
    """How many numbers (not NaNs) each slice holds, a plain (or batched) integer array."""
    return sum(NONDIFF["logical_not"](nan), axis=axis, keepdims=keepdims)


def nansum(a, axis=None, dtype=None, keepdims=False):
    """The sum of the entries that are not NaN.

    >>> nansum(np.array([1.0, np.nan]))
    np.float64(1.0)
    """
    return sum(_filled(a, 0)[0], axis=axis, dtype=dtype, keepdims=keepdims_given("nansum", "out", keepdims))


def nanprod(a, axis=None, keepdims=False):
    """The product of the entries that are not NaN.

    >>> nanprod(np.array([2.0, np.nan, 3.0]))
    np.float64(6.0)
    """
    return prod(_filled(a, 1)[0], axis=axis, keepdims=keepdims_given("nanprod", "dtype", keepdims))


def nancumsum(a, axis=None):
    """The running sum, NaNs counted as 0.

    >>> nancumsum(np.array([1.0, np.nan, 2.0]))
    array([1., 1., 3.])
    """
    return cumsum(_filled(a, 0)[0], axis=axis)


def nancumprod(a, axis=None):
    """The running product, NaNs counted as 1.

    >>> nancumprod(np.array([2.0, np.nan, 3.0]))
    array([2., 2., 6.])
    """
    return cumprod(_filled(a, 1)[0], axis=axis)


def _warn_if_empty(count, what):
    if np.any(plain_value(count) == 0):
        warnings.warn(f"{what} of a slice of NaNs alone", RuntimeWarning, stacklevel=3)


def _real(count, a):
    """``count`` in ``a``'s real floating dtype (float64 for an integer ``a``), so a float32 mean stays float32."""
    return astype(count, np.finfo(_float_dtype(a)).dtype)


def nanmean(a, axis=None, keepdims=False):
    """The mean of the entries that are not NaN (``nan`` for a slice of NaNs alone, as numpy's).

    >>> nanmean(np.array([[1.0, np.nan], [2.0, 4.0]]), axis=1)
    array([1., 3.])
    """
    keepdims = keepdims_given("nanmean", "dtype", keepdims)
    filled, nan = _filled(a, 0)
    count = _count(nan, axis, keepdims)
    _warn_if_empty(count, "Mean")
    with np.errstate(invalid="ignore", divide="ignore"):
        return divide(sum(filled, axis=axis, keepdims=keepdims), _real(count, filled))


def nanvar(a, axis=None, ddof=0, keepdims=False):
    """The variance of the entries that are not NaN, ``ddof`` as numpy's.

    >>> nanvar(np.array([1.0, np.nan, 3.0]))
    np.float64(1.0)
    """
    ddof, keepdims = ddof_given("nanvar", "dtype", ddof), keepdims_given("nanvar", "out", keepdims)
    filled, nan = _filled(a, 0)
    dof = maximum(_count(nan, axis, keepdims) - ddof, 0)
    _warn_if_empty(dof, "Degrees of freedom <= 0 for the variance")
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = divide(sum(filled, axis=axis, keepdims=True), _real(_count(nan, axis, True), filled))
        centred = where(nan, 0, subtract(filled, mean))
        return divide(sum(abs_squared(centred), axis=axis, keepdims=keepdims), _real(dof, filled))


def nanstd(a, axis=None, ddof=0, keepdims=False):
    """The standard deviation of the entries that are not NaN (``sqrt(nanvar)``).

    >>> nanstd(np.array([1.0, np.nan, 3.0]))
    np.float64(1.0)
    """
    ddof, keepdims = ddof_given("nanstd", "dtype", ddof), keepdims_given("nanstd", "out", keepdims)
    return root(nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


def _none(v):
    return not np.any(v)


def _extreme(reduce, fill, name):
    def extreme(a, axis=None, keepdims=False):
        keepdims = keepdims_given(name, "out", keepdims)
        filled, nan = _filled(a, fill)
        out, empty = reduce(filled, axis=axis, keepdims=keepdims), NONDIFF["equal"](_count(nan, axis, keepdims), 0)
        if surely(_none, empty):
            return out
        if surely(np.any, empty):  # known to hold (not under jit, where the program serves every call)
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
        return where(empty, np.nan, out)

    extreme.__name__ = name
    return extreme


nanmax = _extreme(max, -np.inf, "nanmax")
nanmax.__doc__ = """The maximum of the entries that are not NaN (ties share the derivative, as ``max``).

>>> nanmax(np.array([1.0, np.nan, 3.0]))
np.float64(3.0)
"""
nanmin = _extreme(min, np.inf, "nanmin")
nanmin.__doc__ = """The minimum of the entries that are not NaN (ties share the derivative, as ``min``).

>>> nanmin(np.array([1.0, np.nan, 3.0]))
np.float64(1.0)
"""
