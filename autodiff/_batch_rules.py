"""The one registry of batching rules, and the loop over the batch for a primitive without one.

``_batch_rules`` maps a primitive to ``rule(level, args, bdims, kwargs) -> (out, out_bdim)``.  ``args`` are
the primitive's arguments with this level unwrapped: ``bdims[i]`` is 0 where ``args[i]`` carries the batch
axis (always first) and ``None`` where it is the same for every example.  The rule returns the output with
its batch axis first (``out_bdim`` 0), or ``None`` when the output does not depend on the example.  Rules
call primitives, never numpy, so lower levels (a ``grad`` around the ``vmap``) record as usual.
"""

import warnings
from functools import partial

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
        raise ValueError(
            f"vmap: {prim.__name__} has no batching rule, so it runs once per example, and over an empty batch "
            "(0 examples) that loop cannot tell the shape of its result; give it a batching rule with "
            "autodiff.extend.defbatch, or skip the vmap for an empty batch"
        )
    outs = []
    for i in range(level.size):
        picked = [_pick(a, i, level) if b is None else _ops.getitem(a, i) for a, b in zip(args, bdims)]
        picked_kwargs = {k: _pick(v, i, level) for k, v in kwargs.items()}
        outs.append(prim(*picked, **picked_kwargs))
    if type(_strip(outs[0])) is tuple:
        n = len(_strip(outs[0]))
        return tuple(_ops.stack([_part(o, k) for o in outs]) for k in range(n)), 0
    return _ops.stack(outs), 0


def _part(out, k):
    return _ops.tuple_item(out, k) if type(out) is Traced else out[k]


def _pick(x, i, level):
    """Example ``i`` of the values of ``level`` inside ``x`` (tuples and lists walked); others as they are."""
    if type(x) is Traced and x.level == level.level:
        return _ops.getitem(x.value, i)
    if type(x) in (tuple, list):
        return type(x)(_pick(v, i, level) for v in x)
    return x
