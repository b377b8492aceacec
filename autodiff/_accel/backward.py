"""The backward pass with its most common entries inline: per-argument pullbacks and a plain cotangent.

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
from .._primitive import _rules
from .._tangents import add_tangents

_PLAIN = (np.ndarray, float, np.float64, np.float32)  # cotangents that are neither thunks nor zeros


def backward_unrolled(tape, seeds, free=False):
    """``_backward.backward``, with an entry of per-argument pullbacks pulled back inline (the reference's ``step``
    takes every other: a joint or residual rule, a thunk or a zero, an argument given no pullback, an observer)."""
    entries, cts = tape.entries, seeded(tape, seeds)
    for i in range(max(seeds, default=-1), -1, -1):
        g, entry = cts[i], entries[i]
        if g is None or entry[0] is None:
            continue
        prim, parents, argnums, ans, args, kwargs = entry
        rule = _rules.get(prim)
        if type(g) not in _PLAIN or observers or type(rule) is not tuple or argnums[-1] >= len(rule):
            step(tape, i, entry, cts, free)
            continue
        cts[i] = None
        if free:
            entries[i] = None
        if len(parents) != 1:
            _pull_each(rule, g, entry, cts)
        else:
            c, p = rule[argnums[0]](g, ans, *args, **kwargs), parents[0]
            cts[p] = c if cts[p] is None else add_tangents(cts[p], c)
    return cts


def _pull_each(rule, g, entry, cts):
    """Every traced argument's pullback, added to its parent's cotangent."""
    _, parents, argnums, ans, args, kwargs = entry
    for k, p in zip(argnums, parents):
        c = rule[k](g, ans, *args, **kwargs)
        cts[p] = c if cts[p] is None else add_tangents(cts[p], c)
