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
    rebuild ``args`` from new leaves (:meth:`call`) or a gradient in their structure (:meth:`structure`)."""

    def __init__(self, args):
        self.args = tuple(args)
        self.leaves, self.treedef = walk_flatten(self.args)
        self.which = [k for k, leaf in enumerate(self.leaves) if is_differentiable(leaf)]
        self.values = [_plain(self.leaves[k]) for k in self.which]
        paths = [path for path, _ in _paths_and_leaves(self.args)]
        self.names = [_name(paths[k]) for k in self.which]

    def call(self, fn, xs):
        """``fn(*args)`` with the differentiable leaves replaced by ``xs`` (one system's arrays)."""
        return fn(*self.rebuild(xs))

    def rebuild(self, xs, constants=True):
        """The arguments with ``xs`` at the differentiable leaves, and the constants (or ``None``) elsewhere."""
        full = list(self.leaves) if constants else [None] * len(self.leaves)
        for k, x in zip(self.which, xs):
            full[k] = x
        return self.treedef.unflatten(full)

    def structure(self, flat):
        """One entry per argument, in its structure, with ``flat`` at the differentiable leaves and ``None``
        at the constants; ``None`` stays ``None`` (no ``H v`` asked for)."""
        return None if flat is None else self.rebuild(flat, constants=False)


def _plain(leaf):
    """A leaf as numpy: Python scalars stay Python scalars (so each system sees what the user passed)."""
    return leaf.copy() if isinstance(leaf, np.ndarray) else leaf.item() if isinstance(leaf, np.generic) else leaf


def _name(path):
    head, rest = path[0], path[1:]
    return f"x{head}" + "".join(f"[{k!r}]" for k in rest)
