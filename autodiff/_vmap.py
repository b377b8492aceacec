"""``vmap``: a function of one example, run on a batch of them at once.

The arguments' batch axes (``in_axes``) are moved first and the arguments
wrapped as batched values of a new :class:`~autodiff._batching.Batch` level;
every primitive the function calls then runs its batching rule once for the
whole batch.  The outputs' batch axes go where ``out_axes`` says.
"""

import functools

import numpy as np

from . import _ops
from ._batching import batched, example_shape, open_batch
from ._paths import format_path
from ._traced import Traced
from ._trees import leaves, rebuild_node, transform
from ._vjp import split_tuple_outputs


def vmap(f, in_axes=0, out_axes=0, axis_size=None):
    """``f`` mapped over a batch axis of its arguments: ``vmap(f)(xs)[i] == f(xs[i])``, in one call.

    ``in_axes`` is an int (the batch axis of every array leaf; negative counts
    from the end), ``None`` (not batched), or a tuple with one entry per
    positional argument, each an int, ``None`` or a structure mirroring that
    argument (a dict for a dict, and so on).  Keyword arguments are mapped
    along axis 0 of every leaf, as in JAX (``in_axes`` names positional ones
    only; close over one the same for every example).  ``out_axes`` says the
    same of the output.  ``axis_size`` gives the batch size when no argument is
    batched: an int, 0 included.
    It nests with itself and with ``grad``, ``vjp``, ``jvp`` and ``hvp`` in
    any order: ``vmap(grad(loss), in_axes=(None, 0, 0))(w, X, Y)`` gives
    per-example gradients.

    >>> import numpy as np
    >>> import autodiff, autodiff.numpy as anp
    >>> vmap(lambda x, w: anp.dot(x, w), in_axes=(0, None))(np.ones((3, 2)), np.arange(2.0))
    array([1., 1., 1.])
    >>> vmap(autodiff.grad(lambda w, x: anp.sum(w * x) ** 2), in_axes=(None, 0))(np.ones(2), np.eye(2))
    array([[2., 0.],
           [0., 2.]])
    >>> vmap(lambda x: x.sum(), in_axes=1)(np.ones((2, 3)))
    array([2., 2., 2.])
    >>> vmap(lambda x, scale=1.0: x * scale, in_axes=None)(np.ones(2), scale=np.arange(3.0))
    array([[0., 0.],
           [1., 1.],
           [2., 2.]])
    """
    if not callable(f):
        raise TypeError(f"vmap: expected a function to map, got {type(f).__name__}; pass the function first")
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    _check_axis_size(axis_size)

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        inputs = _batched_leaves(args, in_axes)
        inputs.update(_keyword_leaves(kwargs))
        size = _batch_size(inputs, axis_size)
        with open_batch(size) as level:
            args, kwargs = _substitute(args, kwargs, inputs, level)
            out = split_tuple_outputs(f(*args, **kwargs))
        return _outputs(out, out_axes, level)

    return mapped


def _check_spec(spec, name):
    for path, axis in leaves(spec):
        if axis is not None and not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(
                f"vmap: {name} must be an int, None or a structure of them, but has {axis!r} at "
                f"{_place(name, path) if path else 'the top'}; give the batch axis as an int, or None for none"
            )


def _check_axis_size(axis_size):
    """``axis_size`` is ``None`` or a number of examples: an int, 0 included (an empty batch, as a batched
    argument of 0 examples gives)."""
    if axis_size is None:
        return
    if not isinstance(axis_size, (int, np.integer)) or isinstance(axis_size, (bool, np.bool_)):
        raise TypeError(f"vmap: axis_size must be an int (the number of examples), got {axis_size!r} of type "
                        f"{type(axis_size).__name__}; pass an int, or None to take it from the batched arguments")
    if axis_size < 0:
        raise ValueError(f"vmap: axis_size must be the number of examples, 0 or more, got {axis_size}")


def _axes_for(spec, args, name):
    """``{leaf path: axis}`` for every leaf of ``args`` (a tuple), reading ``spec`` as a prefix of it."""
    if spec is None or isinstance(spec, (int, np.integer)):
        return lambda path: spec
    if name == "in_axes":
        if type(spec) not in (tuple, list) or len(spec) != len(args):
            raise ValueError(
                f"vmap: in_axes must be an int, None or a tuple with one entry per positional argument; got "
                f"{_describe(spec)} for {len(args)} argument(s). Give one entry per argument, e.g. "
                f"in_axes={tuple([0] * len(args))}"
            )
    table = dict(leaves(spec))

    def axis(path):
        for n in range(len(path), -1, -1):
            if path[:n] in table:
                return table[path[:n]]
        raise ValueError(
            f"vmap: {name} does not mirror the {'arguments' if name == 'in_axes' else 'output'}: nothing in it "
            f"covers the leaf at {_place(name, path)}; give a structure like the "
            f"{'argument' if name == 'in_axes' else 'output'}, or one int (or None) for a whole subtree"
        )

    return axis


def _describe(spec):
    return f"a {type(spec).__name__} of length {len(spec)}" if type(spec) in (tuple, list) else repr(spec)


def _batched_leaves(args, in_axes):
    """``{path: (leaf, axis, its size)}`` for every leaf given a batch axis (an argument whose ``in_axes``
    entry is ``None``, a model beside the data, is not walked)."""
    axis_of = _axes_for(in_axes, args, "in_axes")
    found = {}
    for i, arg in enumerate(args):
        if type(in_axes) in (tuple, list) and in_axes[i] is None:
            continue
        for path, leaf in leaves(arg, (i,)):
            axis = axis_of(path)
            if axis is not None and leaf is not None:  # None holds nothing to batch (a gradient's empty slot)
                found[path] = (leaf, *_normalised(leaf, axis, path))
    return found


def _keyword_leaves(kwargs):
    """``{path: (leaf, 0, its size)}`` for every leaf of the keyword arguments: JAX maps them along axis 0."""
    found = {}
    for name, value in kwargs.items():
        for path, leaf in leaves(value, (name,)):
            if leaf is not None:
                found[path] = (leaf, *_normalised(leaf, 0, path))
    return found


def _normalised(leaf, axis, path):
    shape, giver = _shape(leaf), "in_axes gives" if _positional(path) else _KEYWORDS
    fix = "in_axes None" if _positional(path) else "it positionally with in_axes None, or close over it"
    if shape is None or not shape:
        raise ValueError(
            f"vmap: {giver} the {'scalar' if shape == () else type(leaf).__name__} at {_leaf_name(path)} "
            f"the batch axis {axis}, but it has no axes; pass {fix} (the same for every example)"
        )
    if not -len(shape) <= axis < len(shape):
        raise ValueError(
            f"vmap: {giver} the array at {_leaf_name(path)} (shape {shape}) the batch axis {axis}, which "
            f"it does not have; give an axis in [{-len(shape)}, {len(shape)})"
        )
    return int(axis) % len(shape), shape[int(axis)]


_KEYWORDS = "keyword arguments are mapped along axis 0 (in_axes names positional ones only), which gives"


def _positional(path):
    return type(path[0]) is not str  # a keyword argument's leaves sit under its name


def _leaf_name(path):
    """An argument's leaf: ``arg 0: ['w']`` for a positional argument, ``keyword argument scale`` for another."""
    if _positional(path):
        return format_path(path)
    return f"keyword argument {path[0]}" + "".join(f"[{k!r}]" for k in path[1:])


def _shape(x):
    if isinstance(x, (np.ndarray, np.generic, Traced)):
        return example_shape(x)
    return () if isinstance(x, (int, float, complex)) else None


def _batch_size(inputs, axis_size):
    sizes = {path: n for path, (_, _, n) in inputs.items()}
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap: no argument is batched (in_axes is None for all), so the batch size is "
                             "unknown; pass axis_size=n")
        return int(axis_size)
    first = next(iter(sizes))
    for path, n in sizes.items():
        if n != sizes[first]:
            raise ValueError(
                f"vmap: batch sizes differ: the leaf at {_leaf_name(first)} has {sizes[first]} examples along "
                f"its batch axis, the leaf at {_leaf_name(path)} has {n}; give every batched argument the "
                "same batch size (or in_axes None for one that is shared)"
            )
    if axis_size is not None and axis_size != sizes[first]:
        raise ValueError(f"vmap: axis_size={axis_size} but the batched arguments have {sizes[first]} examples "
                         f"(the leaf at {_leaf_name(first)}); drop axis_size or make them agree")
    return sizes[first]


def _substitute(args, kwargs, inputs, level):
    """``args`` and ``kwargs`` with each batched leaf replaced by a batched value (one per distinct array: ties
    stay tied)."""
    made = {}

    def leaf_fn(path, leaf):
        if path not in inputs:
            return leaf
        _, axis, _ = inputs[path]
        key = (id(leaf), axis)
        if key not in made:
            made[key] = batched(_move(leaf, axis, 0), level)
        return made[key]

    walked = {path[0] for path in inputs}  # the arguments with a batched leaf: the others stay as they are
    args = tuple(transform(a, leaf_fn, rebuild_node, (i,)) if i in walked else a for i, a in enumerate(args))
    return args, {k: transform(v, leaf_fn, rebuild_node, (k,)) if k in walked else v for k, v in kwargs.items()}


def _move(x, source, destination):
    """``x`` with axis ``source`` moved to ``destination``: numpy's for a plain array, the primitive if traced."""
    if source == destination:
        return x
    return np.moveaxis(x, source, destination) if type(x) is np.ndarray else _ops.moveaxis(x, source, destination)


def _outputs(out, out_axes, level):
    axis_of = _axes_for(out_axes, out, "out_axes")

    def leaf_fn(path, leaf):
        return _output_leaf(leaf, axis_of(path), level, path)

    return transform(out, leaf_fn, rebuild_node)


def _output_leaf(leaf, axis, level, path):
    mine = type(leaf) is Traced and leaf.tape is level
    if axis is None:
        if mine:
            raise ValueError(
                f"vmap: out_axes is None at {_at(path)}, but that output differs between examples; give it a "
                "batch axis in out_axes (an int), or return something the same for every example there"
            )
        return leaf
    shape = _shape(leaf)
    if not mine:  # the same for every example here (batched by an outer vmap, perhaps): broadcast
        if shape is None:
            return leaf  # not an array (a string, a function)
        leaf = _ops.broadcast_to(leaf, (level.size,) + shape)
    else:
        leaf = leaf.value
    ndim = len(shape) + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap: out_axes puts the batch axis of {_at(path)} at axis {axis}, but with the batch it "
                         f"has {ndim} axes; give an axis in [{-ndim}, {ndim})")
    axis %= ndim
    return _move(leaf, 0, axis)


def _place(name, path):
    """Where ``path`` points, in the words of ``name``'s side: an argument's leaf, or a part of the output."""
    return format_path(path) if name == "in_axes" else _at(path)


def _at(path):
    return "output" + "".join(f"[{k!r}]" for k in path)
