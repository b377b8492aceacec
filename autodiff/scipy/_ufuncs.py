"""Primitives from scipy's ufuncs (which carry no ``__module__``), named for pickling and reading.

scipy's ufuncs do not always follow numpy's promotion (``gammainc(1.7, float32)`` is float64), so the
result is cast to the floating dtype numpy's rules give the arguments: float32 stays float32.
"""

import numpy as np

from ..extend import primitive


def _promoted(out, args):
    dtype = np.result_type(*args)
    if dtype.kind != "f" or np.result_type(out) == dtype:
        return out
    return np.asarray(out).astype(dtype)[()]


def ufunc_primitive(ufunc, name, module="autodiff.scipy.special"):
    """A primitive calling ``ufunc``; ``module.name`` is where users find it (and pickle finds it)."""

    def fun(*args, **kwargs):
        return _promoted(ufunc(*args, **kwargs), args)

    fun.__name__ = fun.__qualname__ = name
    fun.__module__ = module
    fun.__doc__ = (ufunc.__doc__ or "").strip().split("\n\n")[0]
    return primitive(fun, name)
