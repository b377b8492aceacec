"""Algebraic simplification: a ``negative`` read by one ``add``, ``subtract`` or ``multiply`` by a number is
absorbed into it.

Pullbacks negate: the pullback of ``p - lr * g`` with respect to ``g`` is ``multiply(negative(ct), lr)``, so
MAML's meta-gradient, which pulls back through every inner step, holds 120 ``negative`` equations among 1,883.
Each rule below gives bitwise the value it replaces (IEEE negation is exact, and the rounding of a sum or a
product does not depend on the operands' signs or order), so the pass runs in both modes:

- ``add(a, negative(b))`` and ``add(negative(b), a)`` become ``subtract(a, b)``;
- ``subtract(a, negative(b))`` becomes ``add(a, b)``;
- ``multiply(negative(x), c)`` and ``multiply(c, negative(x))``, ``c`` a float, become ``multiply(x, -c)``.

A rule applies only to a ``negative`` of a real float array (:func:`_real_float` says why) whose value has no other
reader and is not an output, so ``dce`` then drops it. Under an outer transform (``grad(jit(f))``) the rewritten
primitives' pullbacks are the same arithmetic, so gradients agree to the last bit too. (NaN's sign bit may differ,
which no comparison sees.)
"""

from collections import Counter

import numpy as np

from ...numpy import _elementwise as e
from ..program import Aval, Equation, Var

_NUMBERS = (float, np.floating)  # an int 0 has no sign: -x * 0 and x * -0 differ in the sign of zero


def simplify(program):
    """The program with each ``negative`` that one reader can absorb absorbed.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> program = autodiff.jit(lambda x, y: (x + -y) * 2.0 + -(x * y) * 0.5, passes=()).lower(np.ones(2), np.ones(2))
    >>> print(program)
    program <lambda>
      in  %0:float64[2]  %1:float64[2]
      %2 = negative(%1) -> float64[2]
      %3 = add(%0, %2) -> float64[2]
      %4 = multiply(%3, 2.0) -> float64[2]
      %5 = multiply(%0, %1) -> float64[2]
      %6 = negative(%5) -> float64[2]
      %7 = multiply(%6, 0.5) -> float64[2]
      %8 = add(%4, %7) -> float64[2]
      out %8
    >>> print(simplify(program))
    program <lambda>
      in  %0:float64[2]  %1:float64[2]
      %2 = negative(%1) -> float64[2]
      %3 = subtract(%0, %1) -> float64[2]
      %4 = multiply(%3, 2.0) -> float64[2]
      %5 = multiply(%0, %1) -> float64[2]
      %6 = negative(%5) -> float64[2]
      %7 = multiply(%5, -0.5) -> float64[2]
      %8 = add(%4, %7) -> float64[2]
      out %8
    """
    negated, readers = _negations(program), _readers(program)
    single = {ref: operand for ref, operand in negated.items() if readers.get(ref) == 1}
    if not single:
        return program
    return program.replace([_absorbed(eq, single) for eq in program.equations])


def _negations(program):
    """value -> the operand it negates, for every plain ``negative`` equation of a real float array."""
    return {eq.out: eq.operands[0] for eq in program.equations
            if eq.prim is e.negative and len(eq.operands) == 1 and not eq.kwargs
            and _real_float(program.avals[eq.out])}


def _real_float(aval):
    """Only real floats: a complex product's signed zeros, an unsigned negation's wrap or a Python int's zero
    (``-x * 0`` is ``-0.0``, ``x * -0`` is ``0.0``) could differ in a bit."""
    return type(aval) is Aval and aval.shape is not None and np.dtype(aval.dtype).kind == "f"


def _readers(program):
    """value -> how many times it is read (an output leaf counts as a reader)."""
    operands = [a for eq in program.equations for a in eq.operands] + list(program.outputs)
    return Counter(a.ref for a in operands if type(a) is Var)


def _absorbed(eq, single):
    """``eq`` with a negated operand of ``single`` absorbed, or ``eq`` as it is."""
    rule = _RULES.get(eq.prim)
    if rule is None or eq.kwargs or len(eq.operands) != 2:
        return eq
    a, b = (single.get(x.ref) if type(x) is Var else None for x in eq.operands)
    rewritten = rule(eq.operands, a, b)
    return eq if rewritten is None else Equation(rewritten[0], rewritten[1], {}, eq.out)


def _add(operands, neg_a, neg_b):
    if neg_b is not None:
        return e.subtract, (operands[0], neg_b)
    if neg_a is not None:
        return e.subtract, (operands[1], neg_a)
    return None


def _subtract(operands, neg_a, neg_b):
    return None if neg_b is None else (e.add, (operands[0], neg_b))


def _multiply(operands, neg_a, neg_b):
    x, y = operands
    if neg_a is not None and _is_number(y):
        return e.multiply, (neg_a, -y)
    if neg_b is not None and _is_number(x):
        return e.multiply, (-x, neg_b)
    return None


def _is_number(a):
    return isinstance(a, _NUMBERS)


_RULES = {e.add: _add, e.subtract: _subtract, e.multiply: _multiply}  # primitive -> its rewrite
