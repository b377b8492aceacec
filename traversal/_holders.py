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


def _function_held(f):
    """A function's closure cells (those assigned), defaults and keyword defaults."""
    cells = [c.cell_contents for c in f.__closure__ or () if _filled(c)]
    return cells + list(f.__defaults__ or ()) + list((f.__kwdefaults__ or {}).values())


def _fields(x):
    """An object's attributes: its ``__dict__`` and its slots."""
    found = list(getattr(x, "__dict__", {}).values())
    for cls in type(x).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(x, name) and name not in ("__dict__", "__weakref__"):
                found.append(getattr(x, name))
    return found


_HOLDERS = {  # a kind of holder -> what it holds; a subclass holds what its base does (the MRO decides)
    list: list, tuple: list, set: list, frozenset: list, dict: lambda d: list(d.values()),
    types.FunctionType: _function_held, types.MethodType: lambda m: [m.__func__, m.__self__],
    functools.partial: lambda p: [p.func, *p.args, *p.keywords.values()],
}


def _held(x):
    """What ``x`` holds: items of a container, a function's closure and defaults, an object's fields."""
    for kind in type(x).__mro__:
        what = _HOLDERS.get(kind)
        if what is not None:
            return what(x)
    return _fields(x)


def _filled(cell):
    try:
        cell.cell_contents  # noqa: B018  (reading it is the test)
    except ValueError:  # a cell not yet assigned
        return False
    return True
