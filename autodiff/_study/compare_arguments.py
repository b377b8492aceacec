"""The arguments :func:`autodiff.compare` differentiates: the float and complex leaves of ``*args``, however nested.

Every system is run on the same flat list of leaves (each leaf its own variable, a tied array included), and
each system's gradient, one array per leaf, is put back into the arguments' own structure: a dict stays a
dict, a tuple a tuple, a dataclass the same dataclass with its fields holding gradients.  Leaves that are not
float or complex (ints, bools, strings, integer arrays) are held as constants and get ``None``.
"""

import numpy as np

from .._arguments import is_differentiable
from .._trees import leaves as _paths_and_leaves
from .._trees import walk_flatten


class Arguments:
    """``args`` flattened: ``values`` (the differentiable leaves, as numpy), ``names`` (``x0['w']``), and how to
    rebuild ``args`` from new leaves (:meth:`call`) or a gradient in their structure (:meth:`structure`).

    With ``ties`` (design.md section 3) one numpy array at several positions of one argument is one variable:
    it is listed once, at its first position, every system gets one array of its own at all of them (so its
    gradient is the sum of the uses), and the gradient's other positions are ``None``, as ``grad`` gives.
    ``ties`` lists them, ``[[first name, other name, ...]]``.  Without, each position is its own variable."""

    def __init__(self, args, ties=True):
        self.args = tuple(args)
        self.leaves, self.treedef = walk_flatten(self.args)
        paths = [path for path, _ in _paths_and_leaves(self.args)]
        self.which, self.tied = _variables(self.leaves, paths, ties)
        self.values = [_plain(self.leaves[k]) for k in self.which]
        self.names = [_name(paths[k]) for k in self.which]
        groups = {}
        for k, first in self.tied.items():
            groups.setdefault(first, [_name(paths[first])]).append(_name(paths[k]))
        self.ties = list(groups.values())

    def call(self, fn, xs):
        """``fn(*args)`` with the differentiable leaves replaced by ``xs`` (one system's arrays)."""
        return fn(*self.rebuild(xs))

    def rebuild(self, xs, constants=True):
        """The arguments with ``xs`` at the differentiable leaves, and the constants (or ``None``) elsewhere."""
        full = list(self.leaves) if constants else [None] * len(self.leaves)
        for k, x in zip(self.which, xs):
            full[k] = x
        for k, first in self.tied.items():  # one variable: the same array at each position (None in a gradient)
            full[k] = full[first] if constants else None
        return self.treedef.unflatten(full)

    def structure(self, flat):
        """One entry per argument, in its structure, with ``flat`` at the differentiable leaves and ``None``
        at the constants; ``None`` stays ``None`` (no ``H v`` asked for)."""
        return None if flat is None else self.rebuild(flat, constants=False)


def _variables(leaves, paths, ties):
    """``(which, tied)``: the leaf numbers that are variables, and ``{later position: first position}`` of each
    numpy array met again within the same argument (by identity; scalars are values, never tied)."""
    which, tied, first = [], {}, {}
    for k, leaf in enumerate(leaves):
        if not is_differentiable(leaf):
            continue
        key = (paths[k][0], id(leaf))
        if ties and isinstance(leaf, np.ndarray) and key in first:
            tied[k] = first[key]
            continue
        first.setdefault(key, k)
        which.append(k)
    return which, tied


def _plain(leaf):
    """A leaf as numpy: Python scalars stay Python scalars (so each system sees what the user passed)."""
    return leaf.copy() if isinstance(leaf, np.ndarray) else leaf.item() if isinstance(leaf, np.generic) else leaf


def _name(path):
    head, rest = path[0], path[1:]
    return f"x{head}" + "".join(f"[{k!r}]" for k in rest)


def check(arguments, asked, what):
    if not arguments.values:
        given = ", ".join(type(a).__name__ for a in arguments.args) or "nothing"
        raise TypeError(f"compare: no float or complex argument to differentiate (given {given}); pass floats, "
                        "float arrays, or structures holding them")
    complex_leaves = [n for n, x in zip(arguments.names, arguments.values) if np.iscomplexobj(x)]
    if complex_leaves and asked is not False and asked is not None:
        raise TypeError(f"compare: {what} with complex arguments ({', '.join(complex_leaves)}) is not supported; "
                        f"compare the gradient ({what}=False), or pass the real and imaginary parts as two real "
                        "arguments")


def direction_of(asked, arguments, what):
    """The direction of ``H v`` or ``J v`` (``what``), one numpy array per differentiable leaf, or ``None``."""
    if asked is False or asked is None:
        return None
    if asked is True:
        return [np.ones_like(np.asarray(x, float)) for x in arguments.values]
    v = asked if isinstance(asked, tuple) else (asked,)
    if len(v) != len(arguments.args):
        raise ValueError(f"compare: {what} gives {len(v)} direction(s) for {len(arguments.args)} argument(s); "
                         "give one each")
    leaves = Arguments(v).leaves
    if len(leaves) != len(arguments.leaves):
        raise ValueError(f"compare: {what}'s directions are not in the arguments' structure; give one direction "
                         f"per float leaf ({', '.join(arguments.names)}), in the same containers")
    return [np.asarray(leaves[k], float) for k in arguments.which]
