"""Arithmetic on structural tangents, leaf by leaf: ``c * g``, ``g / c``, ``-g``, ``g + h``, ``g - h``.

``None`` is the zero tangent: it stays ``None`` when scaled, and ``None + x`` is
``x``.  Sums need the same structure on both sides (the same primal types,
keys and leaf shapes); a mismatch raises with its key path rather than let
numpy broadcast one tangent into another.  The walks iterate, so a tangent of
a model nested 10,000 deep is fine.
"""

import numbers
import sys

import numpy as np

from . import _structural
from ._containers import node_of
from ._paths import dotted
from ._structural import Tangent
from ._tangents import NoTangent, ZeroTangent
from ._traced import value_of
from ._trees import rebuild_node, transform

_ZEROS = (type(None), ZeroTangent, NoTangent)


def scale(g, c, op, fn):
    """``fn(leaf)`` at every leaf of ``g`` that is not ``None``; ``c`` must be a scalar."""
    if not _is_scalar(c):
        raise TypeError(
            f"{_name(g)} {op} {_name(c)}: a tangent can only be scaled by a scalar; "
            "to combine two tangents use + or -, and to scale leaf by leaf use traversal.fmap"
        )
    return transform(g, lambda path, x: x if type(x) in _ZEROS else fn(x), rebuild_node)


def _is_scalar(c):
    v = value_of(c)
    return isinstance(v, (numbers.Number, np.generic)) or (type(v) is np.ndarray and v.ndim == 0)


def negate(g, op):
    """``-g``, leaf by leaf; anything but a ``Tangent`` is returned as it is, for :func:`add` to judge."""
    if type(g) is not Tangent:
        return g
    return scale(g, -1, op, lambda x: -x)


def add(a, b, op):
    """``a + b`` for two tangents of one primal type; ``None`` on either side is zero."""
    if type(a) in _ZEROS or type(b) in _ZEROS:
        return b if type(a) in _ZEROS else a
    if type(a) is not Tangent or type(b) is not Tangent or a.primal_type is not b.primal_type:
        raise TypeError(
            f"{_name(a)} {op} {_name(b)}: both sides must be tangents of the same primal type; "
            "build the other side with autodiff.grad (or Tangent) for the same kind of object"
        )
    return _zip_add(a, b, op)


def _zip_add(a, b, op):
    """Walk ``a`` and ``b`` in step with an explicit stack, adding matching leaves."""
    root = _start(a, b, (), op)
    if type(root) is not _Frame:
        return root
    stack = [root]
    while True:
        frame = stack[-1]
        if len(frame.results) < len(frame.xs):
            k = len(frame.results)
            child = _start(frame.xs[k], frame.ys[k], frame.path + (frame.keys[k],), op)
            if type(child) is _Frame:
                stack.append(child)
            else:
                frame.results.append(child)
            continue
        stack.pop()
        value = frame.node.rebuild(frame.x, frame.results)
        if not stack:
            return value
        stack[-1].results.append(value)


class _Frame:
    __slots__ = ("x", "node", "keys", "xs", "ys", "results", "path")

    def __init__(self, x, node, keys, xs, ys, path):
        self.x, self.node, self.keys, self.xs, self.ys, self.path = x, node, keys, xs, ys, path
        self.results = []


def _start(x, y, path, op):
    """The sum of ``x`` and ``y`` when it is immediate, else a frame to walk their children."""
    if type(x) in _ZEROS or type(y) in _ZEROS:
        return y if type(x) in _ZEROS else x
    nx, ny = node_of(x), node_of(y)
    if nx is None and ny is None:
        return _add_leaves(x, y, path, op)
    if nx is None or ny is None or not _same_type(x, y):
        raise TypeError(f"tangent {op} tangent: at {_where(path)} one side is {_name(x)} and the other {_name(y)}")
    keys, xs = nx.children(x)
    other_keys, ys = ny.children(y)
    if list(keys) != list(other_keys):
        raise TypeError(
            f"tangent {op} tangent: at {_where(path)} one side has keys {list(keys)} "
            f"and the other {list(other_keys)}"
        )
    return _Frame(x, nx, list(keys), list(xs), list(ys), path)


def _same_type(x, y):
    """Two containers of one type (two structural tangents of one primal type)."""
    return type(x) is type(y) and (type(x) is not Tangent or x.primal_type is y.primal_type)


def _add_leaves(x, y, path, op):
    sx, sy = np.shape(value_of(x)), np.shape(value_of(y))
    if sx != sy:
        raise ValueError(
            f"tangent {op} tangent: at {_where(path)} the leaves have shapes {sx} and {sy}; "
            "tangents of one model have the same shape at every leaf"
        )
    return x + y  # a difference arrives here with its right side negated


def _where(path):
    return dotted(path) or "the root"


def _name(x):
    if type(x) is Tangent:
        return f"Tangent[{x.primal_type.__name__}]"
    v = value_of(x)
    if isinstance(v, np.ndarray):
        return f"an array of shape {v.shape}"
    return type(x).__name__


_structural.arithmetic = sys.modules[__name__]  # Tangent's operators call this module's scale, negate and add
