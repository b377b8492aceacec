"""Common-subexpression elimination: an equation that repeats an earlier one is dropped, its readers read the
earlier one's value.

Two equations with the same primitive, the same operands and equal keyword arguments compute the same value
(primitives are pure: :mod:`.purity` names the calls that are not, and those are never merged).  Operands are
the same when they are the same value (``%k``, after renaming), the same constant object, or equal constants
compared bit for bit: Python and numpy scalars of one type, strings, ``None``, and flat tuples of them (the
shapes and axes pullbacks pass).  Equal arrays that are distinct objects are not compared (that would cost a
pass over their data).  ``add(a, b)`` and ``add(b, a)`` are not recognised as one.

One forward sweep: each equation's operands are first renamed through the map of the values dropped so far
(values are never renumbered), then its key is looked up among the kept equations'.  The output leaves are
renamed too, except where two leaves that were different values would become one array: a caller changing one
leaf in place must not change another, as with the function itself, so that equation stays.
"""

import struct

import numpy as np

from ..program import Var, renamed
from .purity import pure

_BY_VALUE = (int, bool, str, type(None))


def cse(program):
    """The program with each repeated equation dropped and its readers reading the first one's value.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> def f(x):
    ...     return anp.exp(anp.sin(x)) + anp.exp(anp.sin(x))
    >>> program = autodiff.jit(f, passes=()).lower(np.zeros(2))
    >>> [e.prim.__name__ for e in program.equations]
    ['sin', 'exp', 'sin', 'exp', 'add']
    >>> print(cse(program))
    program f
      in  %0:float64[2]
      %1 = sin(%0) -> float64[2]
      %2 = exp(%1) -> float64[2]
      %5 = add(%2, %2) -> float64[2]
      out %5
    """
    outputs = {o.ref for o in program.outputs if type(o) is Var}
    first, twins, kept = {}, {}, []  # key -> the value that first computed it; dropped value -> its twin
    for eq in program.equations:
        if twins:
            eq = eq._replace(operands=tuple(renamed(a, twins) for a in eq.operands))
        twin = _twin(eq, first)
        if twin == eq.out or eq.out in outputs and twin in outputs:  # new, or two output leaves in one array
            kept.append(eq)
            continue
        twins[eq.out] = twin
        if eq.out in outputs:
            outputs.add(twin)  # an output leaf from now on: a later twin that is one too stays
    return program.replace(kept, outputs=[renamed(o, twins) for o in program.outputs])


def _twin(eq, first):
    """The value that first computed what ``eq`` computes (``eq.out`` itself when none did, or it draws)."""
    return first.setdefault(_key(eq), eq.out) if pure(eq) else eq.out


def _key(eq):
    """What makes two equations compute the same value (hashable)."""
    kwargs = tuple(sorted((name, _operand_key(v)) for name, v in eq.kwargs.items()))
    return eq.prim, tuple(map(_operand_key, eq.operands)), kwargs


def _operand_key(a):
    """A value by its number; a number, string or flat tuple of them by type and bits; any other constant by
    identity (the program holds it, so its id is its own while the pass runs)."""
    if type(a) is Var:
        return Var, a.ref
    if type(a) is tuple and all(map(_by_value, a)):
        return tuple, tuple(map(_scalar_key, a))
    return _scalar_key(a) if _by_value(a) else (id, id(a))


def _by_value(a):
    return type(a) in _BY_VALUE or type(a) in (float, complex) or isinstance(a, np.generic)


def _scalar_key(a):
    """Bits, not equality: ``0.0 == -0.0`` and ``1 == 1.0 == True``, but their calls' values differ."""
    if type(a) is float:
        return float, struct.pack("<d", a)
    if type(a) is complex:
        return complex, struct.pack("<dd", a.real, a.imag)
    if isinstance(a, np.generic):
        return type(a), a.tobytes()
    return type(a), a
