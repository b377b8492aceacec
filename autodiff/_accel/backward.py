"""The backward pass with its most common entries inline: per-argument pullbacks or a residual rule, a plain
cotangent.

Plugs in as ``autodiff._backward.run``; the reference is ``autodiff._backward.backward``, whose ``step``
this calls for every other entry.
Off under ``AUTODIFF_REFERENCE=1``.

>>> import autodiff
>>> import autodiff.numpy as anp
>>> autodiff.grad(lambda x: anp.sin(x) * 2.0)(0.0)
2.0
"""

import numpy as np

from .._backward import observers, seeded, step
from .._primitive import ResidualRule, _rules, argument_pullback
from .._tangents import add_tangents

_PLAIN = (np.ndarray, float, np.float64, np.float32)  # cotangents that are neither thunks nor zeros
_INLINE = frozenset((tuple, ResidualRule))  # rules pulled back here: per-argument pullbacks, a residual rule


def backward_unrolled(tape, seeds, free=False):
    """``_backward.backward``, with an entry of per-argument pullbacks or a residual rule pulled back inline (the
    reference's ``step`` takes every other: a joint rule, a thunk or a zero, an observer)."""
    entries, cts = tape.entries, seeded(tape, seeds)
    for i in range(max(seeds, default=-1), -1, -1):
        g, entry = cts[i], entries[i]
        if g is None or entry[0] is None:
            continue
        prim, parents, argnums, ans, args, kwargs = entry
        rule = _rules.get(prim)
        if type(g) not in _PLAIN or observers or type(rule) not in _INLINE:
            step(tape, i, entry, cts, free)
            continue
        cts[i] = None
        if free:
            entries[i] = None
        if type(rule) is ResidualRule:
            _pull_residual(tape, i, rule, g, entry, cts, free)
        elif len(parents) != 1 or argnums[0] >= len(rule):  # several, or one given no pullback (it raises)
            _pull_each(prim, rule, g, entry, cts)
        else:
            c, p = rule[argnums[0]](g, ans, *args, **kwargs), parents[0]
            cts[p] = c if cts[p] is None else add_tangents(cts[p], c)
    return cts


def _pull_each(prim, rule, g, entry, cts):
    """Every traced argument's pullback, added to its parent's cotangent."""
    _, parents, argnums, ans, args, kwargs = entry
    for k, p in zip(argnums, parents):
        c = (rule[k] if k < len(rule) else argument_pullback(prim, rule, k))(g, ans, *args, **kwargs)
        cts[p] = c if cts[p] is None else add_tangents(cts[p], c)


def _pull_residual(tape, i, rule, g, entry, cts, free):
    """A residual rule's cotangents of the traced arguments (a thunk stays a thunk), added to their parents'."""
    _, parents, argnums, ans, args, kwargs = entry
    residuals = tape.residuals.pop(i, None) if free else tape.residuals.get(i)
    all_cts = rule.cotangents(g, residuals, argnums, ans, args, kwargs)
    for k, p in zip(argnums, parents):
        c = all_cts[k]
        cts[p] = c if cts[p] is None else add_tangents(cts[p], c)
