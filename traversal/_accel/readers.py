"""Compiled parameter readers: ``parameters`` for a model structure walked before, without the walk.

A structure walked twice gets a compiled layout (``autodiff``'s, reading only
the children ``trainable`` selects, and checking that selection per instance);
its leaves then go through the same tests as in the walk.  A layout that no
longer fits, or a leaf position now holding a container, sends ``parameters``
back to the generic walk, which compiles the new structure in turn.
"""

import numpy as np

from autodiff._accel.layouts import LayoutCache
from autodiff._for_traversal import registry_version, trainable_filter_version
from autodiff.extend import Traced, is_inexact

from .._trainable import isnumeric, trainable

_readers = LayoutCache(version=lambda: (trainable_filter_version(), registry_version()))  # never stale: see the version


def clear():
    """Forget every reader."""
    _readers.clear()


def read(model):
    """The distinct trainable arrays of ``model`` from a compiled reader, or ``None`` if none fits."""
    for layout in _readers.get(type(model)):
        got = layout.read(model)
        if got is not None:
            found = pick(got[0], layout.leaf_types)
            if found is not None:
                return found
    return None


def pick(values, leaf_types=None):
    """Parameters among the leaf values, each once, in order.  With ``leaf_types``, ``None`` if a leaf that is
    not an array has a type outside them (a compiled reader's leaf position now holds something else)."""
    found, seen = [], set()
    for v in values:
        t = type(v)
        if t is np.ndarray:
            if is_inexact(v.dtype) and id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        elif t is Traced:
            if isnumeric(v) and id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        elif leaf_types is not None and t not in leaf_types:  # a container (or something new) where a leaf was
            return None
    return found


def learn(model, is_customised):
    """After a generic walk: compile ``model``'s structure (reading only trainable children) if its type
    has been walked before."""
    _readers.learn(model, lambda cls: trainable if is_customised(cls) else None)
