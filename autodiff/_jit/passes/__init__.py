"""Passes over a program, each a function ``program -> program`` in its own module, each switchable off.

``jit`` runs them in the order of :data:`PASSES`; ``jit(f, passes=(...))`` names the ones to run (``()``: none).

- ``dce`` (:mod:`.dce`): dead-code elimination.
- ``callsite`` (:mod:`.codegen`): the program runs as one generated Python function, not through the interpreter.

``callsite`` is an acceleration: a hook slot (:mod:`autodiff._hooks`) that ``autodiff._accel`` fills.  Under
``AUTODIFF_REFERENCE=1``, or named in ``AUTODIFF_ACCEL_OFF`` (``jit_callsite``), it leaves the program as it
is, and the reference interpreter (:mod:`autodiff._jit.replay`) runs it.  Not built yet (issue 42): constant
folding, common-subexpression elimination, fusion, buffer planning.
"""

from ..._hooks import hooks, slot
from .dce import dce


def _unchanged(program):
    return program


slot("jit_callsite", _unchanged, "jit's call-site pass: a program run by one generated Python function")


def callsite(program):
    """The program with a generated function to run it (:mod:`.codegen`), when on.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> program = callsite(autodiff.jit(lambda x: anp.sin(x), passes=()).lower(np.zeros(3)))
    >>> program.run([np.zeros(3)])
    [array([0., 0., 0.])]
    """
    return hooks.jit_callsite(program)


PASSES = {"dce": dce, "callsite": callsite}  # name -> pass, in the order jit runs them
