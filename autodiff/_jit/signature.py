"""A call's signature: what a program traced for one call is valid for.

Two calls share a program when their arguments have the same tree structure, the same ties (which leaf
positions hold the same array object, design.md section 3), the same shape and dtype at every array leaf, the
same levels of outer transforms around every traced leaf, the same container and trainable registries as far as
the types met so far go (a registration that changes how one flattens or which of its children are trainable
traces again; one elsewhere does not), and equal values everywhere else: the static
arguments (``static_argnums``, ``static_argnames``) and every leaf that is not an array.  Python and numpy
numbers are such leaves (static, by type and value), so numpy's dtype promotion of a Python float stays exact;
a 0-d array is traced.
"""

import numpy as np

from .._batching import Batch
from .._containers import registry_version, trainable_filter_version
from .._traced import Traced
from .._trees import leaves as leaves_of
from .._trees import walk_flatten

_NUMBERS = (bool, int, float, complex, np.generic)


class Signature:
    """One call, read: ``key`` (hashable), the dynamic ``leaves``, their ``treedef``, the ``distinct`` arrays
    and traced values among them (the program's inputs, in order) and, per leaf, its input's number
    (``None`` for a static leaf); ``statics`` holds the static arguments, ``([(position, value)], {name: value})``."""

    __slots__ = ("key", "leaves", "treedef", "distinct", "slots", "statics")

    def __init__(self, key, leaves, treedef, distinct, slots, statics):
        self.key, self.leaves, self.treedef = key, leaves, treedef
        self.distinct, self.slots, self.statics = distinct, slots, statics

    def rebuild(self, inputs):
        """``(args, kwargs)`` with each traced leaf replaced by its input in ``inputs``."""
        leaves = [leaf if k is None else inputs[k] for leaf, k in zip(self.leaves, self.slots)]
        args, kwargs = self.treedef.unflatten(leaves)
        (static_args, static_kwargs), args = self.statics, list(args)
        for i, value in static_args:
            args[i] = value
        return args, {**kwargs, **static_kwargs}


def read_signature(name, args, kwargs, static_argnums, static_argnames):
    """The :class:`Signature` of calling the jitted ``name`` with ``args`` and ``kwargs``.

    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> read_signature("f", (a, a, 2.0), {}, (), ()).slots  # the same array twice is one input (a tie)
    [0, 0, None]
    """
    statics, dynamic = [], list(args)
    for i in static_argnums:
        if -len(args) <= i < len(args):
            i %= len(args)
            statics.append((i, dynamic[i]))
            dynamic[i] = None
    static_kw = {k: v for k, v in kwargs.items() if k in static_argnames}
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in static_argnames}
    static_key = tuple((i, _static_key(name, lambda i=i: f"args[{i}]", v)) for i, v in statics)
    static_key += tuple((k, _static_key(name, lambda k=k: k, v)) for k, v in sorted(static_kw.items()))
    leaves, treedef = walk_flatten((tuple(dynamic), dynamic_kw))
    distinct, slots, leaf_keys, index = [], [], [], {}
    for i, leaf in enumerate(leaves):
        if type(leaf) is np.ndarray or type(leaf) is Traced:
            k = index.get(id(leaf))
            if k is None:
                k = index[id(leaf)] = len(distinct)
                distinct.append(leaf)
            slots.append(k)
            leaf_keys.append((k,) + _array_key(leaf))
        else:
            slots.append(None)
            leaf_keys.append(_static_key(name, lambda i=i: _leaf_path((tuple(dynamic), dynamic_kw), i), leaf))
    registries = (registry_version(), trainable_filter_version())  # how trees flatten, what a grad inside treats
    key = (static_key, _tree_key(treedef), tuple(leaf_keys), registries)  # as trainable: a change retraces
    return Signature(key, leaves, treedef, distinct, slots, (statics, static_kw))


def _leaf_path(tree, i):
    """``args[0]['w']``: the key path of leaf ``i`` of ``(args, kwargs)`` (for an error only)."""
    path = leaves_of(tree)[i][0]
    return ("args" if path[0] == 0 else "kwargs") + "".join(f"[{k!r}]" for k in path[1:])


def _array_key(leaf):
    """An array's shape and dtype; a traced value's too, and the kinds of the outer levels around it."""
    if type(leaf) is np.ndarray:
        return leaf.shape, leaf.dtype.str
    chain = []
    while type(leaf) is Traced:
        chain.append((type(leaf.tape), leaf.tape.size) if type(leaf.tape) is Batch else type(leaf.tape))
        leaf = leaf.value
    return tuple(chain), np.shape(leaf), np.result_type(leaf).str


def _static_key(name, path, value):
    """A static value as part of the key: numbers by type and value (``1``, ``1.0`` and ``True`` differ, and a
    NaN equals itself), anything else by equality, which needs a hash; ``path()`` names it in the error."""
    if isinstance(value, _NUMBERS):
        return type(value), repr(value)
    if type(value) is slice:  # unhashable before Python 3.12
        return slice, tuple(_static_key(name, path, v) for v in (value.start, value.stop, value.step))
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"jit({name}): {path()} is a {type(value).__name__}, which is neither an array nor hashable, so jit "
            "cannot tell whether a later call may reuse the program traced for this one; pass arrays (or "
            "containers of them) as arguments, and a setting as a hashable value (a tuple, not a list) with "
            "static_argnums/static_argnames"
        ) from None
    return type(value), value


def _tree_key(treedef):
    """The structure's part of the key: the template (container kinds, their keys, their sizes), with each
    container's exact type."""
    return tuple(op if type(op) is int else (tuple(op[1]), op[2]) for op in treedef.template), tuple(
        type(c) for c in treedef.containers)
