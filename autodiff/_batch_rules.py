"""The one registry of batching rules, and the loop over the batch for a primitive without one.

``_batch_rules`` maps a primitive to ``rule(level, args, bdims, kwargs) -> (out, out_bdim)``.  ``args`` are
the primitive's arguments with this level unwrapped: ``bdims[i]`` is 0 where ``args[i]`` carries the batch
axis (always first) and ``None`` where it is the same for every example.  The rule returns the output with
its batch axis first (``out_bdim`` 0), or ``None`` when the output does not depend on the example.  Rules
call primitives, never numpy, so lower levels (a ``grad`` around the ``vmap``) record as usual.
"""

import warnings
from functools import partial

import numpy as np

from . import _ops
from ._traced import Traced
from ._traced import value_of as _strip

_batch_rules = {}
_warned = set()  # primitives whose loop fallback has warned
_SEQUENCES = (tuple, list)


class BatchingWarning(UserWarning):
    """A primitive without a batching rule ran once per example (register one with ``defbatch``)."""


def batch_rule_of(prim, level, args, kwargs):
    """The batching rule of ``prim`` for this call: its own, or the loop over the batch."""
    rule = _batch_rules.get(prim)
    if rule is not None and not _nested_batched(level, args, kwargs):
        return rule
    if rule is None and prim not in _warned:
        _warned.add(prim)
        warnings.warn(
            f"vmap: {prim.__name__} has no batching rule, so it runs once per example and the results are "
            f"stacked; register one with autodiff.extend.defbatch({prim.__name__}, rule) to batch it",
            BatchingWarning, stacklevel=4,
        )
    return partial(loop, prim)


def _nested_batched(level, args, kwargs):
    """Is a value of ``level`` hidden in a keyword or inside a tuple/list argument (rules see top-level ones)?"""
    stack = [a for a in args if type(a) in _SEQUENCES]
    if kwargs:
        stack.extend(kwargs.values())
    while stack:
        x = stack.pop()
        if type(x) is Traced and x.level == level.level:
            return True
        if type(x) in _SEQUENCES:
            stack.extend(x)
    return False


def loop(prim, level, args, bdims, kwargs):
    """``prim`` once per example, the results stacked along a new axis 0 (tuples part by part)."""
    if level.size == 0:
        return _empty(prim, args, bdims, kwargs), 0
    outs = []
    for i in range(level.size):
        picked = [_pick(a, i, level) if b is None else _ops.getitem(a, i) for a, b in zip(args, bdims)]
        picked_kwargs = {k: _pick(v, i, level) for k, v in kwargs.items()}
        outs.append(prim(*picked, **picked_kwargs))
    if type(_strip(outs[0])) is tuple:
        n = len(_strip(outs[0]))
        parts = [[_part(o, k) for o in outs] for k in range(n)]
        return tuple(_ops.stack(_same_shapes(prim, p)) for p in parts), 0
    return _ops.stack(_same_shapes(prim, outs)), 0


def _same_shapes(prim, outs):
    """``outs``, refused by name when the examples' results differ in shape (a boolean mask keeping a different
    number of entries per example): a batch holds one shape per example, as ``np.stack`` of a loop needs."""
    shapes = [np.shape(_strip(o)) for o in outs]
    if any(shape != shapes[0] for shape in shapes):
        ragged = next(i for i, shape in enumerate(shapes) if shape != shapes[0])
        raise ValueError(
            f"vmap: {prim.__name__} gives results of different shapes for different examples ({shapes[0]} for "
            f"example 0, {shapes[ragged]} for example {ragged}), which no batch can hold: a boolean mask batched by "
            "vmap (x[x > 0]) keeps a different number of entries per example. Keep the shape and mask the values "
            "instead: anp.sum(anp.where(x > 0, x, 0.0)) for anp.sum(x[x > 0])"
        )
    return outs


def _part(out, k):
    return _ops.tuple_item(out, k) if type(out) is Traced else out[k]


def _pick(x, i, level):
    """Example ``i`` of the values of ``level`` inside ``x`` (tuples and lists walked); others as they are."""
    if type(x) is Traced and x.level == level.level:
        return _ops.getitem(x.value, i)
    if type(x) in (tuple, list):
        return type(x)(_pick(v, i, level) for v in x)
    return x


def _empty(prim, args, bdims, kwargs):
    """The loop's result over no examples: ``prim``'s plain forward on one example of zeros tells each
    output's shape and dtype, and 0 of them are stacked.  An op that refuses zeros (a factorisation) cannot
    say, and is refused by name."""
    example = [_zeros(a, b) for a, b in zip(args, bdims)]
    try:
        out = prim.fun(*example, **{k: _strip(v) for k, v in kwargs.items()})
    except Exception as error:
        raise ValueError(
            f"vmap: {prim.__name__} has no batching rule for this call, so it runs once per example, and over an "
            "empty batch (0 examples) one example of zeros could not tell the shape of its result "
            f"({type(error).__name__}: {error}); give it a batching rule with autodiff.extend.defbatch, or skip "
            "the vmap for an empty batch"
        ) from error
    if type(out) is tuple:
        return tuple(_none_of(part) for part in out)
    return _none_of(out)


def _zeros(a, bdim):
    """One example of ``a`` made of zeros (its batch axis dropped), or ``a`` itself stripped when it is shared."""
    from ._batching import example_shape  # _batching imports this module

    if bdim is None:
        return _strip(a) if type(a) is not Traced else np.zeros(example_shape(a), _strip(a).dtype)
    value = _strip(a)
    return np.zeros(example_shape(a)[1:], value.dtype)


def _none_of(out):
    out = np.asarray(out)
    return np.empty((0,) + out.shape, out.dtype)
