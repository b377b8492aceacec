"""Dead-code elimination: drop the equations whose values no output needs.

Primitives are pure functions of their operands, so an equation nothing reads can go.  One backward sweep
from the outputs marks what is live; no recursion.  (A primitive that draws random numbers from a generator it
is given advances that generator only when its value is used, once this pass has run.)
"""

from ..program import Var


def dce(program):
    """The program without the equations no output depends on.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> def f(x):
    ...     unused = anp.exp(x)
    ...     return anp.sin(x)
    >>> [e.prim.__name__ for e in autodiff.jit(f, passes=()).lower(np.zeros(2)).equations]
    ['exp', 'sin']
    >>> [e.prim.__name__ for e in dce(autodiff.jit(f, passes=()).lower(np.zeros(2))).equations]
    ['sin']
    """
    return program.replace(needed(program.equations, program.outputs))


def needed(equations, outputs):
    """The equations ``outputs`` need, in order: one backward sweep marking what is live."""
    live, kept = {o.ref for o in outputs if type(o) is Var}, []
    for eq in reversed(equations):
        if eq.out in live:
            kept.append(eq)
            live.update(a.ref for a in eq.operands if type(a) is Var)
    kept.reverse()
    return kept
