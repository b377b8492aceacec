"""The functor protocol: what a node's children are, and how to rebuild it.

The registry is autodiff's own (``autodiff.extend``), so what traversal can
walk, ``grad`` can differentiate through.
"""

from autodiff._for_traversal import node_of
from autodiff.extend import register_container
from autodiff.extend import register_leaf as _register_leaf

__all__ = ["children", "rebuild", "register", "register_leaf", "leaf", "isleaf"]


def children(x):
    """The children of ``x`` as a dict ``{key: child}``; ``{}`` for a leaf.

    Keys are str for dict keys and attributes, int for sequence positions.

    >>> children({"a": 1, "b": [2, 3]})
    {'a': 1, 'b': [2, 3]}
    >>> children((4, 5))
    {0: 4, 1: 5}
    >>> children(3.0)
    {}
    """
    node = node_of(x)
    if node is None:
        return {}
    keys, values = node.children(x)
    return dict(zip(keys, values))


def rebuild(x, new_children):
    """A new ``x`` with its children replaced, in the same order as :func:`children`.

    >>> rebuild({"a": 1, "b": 2}, {"a": 10, "b": 20})
    {'a': 10, 'b': 20}
    """
    node = node_of(x)
    if node is None:
        raise TypeError(f"rebuild: {type(x).__name__} is a leaf; it has no children to replace")
    values = new_children.values() if isinstance(new_children, dict) else new_children
    return node.rebuild(x, list(values))


def register(cls, children_fn, rebuild_fn):
    """Make ``cls`` walkable (and differentiable by ``autodiff.grad``).

    ``children_fn(x)`` returns a dict of named children (or a sequence);
    ``rebuild_fn(x, kids)`` returns a new object from children of that form.

    >>> class Box:
    ...     def __init__(self, inner):
    ...         self.inner = inner
    >>> _ = register(Box, lambda b: {"inner": b.inner}, lambda b, kids: Box(kids["inner"]))
    >>> children(Box(3.0))
    {'inner': 3.0}
    """
    return register_container(cls, children_fn, rebuild_fn)


def register_leaf(cls):
    """Make ``cls`` a leaf for traversal and autodiff alike (see :func:`leaf`).

    >>> from collections import namedtuple
    >>> Point = register_leaf(namedtuple("Point", "x y"))
    >>> isleaf(Point(1, 2))
    True
    """
    return _register_leaf(cls)


def leaf(cls):
    """Class decorator: instances of ``cls`` are leaves, never looked inside.

    >>> import dataclasses
    >>> @leaf
    ... @dataclasses.dataclass
    ... class Opaque:
    ...     value: float
    >>> isleaf(Opaque(1.0))
    True
    """
    return register_leaf(cls)


def isleaf(x):
    """True when ``x`` has no children to walk into.

    >>> isleaf([1, 2]), isleaf(3.0), isleaf([])
    (False, True, True)
    """
    return not children(x)
