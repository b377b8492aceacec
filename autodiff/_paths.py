"""Key paths, rendered for error messages and listings, and the error every walk raises at a cycle.

A key path is the tuple of keys from a root to a node: dict keys, attribute names, positions.
"""


def dotted(path):
    """A key path as ``.layers[2].weight``: str keys as attributes, ints as positions.

    >>> dotted(("layers", 2, "weight"))
    '.layers[2].weight'
    """
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


def format_path(path):
    """Render a key path like ``[0]['layers'][2].weight`` (first key is the argument).

    >>> format_path((0, 'layers', 2, 'weight'))
    "arg 0: ['layers'][2]['weight']"
    """
    if not path:
        return "the argument"
    head, rest = path[0], path[1:]
    body = "".join(f"[{k!r}]" for k in rest)
    return f"arg {head}: {body}" if body else f"arg {head}"


def cycle_error(where, name=None):
    """The error for a container met again inside itself (``where``: its key path, written out): autodiff's
    trees, traversal's walks and ``optimisers.update`` all refuse cycles with it; ``name`` is the function's.

    >>> raise cycle_error("layers[1]", "optimisers.update")
    Traceback (most recent call last):
    ...
    ValueError: optimisers.update: cycle: the object at layers[1] contains itself; a model must be a tree (ties
    are fine, loops are not)
    """
    who = f"{name}: " if name else ""
    return ValueError(f"{who}cycle: the object at {where} contains itself; a model must be a tree (ties are fine, "
                      "loops are not)")
