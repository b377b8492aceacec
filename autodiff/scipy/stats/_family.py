"""A distribution family as a namespace of functions (``norm.logpdf``), as in ``scipy.stats``.

Python numbers among the arguments (defaults included) take the floating dtype of the array
arguments before the formula runs: ``log(scale)`` of a Python ``1.0`` would otherwise be a float64
scalar and widen a float32 log-density.
"""

import functools
import inspect

import numpy as np

from ...numpy._broadcast import dtype_of
from .._real import refuse_complex
from ._support import checked


def _floating(values):
    arrays = [dtype_of(v) for v in values if v is not None and type(v) not in (bool, int, float)]
    dtypes = [d for d in arrays if d.kind == "f"]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _typed(fun, qualified, params):
    """``fun`` with its Python-number arguments cast to the floating dtype of its array arguments (a complex
    argument is refused, naming ``qualified``), and its invalid parameters giving NaN (``_support.checked``)."""
    signature = inspect.signature(fun)
    judged = checked(fun, params)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        refuse_complex(qualified, *bound.arguments.values())
        dtype = _floating(bound.arguments.values())
        for name, v in bound.arguments.items():
            if type(v) in (int, float):
                bound.arguments[name] = dtype.type(v)
        return judged(**bound.arguments)

    return call


class Family:
    """Named functions of one family; asking for a missing one names what the family has.

    ``params`` maps parameter names to a ``_support.Parameter`` (what is valid, and a valid stand-in): every
    method then gives NaN where one is invalid.  ``rvs``, when given, is the family's sampler, kept as it is.

    >>> import numpy as np
    >>> half_normal = Family("half_normal", logpdf=lambda x: np.log(2.0) - x * x / 2 - np.log(2 * np.pi) / 2)
    >>> round(float(half_normal.logpdf(0.0)), 4)
    -0.2258
    >>> half_normal.cdf
    Traceback (most recent call last):
    ...
    AttributeError: autodiff.scipy.stats.half_normal has no 'cdf'; it has logpdf. Use scipy.stats.half_normal.cdf \
on plain values (no gradient)
    """

    def __init__(self, name, params=None, rvs=None, **methods):
        self._name = name
        self._methods = dict(methods, **({"rvs": rvs} if rvs else {}))
        for key, fun in methods.items():
            typed = _typed(fun, f"autodiff.scipy.stats.{name}.{key}", params or {})
            typed.__name__, typed.__qualname__ = key, f"{name}.{key}"
            setattr(self, key, typed)
        if rvs is not None:
            self.rvs = rvs

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        raise AttributeError(
            f"autodiff.scipy.stats.{self._name} has no {key!r}; it has {', '.join(self._methods)}. "
            f"Use scipy.stats.{self._name}.{key} on plain values (no gradient)"
        )

    def __repr__(self):
        return f"<autodiff.scipy.stats.{self._name}: {', '.join(self._methods)}>"
