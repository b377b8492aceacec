"""Shared batching rules: each op file registers one of these (``defbatch(prim, rule)``) under its rules.

A rule gets the arguments with its level unwrapped and their batch dims
(``0``: the batch axis leads; ``None``: shared by every example) and returns
``(output, 0)`` with the batch axis leading.  The rules call primitives, so a
``grad`` or ``jvp`` around the ``vmap`` records or pushes as usual; shapes are
read with ``shape_of``, which already hides every *other* ``vmap``'s axis.
"""

import functools
import inspect

import numpy as np

from .._batch_rules import loop
from .._batching import Batch, batch_depth, like_batches_of
from .._batching import example_shape as _example_shape
from .._traced import staging_kinds
from ..extend import Traced, plain_value

shape_of = _example_shape  # one example's shape (hides every vmap's axis), as ``_broadcast.shape_of``


def example_shape(a, bdim):
    """The shape of one example of ``a`` (its batch axis dropped)."""
    shape = shape_of(a)
    return shape if bdim is None else shape[1:]


def resolved(shape, example):
    """``shape`` (a reshape's target) with its ``-1`` worked out for one example of shape ``example``.

    Batched, the target gains the batch size in front; a ``-1`` left in it would be worked out from the
    whole batch's size, which an empty batch (0 examples) leaves undetermined.  A shape numpy would refuse
    is returned as it is, for numpy to refuse.

    >>> resolved((-1, 2), (3, 4))
    (6, 2)
    """
    shape = tuple(int(s) for s in shape)
    known = int(np.prod([s for s in shape if s != -1]))
    if shape.count(-1) != 1 or known <= 0 or int(np.prod(example)) % known:
        return shape
    return tuple(int(np.prod(example)) // known if s == -1 else s for s in shape)


def flat(x, level):
    """Batched ``x`` with each example flattened: ``(batch, size of one example)``, an empty batch included."""
    from ._shape import reshape

    return reshape(x, (level.size, int(np.prod(example_shape(x, 0)))))


def _rank(a, bdim):
    if isinstance(a, (np.ndarray, np.generic, Traced)):
        return len(example_shape(a, bdim))
    return 0  # a Python number, a dtype, None: a scalar


def align(a, rank):
    """Batched ``a`` with size-1 axes after its batch axis, so its example has ``rank`` axes (numpy's
    broadcasting lines up the rest from the right)."""
    from ._shape import reshape

    shape = shape_of(a)
    missing = rank - (len(shape) - 1)
    return a if missing <= 0 else reshape(a, shape[:1] + (1,) * missing + shape[1:])


def elementwise(prim):
    """The rule of a broadcasting elementwise op: batched arguments aligned to the widest example, then
    ``prim`` on them, whose broadcasting does the rest."""

    def rule(level, args, bdims, kwargs):
        rank = max(_rank(a, b) for a, b in zip(args, bdims))
        moved = [a if b is None else align(a, rank) for a, b in zip(args, bdims)]
        return prim(*moved, **kwargs), 0

    return rule


def first_only(prim, rule):
    """``rule`` for ops whose later arguments are static (shapes, axes): a batched later one runs the loop;
    an unbatched first one (only a later one batched) too."""

    def checked(level, args, bdims, kwargs):
        if bdims[0] is None or any(b is not None for b in bdims[1:]):
            return loop(prim, level, args, bdims, kwargs)
        return rule(level, args, bdims, kwargs)

    return checked


def shift(axis, ndim):
    """An example's ``axis`` (an int, a tuple, or ``None`` for all) as axes of the batched value."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % ndim + 1 for a in axis)
    return int(axis) % max(ndim, 1) + 1


@functools.cache
def _signature(fun):
    return inspect.signature(fun)


def _bound(prim, args, kwargs):
    """The call's arguments by name (``sum(x, 0)`` and ``sum(x, axis=0)`` alike)."""
    signature = _signature(prim.fun)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    named = {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        else:
            named[name] = value
    return named


def reduction(prim, flatten_none=False):
    """The rule of a reduction of its first argument along ``axis`` (``keepdims`` kept as given).

    ``axis=None`` means every axis of one example, or, with ``flatten_none`` (``cumsum``, ``argsort``),
    the flattened example.
    """

    def rule(level, args, bdims, kwargs):
        named = _bound(prim, args, kwargs)
        names = list(named)
        x = named.pop(names[0])
        ndim = len(example_shape(x, 0))
        if named.get("axis") is None and flatten_none:
            x, named["axis"] = flat(x, level), 1
        else:
            named["axis"] = shift(named.get("axis"), ndim)
        return prim(x, **named), 0

    return first_only(prim, rule)


def along(prim, default=-1):
    """The rule of an op along one ``axis`` of its first argument (softmax): the axis shifted past the batch."""

    def rule(level, args, bdims, kwargs):
        named = _bound(prim, args, kwargs)
        names = list(named)
        x = named.pop(names[0])
        named["axis"] = shift(named.get("axis", default), len(example_shape(x, 0)))
        return prim(x, **named), 0

    return first_only(prim, rule)


def whole(prim):
    """The rule of an op that maps stacks of matrices (or of anything) over leading axes: the batch axis
    is one more leading axis.  For ops of one batched argument (``inv``, ``eigh``, ``svd``)."""

    def rule(level, args, bdims, kwargs):
        return prim(*args, **kwargs), 0

    return first_only(prim, rule)


def loop_rule(prim):
    """The loop over the batch, registered on purpose (ops that cannot batch: ragged outputs)."""
    return lambda level, args, bdims, kwargs: loop(prim, level, args, bdims, kwargs)


def fold_leading(prim, shape_at=None, arrays=1):
    """The rule of an op that maps its first argument's leading axis (images in a batch: ``conv2d``, ``im2col``):
    the vmap's batch folds into that axis and unfolds from the output's.  ``shape_at`` names an argument giving
    the output's full shape (``col2im``), whose leading size grows by the batch.  ``arrays`` says how many
    leading arguments are such stacks (``pool_gather(h, x, ...)``: two); one shared by every example is
    broadcast along the batch first.  A later argument batched runs the loop."""

    def rule(level, args, bdims, kwargs):
        from ._shape import reshape

        if any(b is not None for b in bdims[arrays:]):
            return loop(prim, level, args, bdims, kwargs)
        args, examples = list(args), []
        for i in range(arrays):
            a = args[i] if bdims[i] is not None else _broadcast_batch(args[i], level.size)
            shape = shape_of(a)
            examples.append((shape[1:], a))
            args[i] = reshape(a, (shape[0] * shape[1],) + shape[2:])
        lead = None
        if shape_at is not None:
            full = tuple(args[shape_at])
            args[shape_at], lead = (level.size * full[0],) + full[1:], full[0]
        out = prim(*args, **kwargs)
        shape = shape_of(out)
        if lead is None:
            lead = shape[0] // level.size if level.size else _one_examples_lead(prim, examples, args, kwargs)
        return reshape(out, (level.size, lead) + shape[1:]), 0

    return rule


def _one_examples_lead(prim, examples, args, kwargs):
    """The output's leading size for one example, for an empty batch (there is no B·N to divide by B):
    ``prim``'s plain forward run on one example of zeros (``im2col``'s rows are not its images)."""
    from .._traced import value_of as strip_all
    from ._broadcast import dtype_of

    zeros = [np.zeros(shape, dtype_of(a)) for shape, a in examples]
    rest = [strip_all(a) for a in args[len(examples):]]
    return shape_of(prim.fun(*zeros, *rest, **kwargs))[0]


def _broadcast_batch(a, size):
    """``a``, the same for every example, with a leading batch axis of ``size``."""
    from ._broadcast import broadcast_to

    return broadcast_to(a, (size,) + shape_of(a))


def per_example(fn, x, axis=None):
    """``fn(plain x)`` for a value read without its derivatives (a mask, a permutation), per example under
    ``vmap``: every level stripped, ``fn`` run on the whole batch (``axis``, one example's axis, shifted past
    the batch axes), and the result batched again.  ``fn(v)`` or ``fn(v, axis)``.

    >>> import numpy as np
    >>> per_example(np.argsort, np.array([3.0, 1.0, 2.0]), -1)
    array([1, 2, 0])
    """
    depth = batch_depth(x)
    v = plain_value(x)  # a read of the data: a jit tracing x notes it (its program would bake fn's result in)
    if axis is None:
        return like_batches_of(x, fn(v)) if depth else fn(v)
    return like_batches_of(x, fn(v, int(axis) % (np.ndim(v) - depth) + depth)) if depth else fn(v, axis)


def over_example_axes(fn, x, axis):
    """``fn(plain x, axes)`` per example under ``vmap``, for an ``fn`` reducing or scanning ``axes``: one
    example's ``axis`` (an int, a tuple, or ``None`` for all of them) as a tuple shifted past the batch axes.

    >>> over_example_axes(lambda v, axes: v.sum(axes), np.ones((2, 3)), None)
    np.float64(6.0)
    """
    depth, v = batch_depth(x), plain_value(x)  # a read of the data, noted by a jit tracing x
    ndim = np.ndim(v) - depth
    axes = tuple(range(ndim)) if axis is None else tuple(int(a) % ndim for a in np.atleast_1d(axis))
    out = fn(v, tuple(a + depth for a in axes))
    return like_batches_of(x, out) if depth else out


def differentiated(x):
    """Does ``x`` carry a level of differentiation (a tape's, a pushforward's), not only ``vmap``'s batches or
    ``jit``'s staging (which differentiates nothing: ``jit(grad(f))`` is first order, as ``grad(f)`` is)?"""
    while type(x) is Traced:
        if type(x.tape) is not Batch and type(x.tape) not in staging_kinds:
            return True
        x = x.value
    return False
