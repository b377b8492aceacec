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
from .._hooks import hooks
from .._traced import Traced
from .._trees import leaves as leaves_of

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


def read_signature(name, args, kwargs, static_argnums, static_argnames, flatten=None):
    """The :class:`Signature` of calling the jitted ``name`` with ``args`` and ``kwargs``.

    ``flatten(argument, path)`` reads each argument's leaves and treedef: ``hooks.flatten`` by default, which
    reads a structure seen before by its compiled layout (the one ``grad`` uses for that argument); its
    reference, ``walk_flatten``, gives the same signature.

    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> read_signature("f", (a, a, 2.0), {}, (), ()).slots  # the same array twice is one input (a tie)
    [0, 0, None]
    """
    statics, dynamic = _static_positions(args, static_argnums)
    static_kw, dynamic_kw = _static_names(kwargs, static_argnames)
    leaves, tree = _flatten_call(flatten or hooks.flatten, dynamic, dynamic_kw)
    distinct, slots, leaf_keys = _read_leaves(name, leaves, lambda i: _leaf_path((tuple(dynamic), dynamic_kw), i))
    # the registries: how trees flatten, and what a grad inside treats as trainable (a change retraces)
    registries = (registry_version(), trainable_filter_version())
    key = (_statics_key(name, statics, static_kw), tree.key(), leaf_keys, registries)
    return Signature(key, leaves, tree, distinct, slots, (statics, static_kw))


def _static_positions(args, static_argnums):
    """``([(position, value)], the arguments with those positions None)``."""
    statics, dynamic = [], list(args)
    for i in static_argnums:
        if -len(args) <= i < len(args):
            i %= len(args)
            statics.append((i, dynamic[i]))
            dynamic[i] = None
    return statics, dynamic


def _static_names(kwargs, static_argnames):
    """``(the static keyword arguments, the others)``."""
    if not (kwargs and static_argnames):
        return {}, kwargs
    return ({k: v for k, v in kwargs.items() if k in static_argnames},
            {k: v for k, v in kwargs.items() if k not in static_argnames})


def _statics_key(name, statics, static_kw):
    """The static arguments' part of the key: by position, then by name in sorted order."""
    if not (statics or static_kw):
        return ()
    key, named = [], [(i, f"args[{i}]", v) for i, v in statics] + [(k, k, v) for k, v in sorted(static_kw.items())]
    for at, path, value in named:
        try:
            key.append((at, _static_key(value)))
        except _Unhashable as bad:
            raise _unhashable(name, path, bad.value) from None
    return tuple(key)


class _CallTree:
    """The treedef of a call's dynamic arguments, ``(args, kwargs)``: each argument's own treedef (positional,
    then keyword in call order), as ``grad`` flattens its arguments one by one."""

    __slots__ = ("parts", "ends", "names")

    def __init__(self, parts, ends, names):
        self.parts, self.ends, self.names = parts, ends, names

    def unflatten(self, leaves):
        values = [t.unflatten(leaves[a:b]) for t, a, b in zip(self.parts, (0, *self.ends), self.ends)]
        n = len(values) - len(self.names)
        return tuple(values[:n]), dict(zip(self.names, values[n:]))

    def key(self):
        return self.names, tuple(t.key() for t in self.parts)


def _flatten_call(flatten, dynamic, dynamic_kw):
    """``(leaves, _CallTree)`` of the dynamic arguments; ``(i,)`` or ``(name,)`` is each one's path (for a
    cycle's error)."""
    leaves, parts, ends = [], [], []
    for path, value in (*enumerate(dynamic), *dynamic_kw.items()):
        got, treedef = flatten(value, (path,))
        leaves += got
        parts.append(treedef)
        ends.append(len(leaves))
    return leaves, _CallTree(parts, ends, tuple(dynamic_kw))


def _read_leaves(name, leaves, path):
    """``(distinct arrays and traced values, per leaf its input's number or None, the leaves' keys)``; ``path(i)``
    names leaf ``i`` in an error.  A dtype is keyed by itself, not its ``str`` (two record dtypes of one size
    share a ``str``)."""
    distinct, slots, keys, index = [], [], [], {}
    for leaf in leaves:
        kind = type(leaf)
        if kind is np.ndarray or kind is Traced:
            k = index.get(id(leaf))
            if k is None:
                k = index[id(leaf)] = len(distinct)
                distinct.append(leaf)
            slots.append(k)
            keys.append((k, leaf.shape, leaf.dtype) if kind is np.ndarray else (k,) + _traced_key(leaf))
        else:
            slots.append(None)
            try:
                keys.append(_static_key(leaf))
            except _Unhashable as bad:
                raise _unhashable(name, path(len(keys)), bad.value) from None
    return distinct, slots, tuple(keys)


def _leaf_path(tree, i):
    """``args[0]['w']``: the key path of leaf ``i`` of ``(args, kwargs)`` (for an error only)."""
    path = leaves_of(tree)[i][0]
    return ("args" if path[0] == 0 else "kwargs") + "".join(f"[{k!r}]" for k in path[1:])


def _traced_key(leaf):
    """A traced value's shape and dtype, and the kinds of the outer levels around it."""
    chain = []
    while type(leaf) is Traced:
        chain.append((type(leaf.tape), leaf.tape.size) if type(leaf.tape) is Batch else type(leaf.tape))
        leaf = leaf.value
    return tuple(chain), np.shape(leaf), np.result_type(leaf)


class _Unhashable(TypeError):
    """A static value that is neither a number nor hashable (the caller names where it was)."""

    def __init__(self, value):
        super().__init__(type(value).__name__)
        self.value = value


def _static_key(value):
    """A static value as part of the key: numbers by type and value (``1``, ``1.0`` and ``True`` differ, and a
    NaN equals itself), anything else by equality, which needs a hash (:class:`_Unhashable` when it has none)."""
    kind = type(value)
    if kind is int or kind is bool:  # the common static leaf (a size, a flag): its value is its key's
        return kind, value
    if isinstance(value, _NUMBERS):
        return kind, repr(value)
    if kind is slice:  # unhashable before Python 3.12
        return slice, tuple(_static_key(v) for v in (value.start, value.stop, value.step))
    try:
        hash(value)
    except TypeError:
        raise _Unhashable(value) from None
    return kind, value


def _unhashable(name, path, value):
    """The error for a static value jit cannot key: ``path`` names it in the call.  A type may say what to do
    instead in a class attribute ``__jit_hint__`` (optimisers' ``Leaf`` does)."""
    hint = getattr(type(value), "__jit_hint__", None)
    return TypeError(
        f"jit({name}): {path} is a {type(value).__name__}, which is neither an array nor hashable, so jit "
        "cannot tell whether a later call may reuse the program traced for this one; "
        + (hint or "pass arrays (or containers of them) as arguments, and a setting as a hashable value (a tuple, "
           "not a list) with static_argnums/static_argnames")
    )
