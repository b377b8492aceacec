"""``jit``'s own arguments, checked when it is called: a mistake here is named then, not found as a retrace later.

The function must be callable; ``static_argnums`` an int or ints, ``static_argnames`` a name or names, ``passes``
a name or names of :data:`~autodiff._jit.passes.PASSES`.  Where Python can read the function's parameters (not
every builtin), a static position must be one of them (unless it takes ``*args``), and a static name one of its
parameters (unless it takes ``**kwargs``): a typo would otherwise trace that argument as data, or ignore it.

>>> normalised(lambda x, n: x * n, 1, (), ("dce",))
((1,), (), ('dce',))
>>> normalised(lambda x: x, 1, (), ())  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: jit(<lambda>): static_argnums=(1,) names position 1, but <lambda> takes 1 positional argument (x); ...
"""

import inspect

from .passes import PASSES

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def normalised(fun, static_argnums, static_argnames, passes):
    """``(static_argnums, static_argnames, passes)`` as tuples, after the checks above."""
    name = getattr(fun, "__name__", type(fun).__name__)
    if not callable(fun):
        raise TypeError(f"jit: expected a function to compile, got {type(fun).__name__} {fun!r}; "
                        "use autodiff.jit(f) or @autodiff.jit on a def")
    nums = _tuple_of(static_argnums, int, f"jit({name}): static_argnums", "an int or a tuple of ints")
    names = _tuple_of(static_argnames, str, f"jit({name}): static_argnames", "a name or a tuple of names")
    chosen = _tuple_of(passes, str, f"jit({name}): passes", "a pass name or a tuple of them")
    unknown = [p for p in chosen if p not in PASSES]
    if unknown:
        raise ValueError(f"jit: no pass named {unknown[0]!r}; the passes are {', '.join(PASSES)}")
    parameters = _parameters(fun)
    if parameters is not None:
        _check_positions(name, nums, parameters)
        _check_names(name, names, parameters)
    return nums, names, chosen


def _tuple_of(value, kind, what, expected):
    """``value`` (one ``kind`` or an iterable of them) as a tuple; a TypeError naming ``what`` otherwise."""
    items = (value,) if isinstance(value, kind) else value
    try:
        items = tuple(items)
    except TypeError:
        items = None
    if items is None or not all(isinstance(v, kind) and not isinstance(v, bool) for v in items):
        raise TypeError(f"{what} must be {expected}, got {value!r}")
    return items


def _parameters(fun):
    """``fun``'s parameters, or ``None`` where Python cannot tell them (some builtins and C callables)."""
    try:
        return list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None


def _check_positions(name, nums, parameters):
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return
    positional = [p.name for p in parameters if p.kind in _POSITIONAL]
    for i in nums:
        if not -len(positional) <= i < len(positional):
            taken = f"{len(positional)} positional argument{'s' * (len(positional) != 1)}"
            raise ValueError(f"jit({name}): static_argnums={nums} names position {i}, but {name} takes {taken} "
                             f"({', '.join(positional) or 'none'}); positions count from 0")


def _check_names(name, names, parameters):
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    known = [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    for n in names:
        if n not in known:
            raise ValueError(f"jit({name}): static_argnames={names} names {n!r}, but {name} has no such parameter "
                             f"(its parameters: {', '.join(known) or 'none'})")
