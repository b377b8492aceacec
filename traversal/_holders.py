"""Does a function hold traced values?  Asked by ``total`` before it records anything.

``total`` records one tape entry whose parents are the model's parameters.  If
``f`` itself reaches a traced value (a closure cell, a default, a bound
``self``, a ``functools.partial`` argument, a global it names, or anything
inside those), that entry could not see it, so ``total`` takes the generic
path instead, where every op is recorded.

>>> import autodiff
>>> import autodiff.numpy as anp
>>> holds_traced(anp.sin), holds_traced(lambda p: anp.sum(p) * 2.0)
(False, False)
>>> seen = []
>>> _ = autodiff.grad(lambda lam: seen.append(holds_traced(lambda p: lam * p)) or lam)(1.0)
>>> seen
[True]
"""

import functools
import types

import numpy as np

from autodiff.extend import Primitive, Traced

_OPAQUE = (type, types.ModuleType, types.BuiltinFunctionType, Primitive, np.ndarray, np.generic, str, bytes,
           int, float, complex, bool, type(None))


def holds_traced(f):
    """True when ``f`` reaches a traced value without being passed it."""
    seen, stack = set(), [f, *_named_globals(f)]
    while stack:
        x = stack.pop()
        if type(x) is Traced:
            return True
        if id(x) not in seen and not isinstance(x, _OPAQUE):
            seen.add(id(x))
            stack.extend(_held(x))
    return False


def _named_globals(f):
    """The globals ``f``'s own code names (a traced global would be a leak, but total should not hide it)."""
    code, scope = getattr(f, "__code__", None), getattr(f, "__globals__", {})
    return [scope[name] for name in code.co_names if name in scope] if code is not None else []


def _held(x):
    """What ``x`` holds: items of a container, a function's closure and defaults, an object's fields."""
    if isinstance(x, (list, tuple, set, frozenset)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    if isinstance(x, types.FunctionType):
        cells = [c.cell_contents for c in x.__closure__ or () if _filled(c)]
        return cells + list(x.__defaults__ or ()) + list((x.__kwdefaults__ or {}).values())
    if isinstance(x, types.MethodType):
        return [x.__func__, x.__self__]
    if isinstance(x, functools.partial):
        return [x.func, *x.args, *x.keywords.values()]
    return _fields(x)


def _filled(cell):
    try:
        cell.cell_contents  # noqa: B018  (reading it is the test)
    except ValueError:  # a cell not yet assigned
        return False
    return True


def _fields(x):
    """An object's attributes: its ``__dict__`` and its slots."""
    found = list(getattr(x, "__dict__", {}).values())
    for cls in type(x).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(x, name) and name not in ("__dict__", "__weakref__"):
                found.append(getattr(x, name))
    return found
