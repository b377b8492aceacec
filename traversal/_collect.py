"""``total``'s collectors, as assemblies of walks: distinct trainable parameters, and (parameter, gradient) pairs.

They follow ``trainables``: the one parameter test (``isnumeric``), the one
trainable-child selector (``TrainableWalk``), the one executor (``execute``,
which refuses cycles by key path), ties once, in traversal order.  Faster
twins of both (tight loops, compiled readers) plug in from
:mod:`traversal._accel.collect` unless ``AUTODIFF_REFERENCE=1``; ``total``
calls whichever is installed here as ``parameters`` and ``parameter_pairs``, and so does
``trainables``.

>>> import numpy as np
>>> w = np.ones(2)
>>> reference_parameters({"a": w, "b": [w, np.arange(2)], "c": np.zeros(1)})
[array([1., 1.]), array([0.])]
>>> reference_parameter_pairs({"a": w, "b": [w]}, {"a": np.ones(2), "b": [2 * np.ones(2)]})
[(array([1., 1.]), array([3., 3.]))]
"""

import numpy as np

from autodiff._for_traversal import node_of
from autodiff._hooks import hooks, slot
from autodiff.extend import Traced, ZeroTangent, value_of

from ._trainable import TrainableWalk, isnumeric, trainable_paths
from ._walks import Done, ExcludeWalk, execute


def reference_parameters(model, match=None):
    """Distinct trainable arrays of ``model``, in order; with ``match``, those in (or being) a matching node."""
    if match is None:
        return [a for _, a in trainable_paths(model)]
    found, seen = [], set()

    def inside(path, x):
        for _, p in trainable_paths(x) if match(x) else ():
            if id(p) not in seen:
                seen.add(id(p))
                found.append(p)

    execute(ExcludeWalk(TrainableWalk(), inside, lambda x: isnumeric(x) or match(x)), model)
    return found


def reference_parameter_pairs(model, grads, match=None):
    """``[(x, dx), ...]`` per distinct trainable ``x`` with a gradient; a tie's ``dx`` added up."""
    pairs = _Pairs(match)
    execute(pairs, model, grads)
    return [(x, pairs.dx[id(x)]) for x in pairs.order]


class _Pairs:
    """Walk a model and its gradient in step, adding each parameter's gradient (a tie's summed)."""

    def __init__(self, match, order=None, dx=None):
        self.match, self.order, self.dx = match, [] if order is None else order, {} if dx is None else dx
        self.trainable = TrainableWalk()

    def visit(self, x, ys, path):
        (dx,) = ys
        if dx is None or type(dx) is ZeroTangent:
            return Done(None)
        if self.match is not None and self.match(x):  # everything inside a matching node is kept
            execute(_Pairs(None, self.order, self.dx), x, dx, path=path)
            return Done(None)
        if isnumeric(x):
            if self.match is None:  # (with a match, a parameter outside every matching node is left out)
                self.add(x, _checked_dx(path, x, dx))
            return Done(None)
        if node_of(x) is None:  # a leaf that is no parameter (None, an int, a string): whatever grads holds there
            return Done(None)  # has nothing to pair with, and is skipped, as fmap(f, model, grads) and update skip it
        _check_node(path, x, dx)
        return self.trainable.visit(x, ys, path)

    def add(self, x, dx):
        if id(x) in self.dx:
            self.dx[id(x)] = self.dx[id(x)] + dx
        else:
            self.order.append(x)
            self.dx[id(x)] = dx


def _check_node(path, x, dx):
    """``dx`` must be a container with ``x``'s children, else an error naming the key path and both."""
    if node_of(dx) is None or set(node_of(dx).children(dx)[0]) != set(node_of(x).children(x)[0]):
        raise mismatch(path, x, dx)


def mismatch(path, x, dx):
    """The error for a ``grads`` node at ``path`` that does not mirror the model's container ``x`` (the fast
    collector's too, so that both modes say the same)."""
    node = node_of(dx)
    theirs = f" with children {list(node.children(dx)[0])}" if node is not None else ""
    return ValueError(
        f"total: grads does not match the model at {path}: the model has a {type(x).__name__} there with "
        f"children {list(node_of(x).children(x)[0])}, grads a {type(dx).__name__}{theirs}; pass the structural "
        "gradient of this model (e.g. from autodiff.grad), with None where there is none"
    )


def _checked_dx(path, x, dx):
    """``dx`` if it is an array (or number) of ``x``'s shape; else an error naming the key path and both."""
    v, want = value_of(dx), np.shape(value_of(x))
    if not isinstance(v, (np.ndarray, np.generic, float, int, complex, Traced)):  # Traced: batched by vmap
        raise TypeError(
            f"total: grads has a {type(v).__name__} at {path}, where the model has an array of shape "
            f"{want}; pass the structural gradient of this model (e.g. from autodiff.grad)"
        )
    if np.shape(v) != want:
        raise ValueError(
            f"total: grads at {path} has shape {np.shape(v)}, but the parameter there has shape "
            f"{want}; pass a gradient of the parameter's shape"
        )
    return dx


def path_of(model, leaf, match=None):
    """The key path of the first trainable occurrence of ``leaf`` (for error messages)."""
    for path, x in trainable_paths(model):
        if value_of(x) is value_of(leaf):
            return str(path)
    return "(unknown position)"


slot("parameters", reference_parameters, "total's distinct trainable arrays of a model (the accelerated twin: a "
     "tight loop, or a compiled reader for a structure seen before)")
slot("parameter_pairs", reference_parameter_pairs, "total's (parameter, gradient) pairs (the accelerated twin: "
     "a tight loop)")


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
    if path:
        return trainable_paths(model)
    return hooks.parameters(model)  # the slot above: the reference walk, or traversal._accel's loop
