"""Algebraic simplification: a ``negative`` read by one ``add``, ``subtract`` or ``multiply`` by a number is
absorbed into it, and a product by one is its other operand.

Pullbacks negate: the pullback of ``p - lr * g`` with respect to ``g`` is ``multiply(negative(ct), lr)``, so
MAML's meta-gradient, which pulls back through every inner step, holds 120 ``negative`` equations among 1,883.
Each rule below gives bitwise the value it replaces (IEEE negation is exact, and the rounding of a sum or a
product does not depend on the operands' signs or order), so the pass runs in both modes:

- ``add(a, negative(b))`` and ``add(negative(b), a)`` become ``subtract(a, b)``;
- ``subtract(a, negative(b))`` becomes ``add(a, b)``;
- ``multiply(negative(x), c)`` and ``multiply(c, negative(x))``, ``c`` a float, become ``multiply(x, -c)``.

A rule applies only to a ``negative`` of a real float array (:func:`_real_float` says why) whose value has no other
reader and is not an output, so ``dce`` then drops it.

A product by the number one, ``multiply(x, 1.0)`` or ``multiply(1.0, x)``, is ``x`` bit for bit when it has
``x``'s shape and real float dtype: its readers read ``x`` instead (a gradient's seed makes one at the head of
every pullback: ``norm``'s is ``x * (1.0 * inverse_norm(n))``).  An output leaf keeps its product, so the caller
never gets an input's array back. Under an outer transform (``grad(jit(f))``) the rewritten
primitives' pullbacks are the same arithmetic, so gradients agree to the last bit too. (NaN's sign bit may differ,
which no comparison sees.)
"""

from collections import Counter

import numpy as np

from ...numpy import _elementwise as e
from ..program import Aval, Equation, Var, renamed

_NUMBERS = (float, np.floating)  # an int 0 has no sign: -x * 0 and x * -0 differ in the sign of zero


def simplify(program):
    """The program with each ``negative`` that one reader can absorb absorbed, and each product by one that is not
    an output read as its other operand.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> f = lambda x, y: 1.0 * (x + -y) * 2.0 + -(x * y) * 0.5
    >>> program = autodiff.jit(f, passes=()).lower(np.ones(2), np.ones(2))
    >>> print(program)
    program <lambda>
      in  %0:float64[2]  %1:float64[2]
      %2 = negative(%1) -> float64[2]
      %3 = add(%0, %2) -> float64[2]
      %4 = multiply(1.0, %3) -> float64[2]
      %5 = multiply(%4, 2.0) -> float64[2]
      %6 = multiply(%0, %1) -> float64[2]
      %7 = negative(%6) -> float64[2]
      %8 = multiply(%7, 0.5) -> float64[2]
      %9 = add(%5, %8) -> float64[2]
      out %9
    >>> print(simplify(program))  # dce then drops %2, %4 and %7
    program <lambda>
      in  %0:float64[2]  %1:float64[2]
      %2 = negative(%1) -> float64[2]
      %3 = subtract(%0, %1) -> float64[2]
      %4 = multiply(1.0, %3) -> float64[2]
      %5 = multiply(%3, 2.0) -> float64[2]
      %6 = multiply(%0, %1) -> float64[2]
      %7 = negative(%6) -> float64[2]
      %8 = multiply(%6, -0.5) -> float64[2]
      %9 = add(%5, %8) -> float64[2]
      out %9
    """
    return _without_products_by_one(_negations_absorbed(program))


def _negations_absorbed(program):
    """The program with each ``negative`` that its one reader can absorb absorbed."""
    negated, readers = _negations(program), _readers(program)
    single = {ref: operand for ref, operand in negated.items() if readers.get(ref) == 1}
    if not single:
        return program
    return program.replace([_absorbed(eq, single) for eq in program.equations])


def _without_products_by_one(program):
    """The program with the readers of each ``multiply`` by one reading its other operand (``dce`` drops the
    product); the output leaves are left as they are."""
    same, equations = {}, []  # a product by one -> the operand it equals
    for eq in program.equations:
        if same:
            eq = eq._replace(operands=tuple(renamed(a, same) for a in eq.operands))
        x = _times_one(eq, program.avals)
        if x is not None:
            same[eq.out] = x.ref
        equations.append(eq)
    return program.replace(equations) if same else program


def _times_one(eq, avals):
    """The operand ``x`` when ``eq`` is ``multiply(x, 1.0)`` or ``multiply(1.0, x)`` with ``x``'s aval, a real float
    array's (``1 * x`` of an int array is float, and of a complex one may flip a zero's sign); else ``None``."""
    if eq.prim is not e.multiply or eq.kwargs or len(eq.operands) != 2:
        return None
    for x, one in (eq.operands, eq.operands[::-1]):
        if type(x) is Var and _is_number(one) and one == 1 and avals[x.ref] == avals[eq.out]:
            return x if _real_float(avals[x.ref]) else None
    return None


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
