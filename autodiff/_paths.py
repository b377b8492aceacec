"""Key paths, rendered for error messages and listings.

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
