"""The reference interpreter: one flat loop over a program's equations.

An equation whose operands are all plain runs the primitive's own function (``prim.fun``), as eager code on
plain arrays does, so ``jit(f)(x)`` is bitwise ``f(x)`` under ``AUTODIFF_REFERENCE=1``.  When an operand is
traced by an outer transform the primitive is called as such, so the outer level records, batches or pushes it as
it would eagerly; a primitive whose value carries no derivative (a comparison) gets its operands without their
differentiation levels, as ``autodiff.numpy`` calls it.  That happens to the halves of a jitted call's pullback
(:mod:`.as_primitive`) under a transform of higher order, and to a program that draws random numbers under
``grad(jit(f))``.  A value is dropped after its last use (:attr:`Program.frees`), so a long program holds what
eager code would.  A value whose shape is not the traced one (its shape depends on the data) stops the replay
with :class:`ShapeChanged`.
"""

import numpy as np

from .._primitive import _plain_results
from .._stop_gradient import value_of
from .._traced import Traced
from .program import Var


class ShapeChanged(Exception):
    """A replayed value's shape is not the traced one: it depends on the data (``x[x > 0]``), so Python code
    that read the shape while tracing may have decided wrongly; the caller runs the function itself instead."""

    def __init__(self, equation, traced, replayed):
        super().__init__(f"the shape of %{equation.out} = {equation.prim.__name__}(...) depends on the data "
                         f"(traced {traced}, now {replayed})")


def replay(program, inputs):
    """The program's output leaves for these input values (one per input, in order).

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> program = autodiff.jit(lambda x: anp.sin(x) * 2.0).lower(np.zeros(2))
    >>> replay(program, [np.full(2, np.pi / 2)])
    [array([2., 2.])]
    """
    env, shapes = [None] * program.size, program.shapes
    env[: program.n_inputs] = inputs
    for equation, dead in zip(program.equations, program.frees):
        prim, operands, kwargs, out = equation
        vals = [env[a.ref] if type(a) is Var else a for a in operands]
        if Traced in map(type, vals):
            value = env[out] = _through(prim, vals, kwargs)
        else:
            value = env[out] = prim.fun(*vals, **kwargs)
        expected = shapes[out]
        if expected is not None and (value.shape if type(value) is np.ndarray else np.shape(value)) != expected:
            raise ShapeChanged(equation, expected, np.shape(value))
        for ref in dead:  # read for the last time: dropped, as eager code drops its intermediates
            env[ref] = None
    return [env[o.ref] if type(o) is Var else o for o in program.outputs]


def _through(prim, vals, kwargs):
    """``prim`` called on an outer transform's values, so the transform sees it; a comparison gets them without
    their differentiation levels (its mask has no derivative, as eager code strips it), batches kept."""
    if prim in _plain_results:
        vals = [value_of(v) for v in vals]
    return prim(*vals, **kwargs)
