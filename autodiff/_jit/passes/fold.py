"""Constant folding: an equation whose operands are all constants is computed once, by the pass, and its value
becomes a constant operand of the equations (and output leaves) that read it.

One forward sweep: each equation's operands are first rewritten through the values folded so far, so a chain of
constant computations folds whole.  The trace already computes a call on constants only when it is made (the
staging level runs it at once, see :mod:`autodiff._jit.staging`), so a traced program holds no such equation
at first: they appear where another rewrite turned a value into a constant.

What is not folded: a call that draws random numbers (:mod:`.purity`), whose draw must happen on every run; a
call that raises, which stays to raise on every run as the function itself does; and a value larger than
:data:`MAX_BYTES`.  A folded value lives as long as the program (replay frees a value after its last use), so
a large one would hold its memory between calls; computed on each run, it is freed as the function frees it.
A folded array is added to the program's ``captured``: ``jit`` keeps it read-only while the program is cached,
as it does the arrays the function captured (``docs/jit.md`` §4), so no caller can change a constant of the
program (a constant output leaf is copied on each call anyway).
"""

import numpy as np

from ..program import Var
from .purity import pure

MAX_BYTES = 1 << 20  # a folded value's size at most (1 MiB): a larger one is computed on every run


def fold(program):
    """The program with each equation on constants computed, its value a constant of its readers.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> from autodiff._jit.program import Var
    >>> program = autodiff.jit(lambda x, y: anp.sin(anp.exp(y)) * x, passes=()).lower(np.ones(2), np.zeros(2))
    >>> bound = program.replace([e._replace(operands=(np.zeros(2),)) if e.operands[0].ref == 1 else e
    ...                          for e in program.equations])  # y bound to zeros: exp and sin read constants
    >>> print(fold(bound))
    program <lambda>
      in  %0:float64[2]  %1:float64[2]
      %4 = multiply([0.8415, 0.8415], %0) -> float64[2]
      out %4
    """
    folded, kept, captured = {}, [], list(program.captured)  # value -> its constant
    for eq in program.equations:
        if folded:
            eq = eq._replace(operands=tuple(_folded(a, folded) for a in eq.operands))
        value = _value(eq)
        if value is _KEEP:
            kept.append(eq)
            continue
        folded[eq.out] = value
        captured.extend(_arrays(value))
    if not folded:
        return program
    outputs = [_folded(o, folded) for o in program.outputs]
    return program.replace(kept, outputs=outputs, captured=captured)


_KEEP = object()  # what _value gives for an equation that stays


def _value(eq):
    """The equation's value, computed now, or ``_KEEP``."""
    if Var in map(type, eq.operands) or not pure(eq):
        return _KEEP
    try:
        value = eq.prim.fun(*eq.operands, **eq.kwargs)
    except Exception:  # noqa: BLE001 (any error: the equation stays, to raise on every run as the function does)
        return _KEEP
    return value if sum(a.nbytes for a in _arrays(value)) <= MAX_BYTES else _KEEP


def _folded(a, folded):
    return folded.get(a.ref, a) if type(a) is Var else a


def _arrays(value):
    """The arrays in a value (a primitive's value is an array, a scalar, or a tuple of them)."""
    parts = value if type(value) is tuple else (value,)
    return [p for p in parts if type(p) is np.ndarray]
