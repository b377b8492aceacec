"""Batching: a third kind of level, beside tapes (reverse mode) and pushforwards (forward mode).

A ``vmap`` opens a :class:`Batch` one level above the innermost open level of
this thread, from the same counter, so it nests with ``grad``, ``jvp`` and
itself without confusing levels.  A *batched value* is a ``Traced`` whose
``tape`` is that Batch: its ``value`` (one level down) carries the batch axis
at position 0, and every view of its shape (``x.shape``, ``shape_of``) drops
that axis, so code inside ``vmap`` sees one example.  A primitive called with
a batched value of the highest level runs its batching rule
(:mod:`autodiff._batch_rules`) on the unwrapped values and wraps the output.
"""

import numpy as np

from ._batch_rules import batch_rule_of
from ._residuals import Like
from ._traced import Traced, _state, close_level, current_level, staging_kinds
from ._tuple_values import with_arrays

_SHAPED = (np.ndarray, Like)


class Batch:
    """One ``vmap``'s level: what a primitive does when its highest-level argument is batched."""

    __slots__ = ("level", "size", "active", "__weakref__")

    def __init__(self, level, size):
        self.level, self.size = level, size
        self.active = True  # false once the vmap returned: a batched value that reaches a primitive has escaped

    def push(self, prim, args, kwargs):
        """``prim(*args, **kwargs)`` for every example at once: its batching rule on the unwrapped values."""
        if observers:  # autodiff.trace is listing the pushes
            return _observed(self, prim, args, kwargs)
        return self.run(prim, args, kwargs)

    def run(self, prim, args, kwargs):
        """:meth:`push` itself, unobserved."""
        if not self.active:
            raise escaped(prim.__name__, self)
        args, kwargs = by_position(prim, args, kwargs)  # rules read operands and required parameters by position
        arrays = with_arrays(prim, self, args)  # a tuple result read as one array: its parts stacked first
        if arrays is not None:
            return prim(*arrays, **kwargs)
        values, bdims = list(args), [None] * len(args)
        for i, a in enumerate(args):
            if type(a) is Traced and a.level == self.level:
                if a.tape is not self:
                    raise escaped(prim.__name__, a.tape)
                values[i], bdims[i] = a.value, 0
        rule = batch_rule_of(prim, self, args, kwargs)
        if self.size:
            result = rule(self, values, bdims, kwargs)
        else:
            result = _over_no_examples(prim, rule, self, values, bdims, kwargs)
        out, bdim = _checked(prim, self, result)
        return out if bdim is None else batched(out, self)


def by_position(prim, args, kwargs):
    """``(args, kwargs)`` with the required parameters given by keyword moved to their positions (a batching
    rule reads its operands and required parameters by position; ``Primitive.positional`` names them).

    >>> from autodiff.numpy import roll
    >>> by_position(roll, (1.0,), {"shift": 2, "axis": None})
    ([1.0, 2], {'axis': None})
    """
    names = getattr(prim, "positional", ())
    if not kwargs or len(args) >= len(names) or names[len(args)] not in kwargs:
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for name in names[len(args):]:
        if name not in kwargs:
            break
        args.append(kwargs.pop(name))
    return args, kwargs


observers = []  # callables (level, prim, args, kwargs) -> None or a callable given the result; autodiff.trace's


def _observed(level, prim, args, kwargs):
    """A push told to each observer, before (its answer) and after (the result)."""
    after = [observe(level, prim, args, kwargs) for observe in observers]
    result = level.run(prim, args, kwargs)
    for done in after:
        if done is not None:
            done(result)
    return result


def _over_no_examples(prim, rule, level, values, bdims, kwargs):
    """A batching rule over an empty batch, or, when it cannot run on 0 examples (scipy refuses empty stacks),
    what the loop over no examples gives: one example's result shapes, 0 of them (issue 36: a batch of 0 works
    wherever a batch of 1 does)."""
    from ._batch_rules import loop  # _batch_rules imports this module

    try:
        return rule(level, values, bdims, kwargs)
    except (ValueError, IndexError, TypeError):
        return loop(prim, level, values, bdims, kwargs)


def _checked(prim, level, result):
    """A batching rule's ``(out, batch axis)``, refused when it is no pair or ``out`` holds another number of
    examples than the vmap (a user's ``defbatch`` rule that drops an example or moves the batch axis)."""
    if type(result) is not tuple or len(result) != 2:
        raise TypeError(
            f"vmap: the batching rule of {prim.__name__} returned a {type(result).__name__}, not the pair (out, "
            "batch axis); return (out, 0) with one entry per example along axis 0 of out, or (out, None) when "
            "out is the same for every example"
        )
    size = _leading_size(result[0]) if result[1] is not None else None
    if size is not None and size != level.size:
        raise ValueError(
            f"vmap: the batching rule of {prim.__name__} returned {size} entries along the batch axis, but the "
            f"vmap has {level.size} examples; a rule returns (out, 0) with axis 0 holding one entry per example"
        )
    return result


def _leading_size(out):
    """The length of the axis a rule's ``out`` holds this level's examples along (``None`` for a tuple or no
    such axis): axis 0 below the batch axes of the levels out is batched at already."""
    depth = 0
    while type(out) is Traced:
        depth += type(out.tape) is Batch
        out = out.value
    shape = out.shape if type(out) is np.ndarray else ()
    return shape[depth] if len(shape) > depth else None


def batch_through(fun):
    """The batching rule of a primitive whose forward ``fun`` is written in primitives itself: ``fun`` on the
    arguments batched again at this level, so each op inside batches by its own rule (no loop over examples).

    >>> import numpy as np
    >>> import autodiff, autodiff.numpy as anp
    >>> from autodiff.extend import defbatch, primitive
    >>> square_sum = primitive(lambda x: anp.sum(x * x), "square_sum")
    >>> defbatch(square_sum, batch_through(square_sum.fun))
    >>> autodiff.vmap(square_sum)(np.arange(4.0).reshape(2, 2))
    array([ 1., 13.])
    """

    def rule(level, args, bdims, kwargs):
        out = fun(*[a if b is None else batched(a, level) for a, b in zip(args, bdims)], **kwargs)
        return (out.value, 0) if type(out) is Traced and out.tape is level else (out, None)

    return rule


class open_batch:
    """Context manager: open a batching level of ``size`` examples above the innermost open level."""

    __slots__ = ("level", "size")

    def __init__(self, size):
        self.size = size

    def __enter__(self):
        self.level = Batch(current_level() + 1, self.size)
        _state.level = self.level.level
        return self.level

    def __exit__(self, kind, value, traceback):
        close_level(self.level, value)
        return False


def batched(value, level):
    """The batched value whose examples lie along axis 0 of ``value``, at ``level`` (a :class:`Batch`).

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> with open_batch(3) as level:
    ...     x = batched(np.arange(6.0).reshape(3, 2), level)
    ...     y = anp.sum(x * 2.0)  # one example's sum, for every example
    ...     x.shape, y.shape
    ((2,), ())
    >>> y.value
    array([ 2., 10., 18.])
    """
    return Traced(value, level, None, level.level)


def is_batched(x):
    """Is ``x`` a batched value (of any open ``vmap``)?"""
    return type(x) is Traced and type(x.tape) is Batch


def batch_depth(x):
    """How many batch axes lead the innermost value of ``x`` (one per Batch level on its chain)."""
    n = 0
    while type(x) is Traced:
        if type(x.tape) is Batch:
            n += 1
        x = x.value
    return n


def keep_batches(x):
    """``x`` with every differentiation level stripped but its batch levels kept.

    Rules read values (masks, shapes) without their derivatives; under a
    ``vmap`` those values still differ per example, so they stay batched.
    """
    levels = []
    while type(x) is Traced:
        if type(x.tape) in staging_kinds:  # jit's level: its program records the strip of the levels below
            x = x.tape.kept(x)
            break
        if type(x.tape) is Batch:
            levels.append(x.tape)
        x = x.value
    return _rebatched(x, levels)


def escaped(name, level):
    """The error for a batched value used after its ``vmap`` returned."""
    return RuntimeError(
        f"vmap: {name} got a batched value from a vmap (level {level.level}) that has already returned. "
        "A value batched inside vmap escaped it, e.g. through a global, a closure or a list kept "
        "outside; return it from the vmapped function instead (out_axes says where its batch axis goes)"
    )


def example_shape(x):
    """The shape of one example of ``x``: its innermost value's, without the batch axes leading it."""
    depth = 0
    while type(x) is Traced:
        if type(x.tape) is Batch:  # its batch axis leads the value below: not part of an example's shape
            depth += 1
        x = x.value
    if type(x) is tuple and depth:  # a primitive's several outputs, each with the batch axes in front
        return _tuple_shape(x, depth)
    shape = x.shape if type(x) in _SHAPED else np.shape(x)  # a Like: what a tape entry keeps of an array
    return shape[depth:] if depth else shape


def _tuple_shape(parts, depth):
    """The shape of one example of a tuple result read as one array (numpy's ``np.shape`` of the tuple)."""
    shapes = [np.shape(part)[depth:] for part in parts]
    if len(set(shapes)) > 1:
        raise ValueError(
            f"the result of a primitive with several outputs (slogdet, eigh, svd, ...) has no shape as one "
            f"array: its parts have different shapes ({', '.join(map(str, shapes))}) (numpy refuses it too); "
            "take the shape of a part: w, v = anp.linalg.eigh(a), then w.shape"
        )
    return (len(parts),) + shapes[0]


def like_batches_of(x, value):
    """``value`` (whose leading axes are the batch axes of ``x``, outer first) batched as ``x`` is."""
    return _rebatched(value, _batch_levels(x)[0])


def _batch_levels(x):
    """``(the vmap levels x is batched at, outer first; x's innermost plain value)``."""
    levels = []
    while type(x) is Traced:
        if type(x.tape) is Batch:
            levels.append(x.tape)
        x = x.value
    return levels, x


def _rebatched(value, levels):
    """``value`` wrapped as a batched value at each of ``levels`` (outer first), innermost first."""
    for level in reversed(levels):
        value = batched(value, level)
    return value
