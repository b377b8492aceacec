"""The examples doctest would not find by itself.

doctest collects functions, classes and primitives (a primitive is ``__wrapped__`` around its function),
but a distribution family is an instance, so its docstring runs through its module's ``__test__``.
"""

import inspect


def doctests_of(namespace, names):
    """``{name: docstring}`` for the objects among ``names`` that doctest does not collect (once each).

    >>> class Doc:
    ...     '''>>> 1 + 1
    ...     2'''
    >>> list(doctests_of({"f": len, "p": Doc()}, ["f", "p"]))
    ['p']
    """
    found, seen = {}, set()
    for name in names:
        obj = namespace[name]
        collected = inspect.isroutine(inspect.unwrap(obj)) or inspect.isclass(obj)
        if not collected and obj.__doc__ and id(obj) not in seen:
            found[name] = obj.__doc__
            seen.add(id(obj))
    return found
