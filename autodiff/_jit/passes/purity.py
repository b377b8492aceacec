"""Which equations the rewriting passes (:mod:`.cse`, :mod:`.fold`) may merge or compute ahead.

Primitives are pure functions of their operands, so two equal calls give one value and a call on constants
gives the same value at trace time as on every run.  Not so for a call that draws random numbers: two draws
must stay two, and a draw on every run must not become one draw at trace time.  Such a call is recognised
by data, never by name: its primitive is marked with :func:`autodiff.extend.effectful` (the registry
``autodiff._primitive._effects``), or an operand or keyword argument is a numpy random generator.  No built-in
primitive draws: ``autodiff.numpy.random`` is numpy's own module and the ``scipy.stats`` samplers are plain
functions, both run once, at trace time, on plain values (``docs/jit.md`` §4).
"""

import numpy as np

from ..._primitive import _effects

GENERATORS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def pure(equation):
    """May the passes merge this equation with an equal one, or compute it ahead?

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> from autodiff.extend import primitive
    >>> noisy = primitive(lambda x, rng: x + rng.standard_normal(np.shape(x)), name="noisy")
    >>> program = autodiff.jit(lambda x: noisy(anp.sin(x), np.random.default_rng(0)), passes=()).lower(np.zeros(2))
    >>> [pure(e) for e in program.equations]
    [True, False]
    """
    if equation.prim in _effects:
        return False
    return not any(isinstance(a, GENERATORS) for a in (*equation.operands, *equation.kwargs.values()))
