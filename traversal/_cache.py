"""The one place that decides sharing: an identity cache and its predicate.

Mutable leaves (numpy arrays) and mutable containers are cached by identity,
so a tied array or a layer used twice is visited once and its result reused.
Immutable values (numbers, strings, tuples, frozen dataclasses) are not: two
equal numbers are not a tie.
"""

import functools
import types

import numpy as np

from autodiff.extend import Traced

_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset, range, np.generic)
_FUNCTIONS = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, np.ufunc, functools.partial, type,
)


def usecache(x):
    """True when ``x`` is shared by identity: arrays, traced values and mutable containers.

    >>> usecache(np.ones(2)), usecache([1]), usecache((1,)), usecache(3.0), usecache(len)
    (True, True, False, False, False)
    """
    if isinstance(x, (np.ndarray, Traced, list, dict, set)):
        return True
    if isinstance(x, _IMMUTABLE) or isinstance(x, _FUNCTIONS):
        return False
    params = getattr(type(x), "__dataclass_params__", None)
    if params is not None:
        return not params.frozen
    return hasattr(x, "__dict__") or hasattr(type(x), "__slots__")


class IdentityCache:
    """``id(x) -> (x, result)``: keeps its keys alive so ids are never reused while it lives.

    >>> cache, key = IdentityCache(), np.ones(1)
    >>> cache.put(key, "seen")
    >>> key in cache, cache.get(key), np.ones(1) in cache
    (True, 'seen', False)
    """

    __slots__ = ("_store",)

    def __init__(self):
        self._store = {}

    def get(self, x, default=None):
        hit = self._store.get(id(x))
        return default if hit is None else hit[1]

    def __contains__(self, x):
        return id(x) in self._store

    def put(self, x, result):
        self._store[id(x)] = (x, result)


__all__ = ["usecache", "IdentityCache"]
