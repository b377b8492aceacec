"""Trainability: which leaves are parameters, and which children an optimiser may touch."""

import functools

import numpy as np

from autodiff.extend import value_of

from ._functor import children
from ._keypath import KeyPath

__all__ = ["isnumeric", "trainable", "trainables"]


def isnumeric(x):
    """True for numpy arrays of float or complex dtype (traced or not): the parameters.

    >>> isnumeric(np.ones(2)), isnumeric(np.arange(2)), isnumeric(1.0), isnumeric(np.ones(2) > 0)
    (True, False, False, False)
    """
    v = value_of(x)
    return isinstance(v, np.ndarray) and v.dtype.kind in "fc"


@functools.singledispatch
def trainable(x):
    """The names of ``x``'s trainable children; all of them by default.

    Register a type to restrict it; the result filters, it never reorders:

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Norm:
    ...     gamma: np.ndarray
    ...     beta: np.ndarray
    ...     running_mean: np.ndarray
    >>> @trainable.register(Norm)
    ... def _(layer):
    ...     return ("beta", "gamma")
    >>> trainables(Norm(np.ones(1), np.zeros(1), np.zeros(1)))
    [array([1.]), array([0.])]
    """
    return tuple(children(x))


def _trainable_children(x):
    kids = children(x)
    allowed = trainable(x)
    unknown = [k for k in allowed if k not in kids]
    if unknown:
        raise KeyError(
            f"trainable({type(x).__name__}) names {unknown}, which are not among its children "
            f"{list(kids)}; return names of fields that exist"
        )
    return [(k, v) for k, v in kids.items() if k in allowed]


def trainables(model, path=False):
    """The distinct trainable arrays of ``model`` in traversal order (ties once).

    With ``path=True``, ``(KeyPath, array)`` pairs, the path of each first occurrence.
    Under ``autodiff.grad`` the arrays are the traced leaves themselves, so a
    loss built from them has the structural gradient ``design.md`` fixes:
    the tie's total at its first occurrence, ``None`` at non-trainable fields.

    >>> m1 = np.array([1.0, 2.0])
    >>> trainables({"x": m1, "y": m1, "z": np.arange(3), "w": np.zeros(1)})
    [array([1., 2.]), array([0.])]
    >>> [str(p) for p, _ in trainables({"b": [{"c": m1}]}, path=True)]
    ['b[0].c']
    """
    found, seen = [], set()
    stack = [(KeyPath(), model, [])]
    while stack:
        keypath, node, ancestors = stack.pop()
        if isnumeric(node):
            if id(node) not in seen:
                seen.add(id(node))
                found.append((keypath, node))
            continue
        kids = _trainable_children(node)
        if kids and any(node is a for a in ancestors):
            raise ValueError(f"trainables: cycle at {keypath}: this node contains itself")
        inner = ancestors + [node] if kids else ancestors
        stack.extend((keypath + (k,), v, inner) for k, v in reversed(kids))
    return found if path else [a for _, a in found]
