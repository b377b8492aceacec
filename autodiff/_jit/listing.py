"""A program's listing (our ``jax.make_jaxpr``): numbered values, one equation per line.

::

    program f
      in  %0:float64[3]
      %1 = sin(%0) -> float64[3]
      %2 = multiply(%1, 2.0) -> float64[3]
      out %2

Operands print as in :mod:`autodiff._study.listing`: a value as ``%k``, a constant by its value when small
(``[1.0, 0.5]``, ``2.0``), else as ``const float64[100]``; keyword arguments follow (``axis=0``).  The ``out``
line shows the output tree with each leaf's value number (or its constant).
"""

from .._study.listing import keywords, short
from .program import Aval, Var


def listing(program):
    """The listing of ``program`` as text.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> print(autodiff.jit(lambda x: anp.sin(x) * 2.0, passes=("dce",)).lower(np.zeros(3)))
    program <lambda>
      in  %0:float64[3]
      %1 = sin(%0) -> float64[3]
      %2 = multiply(%1, 2.0) -> float64[3]
      out %2
    """
    inputs = "  ".join(f"%{k}:{aval_text(program.avals[k])}" for k in range(program.n_inputs))
    lines = [f"program {program.name}", f"  in  {inputs or '(none)'}"]
    for prim, operands, kwargs, out in program.equations:
        shown = ", ".join(_operand(a) for a in operands)
        lines.append(f"  %{out} = {prim.__name__}({shown}{keywords(kwargs)}) -> {aval_text(program.avals[out])}")
    lines.append(f"  out {program.out_tree.unflatten([_Shown(_operand(o)) for o in program.outputs])!r}")
    return "\n".join(lines)


def aval_text(aval):
    """``float64[3,4]``; a tuple of them for a primitive with several outputs; a type's name for anything else."""
    if type(aval) is Aval:
        return str(aval)
    return "(" + ", ".join(aval_text(a) for a in aval) + ")"


def _operand(a):
    return f"%{a.ref}" if type(a) is Var else short(a)


class _Shown:
    """A leaf of the output tree printed as its text."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text
