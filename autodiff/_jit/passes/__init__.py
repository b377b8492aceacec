"""Passes over a program, each a function ``program -> program`` in its own module, each switchable off.

``jit`` runs them in the order of :data:`PASSES`; ``jit(f, passes=(...))`` names the ones to run (``()``: none).

- ``cse`` (:mod:`.cse`): common-subexpression elimination; a repeated equation reads the first one's value.
- ``fold`` (:mod:`.fold`): constant folding; an equation on constants only is computed once, by the pass.
- ``simplify`` (:mod:`.simplify`): a ``negative`` that its one reader (``add``, ``subtract``, ``multiply`` by a
  float) can absorb is absorbed (``add(a, negative(b))`` is ``subtract(a, b)``), and a product by one is read as
  its operand, bitwise.
- ``dce`` (:mod:`.dce`): dead-code elimination.
- ``fuse`` (:mod:`autodiff._accel.fusion`): each run of elementwise equations becomes one equation, one numba
  kernel compiled once the program has run a few times.
- ``plan`` (:mod:`autodiff._accel.planning`): buffer planning; an elementwise ufunc or a fused kernel writes into
  an operand's array that dies there and owns its memory (``np.add(a, b, out=a)``), instead of a fresh one.
- ``specialise`` (:mod:`autodiff._accel.specialise`): an equation whose primitive works out axes or transposes from
  its shapes on every call (``sum_to_shape``, the matrix products) does it once, here.
- ``callsite`` (:mod:`.codegen`): the program runs as one generated Python function, not through the interpreter.

``cse`` comes before ``fold``: merged first, two repeated calls on constants fold once and their readers read one
constant (folded apart, they would read two arrays, which ``cse`` compares by identity: the readers would stay
two).  ``dce`` before them or after gives the same count; all three come before ``fuse``, whose runs are then
the shorter program's.  Neither ``cse`` nor ``fold`` merges or computes ahead a call that draws random numbers
(:mod:`.purity`).  ``simplify`` comes before ``dce``, which drops the absorbed ``negative`` equations.  These
four are plain rewrites whose programs replay bitwise as the unrewritten ones, so they
run in every mode.  The last four are accelerations: hook slots (:mod:`autodiff._hooks`) that ``autodiff._accel``
fills.  Under ``AUTODIFF_REFERENCE=1``, or named in ``AUTODIFF_ACCEL_OFF`` (``jit_fusion``, ``jit_planning``,
``jit_specialise``, ``jit_callsite``), they leave the program as it is, and the reference interpreter
(:mod:`autodiff._jit.replay`) runs it.  ``plan`` comes after ``fuse``: a fused kernel's value is a fresh array a
later ufunc may write into; ``specialise`` after ``plan``, which reads the products' own primitives.
"""

from ..._hooks import hooks, slot
from .cse import cse
from .dce import dce
from .fold import fold
from .simplify import simplify


def _unchanged(program):
    return program


slot("jit_fuse", _unchanged, "jit's fusion pass: runs of elementwise equations as one numba kernel each")
slot("jit_plan", _unchanged, "jit's buffer planning: a ufunc or fused kernel writes into an operand that dies there")
slot("jit_specialise", _unchanged, "jit's shape specialisation: axes and transposes worked out once per program")
slot("jit_callsite", _unchanged, "jit's call-site pass: a program run by one generated Python function")


def fuse(program):
    """Each run of elementwise equations as one fused equation (:mod:`autodiff._accel.fusion`), when on.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> from autodiff._hooks import enabled
    >>> program = fuse(autodiff.jit(lambda x: anp.tanh(anp.sin(x) * 0.9) * 2.0, passes=()).lower(np.zeros(3)))
    >>> [e.prim.__name__ for e in program.equations] == (["fused[4]"] if enabled("jit_fusion") else
    ...                                                   ["sin", "multiply", "tanh", "multiply"])
    True
    """
    return hooks.jit_fuse(program)


def plan(program):
    """Buffer planning (:mod:`autodiff._accel.planning`), when on.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> from autodiff._hooks import enabled
    >>> program = plan(autodiff.jit(lambda x: anp.sin(x) * 2.0, passes=()).lower(np.zeros(3)))
    >>> [e.prim.__name__ for e in program.equations] == (["sin", "multiply[into 0]"] if enabled("jit_planning")
    ...                                                   else ["sin", "multiply"])
    True
    """
    return hooks.jit_plan(program)


def specialise(program):
    """Each equation with a form specialised to its traced shapes using it (:mod:`autodiff._accel.specialise`),
    when on.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> from autodiff._hooks import enabled
    >>> program = specialise(autodiff.jit(lambda a, b: a @ b, passes=()).lower(np.ones((2, 3)), np.ones((3, 4))))
    >>> program.equations[0].prim.__name__ == ("matmul[dot]" if enabled("jit_specialise") else "matmul")
    True
    """
    return hooks.jit_specialise(program)


def callsite(program):
    """The program with a generated function to run it (:mod:`.codegen`), when on.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> program = callsite(autodiff.jit(lambda x: anp.sin(x), passes=()).lower(np.zeros(3)))
    >>> program.run([np.zeros(3)])
    [array([0., 0., 0.])]
    """
    return hooks.jit_callsite(program)


# name -> pass, in the order jit runs them
PASSES = {"cse": cse, "fold": fold, "simplify": simplify, "dce": dce, "fuse": fuse, "plan": plan,
          "specialise": specialise, "callsite": callsite}
