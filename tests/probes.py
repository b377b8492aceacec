"""Primitives that count how the engine calls their rules, for tests of how many passes a transform makes.

>>> import numpy as np
>>> import autodiff
>>> probe, calls = pullback_counter("probe_doctest")
>>> autodiff.jacobian(lambda x: 2.0 * probe(x))(np.ones(3)).shape, len(calls)
((3, 3), 1)
"""

from autodiff.extend import defbatch, defjvp, defvjp, primitive


def pullback_counter(name):
    """``(probe, calls)``: ``probe`` is the identity, a primitive named ``name`` whose pullback appends to
    ``calls`` each time it runs.  A backward pass through it runs that pullback once, a batched pass once for the
    whole batch, so ``len(calls)`` counts the backward passes that reached it.  It has a JVP and a batching rule
    of its own, so forward mode and ``vmap`` take it without the loop fallback."""
    calls = []
    probe = primitive(lambda x: x + 0.0, name)
    defvjp(probe, lambda g, ans, x: calls.append(1) or g)
    defjvp(probe, lambda t, ans, x: t)
    defbatch(probe, lambda level, args, bdims, kwargs: (probe(args[0]), bdims[0]))
    return probe, calls
