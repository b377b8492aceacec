"""jit's fusion pass: each run of elementwise equations over one shape and dtype becomes one equation.

An equation is **fusable** when its primitive has a scalar formula (:mod:`.formulas`), it has no keyword arguments,
its value is a float32 or float64 array of at least one axis, and each operand is a value of that same shape and
dtype, a constant array of that shape and dtype, or a number (a Python or numpy scalar, a 0-d array: numpy casts it
to the array's dtype, and so does the kernel). A transcendental function (:data:`~.formulas.VECTOR_MATH`: ``exp``,
``tanh``, ...) is fusable only over at most :data:`VECTOR_MATH_ABOVE` elements of its dtype: over more, numpy's
vectorised loop beats the kernel's scalar libm call (2-4x in float32). A **run** is a maximal stretch of
consecutive fusable equations of one shape and dtype, from :data:`MIN_RUN` (:data:`MIN_SMALL_RUN` over at most
:data:`SMALL` elements, where a kernel's launch costs more than a few numpy calls) to :data:`MAX_RUN` long;
consecutive, so the program's order never changes. Each run becomes one equation whose primitive is a
:class:`~autodiff._accel.fused.Fused` (its kernel compiles once the program has run
:data:`~autodiff._accel.fused.COMPILE_AFTER` times): it computes only the run's values that later equations or the
outputs read, so the others are never stored. One such value is the equation's value; several are a tuple, which
``item`` equations take apart (each under the value's own number: values are never renumbered).

The pass, :func:`fuse`, is off when numba cannot run (missing, ``NUMBA_DISABLE_JIT``,
``AUTODIFF_ACCEL_OFF=kernels``, ``AUTODIFF_REFERENCE=1``): it returns the program as it is.  :func:`fuse_runs`
rewrites the program whatever the switches (a fused equation without numba replays its equations).

>>> import numpy as np, autodiff, autodiff.numpy as anp
>>> def chain(x):  # bench/overhead.py's: 100 elementwise operations
...     for _ in range(25):
...         x = anp.tanh(anp.sin(x) * 0.9 + 0.1)
...     return anp.sum(x)
>>> program = autodiff.jit(autodiff.grad(chain), passes=("dce",)).lower(np.zeros(10))
>>> len(program.equations), [e.prim.__name__ for e in fuse_runs(program).equations]
(175, ['fused[175]'])
"""

import functools
import math
import operator
from importlib.util import find_spec

import numpy as np

from .._jit.program import Aval, Equation, Program, Var, last_reads
from .._trees import walk_flatten
from . import numba_jit
from .formulas import FORMULAS, VECTOR_MATH, arity
from .fused import Fused

MIN_RUN = 2  # a single equation gains nothing from a kernel of its own
# A run over at most SMALL elements fuses from MIN_SMALL_RUN equations.  It was set when a kernel's launch cost
# about 4 µs and a numpy call on a small array about 1 (2 equations on 400 float64 values: 4.0 µs fused against
# 2.4).  The launch is now 1.3-1.5 µs (fused.py), but fusing runs of 2 or 3 there still gained nothing: MAML's
# meta-step 1.044 and 1.007 of its time, the small HVP 0.996 and 1.002 (25 alternating rounds; every single
# equation fused, MAML took 1.40).  AMD EPYC, Zen 3, 2026-12-07.
SMALL, MIN_SMALL_RUN = 4096, 4
MAX_RUN = 500  # numba's compile time grows with a kernel's length: a longer run is cut (its value stored between)
# Elements above which a transcendental (formulas.VECTOR_MATH) is left to numpy's loop, per dtype.  numpy's
# float32 loops are vectorised on AVX2 already (2-4x the kernel's libm calls from 256 elements, at par at 64);
# its float64 ones only on AVX-512 (at par with the kernel on AVX2), so float64 keeps fusing up to where a numpy
# call's own microsecond stops mattering.  Measured on an AMD EPYC (Zen 3, AVX2), 2026-12-07.
VECTOR_MATH_ABOVE = {np.dtype(np.float32): 64, np.dtype(np.float64): 1024}
_SCALARS = (int, float, np.integer, np.floating)  # bool is an int, but numpy does not cast it as a number


class _Item:
    """The program's ``item``: one value of a fused equation that makes several."""

    shape_follows_operands = True  # the call-site form checks no shape after it (codegen.follows_operands)

    __name__ = "item"
    fun = staticmethod(operator.getitem)
    __call__ = staticmethod(operator.getitem)

    def __repr__(self):
        return "<item>"


ITEM = _Item()


def fuse(program):
    """The pass: :func:`fuse_runs` of ``program`` when numba can run, else ``program`` as it is."""
    return fuse_runs(program) if numba_jit.use_numba() and _numba_found() else program


def fuse_runs(program):
    """``program`` with each run of elementwise equations as one fused equation.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> f = lambda x: (anp.exp(x) * 2.0, anp.sin(x + 1.0) * x)
    >>> print(fuse_runs(autodiff.jit(f, passes=()).lower(np.ones(2))))
    program <lambda>
      in  %0:float64[2]
      %6 = fused[5](%0) -> (float64[2], float64[2])
      %2 = item(%6, 0) -> float64[2]
      %5 = item(%6, 1) -> float64[2]
      out (%2, %5)
    """
    equations, avals, reads = [], list(program.avals), last_reads(program)
    for start, stop, aval in _runs(program):
        run = program.equations[start:stop]
        needed = [eq.out for eq in run if reads.get(eq.out, -1) >= stop]  # read after the run, or an output
        fusing = aval is not None and len(run) >= _min_run(aval) and needed
        equations += _fused(run, needed, aval, avals) if fusing else run
    return Program(program.name, program.n_inputs, equations, avals, program.outputs, program.out_tree,
                   program.captured)


def _min_run(aval):
    return MIN_SMALL_RUN if math.prod(aval.shape) <= SMALL else MIN_RUN


@functools.cache
def _numba_found():
    return find_spec("numba") is not None


def _runs(program):
    """``[start, stop, aval]`` per stretch of the equations: a run of fusable equations whose values have the
    aval, or one other equation (aval ``None``)."""
    runs = []
    for k, eq in enumerate(program.equations):
        aval = _kind(eq, program.avals)
        if aval is not None and runs and runs[-1][2] == aval and k - runs[-1][0] < MAX_RUN:
            runs[-1][1] = k + 1
        else:
            runs.append([k, k + 1, aval])
    return runs


def _fused(run, needed, aval, avals):
    """The equations standing for ``run``: one fused equation, then an ``item`` per value when it makes several
    (their tuple numbered anew, at the end of ``avals``)."""
    body, operands = _body(run, needed, aval)
    fused = Fused(body, aval.shape, aval.dtype)
    if len(needed) == 1:
        return [Equation(fused, operands, {}, needed[0])]
    avals.append(tuple(aval for _ in needed))
    whole = len(avals) - 1
    return [Equation(fused, operands, {}, whole)] + [Equation(ITEM, (Var(whole), i), {}, ref)
                                                     for i, ref in enumerate(needed)]


def _body(run, needed, aval):
    """The run as a program of its own, numbered from 0 (what it reads from outside first, then its equations'
    values), and the fused equation's operands: what it reads from outside, in that order."""
    inside = {("value", eq.out) for eq in run}
    outside = {}  # key -> an earlier value or a constant array the run reads, in the order first read
    for eq in run:
        outside.update((_key(a), a) for a in eq.operands if _key(a) not in inside and _key(a) is not None)
    number = {key: k for k, key in enumerate(outside)}
    number.update((("value", eq.out), len(outside) + j) for j, eq in enumerate(run))

    def renumbered(a):
        key = _key(a)
        return a if key is None else Var(number[key])

    equations = [Equation(eq.prim, tuple(map(renumbered, eq.operands)), {}, number["value", eq.out]) for eq in run]
    outputs = [Var(number["value", ref]) for ref in needed]
    body = Program(f"fused[{len(run)}]", len(outside), equations, [aval] * len(number), outputs,
                   walk_flatten(outputs)[1])
    return body, tuple(outside.values())


def _key(a):
    """What names an operand inside a run: a value by its number, a constant array by identity, a number not."""
    if type(a) is Var:
        return "value", a.ref
    return ("array", id(a)) if type(a) is np.ndarray and a.ndim else None


def _kind(eq, avals):
    """The aval (shape, dtype) of a fusable equation's value, else ``None``."""
    aval = avals[eq.out]
    if eq.prim not in FORMULAS or eq.kwargs or type(aval) is not Aval or not aval.shape:
        return None
    if aval.dtype not in numba_jit.FAST or len(eq.operands) != arity(eq.prim):
        return None
    if eq.prim in VECTOR_MATH and math.prod(aval.shape) > VECTOR_MATH_ABOVE[aval.dtype]:
        return None
    return aval if all(_fits(a, aval, avals) for a in eq.operands) else None


def _fits(a, aval, avals):
    """May ``a`` be an operand of a run of values of ``aval``?"""
    if type(a) is Var:
        return avals[a.ref] == aval
    if type(a) is np.ndarray:
        return a.shape == aval.shape and a.dtype == aval.dtype or a.ndim == 0 and a.dtype.kind in "fiu"
    return isinstance(a, _SCALARS) and type(a) is not bool
