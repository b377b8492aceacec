"""The scalar formula of each elementwise primitive that jit's fusion may put in a kernel (:mod:`.fusion`).

A formula is a template of one line of numba code on scalars: ``{0}``, ``{1}`` are the operands (names of scalar
variables), ``np`` is numpy as numba knows it, and ``ONE`` is 1 in the kernel's dtype (a bare ``1`` would be an
int64 and promote a float32 value to float64, where numpy keeps float32).  Each formula computes what the
primitive's function does, in the same order of operations, so arithmetic rounds as numpy's does; a function
(``np.sin``) may differ from numpy's own loop in the last bit (tests/accel/test_jit_fusion.py holds them to 1e-12 in
float64, 1e-6 in float32).  A primitive missing here is never fused: adding a line is all fusion needs.

>>> from autodiff.numpy import _elementwise as e
>>> FORMULAS[e.tanh_backward].format("g", "y"), arity(e.tanh_backward)
('g * (ONE - y * y)', 2)
"""

import string

from ..numpy import _elementwise as e
from ..numpy import _transcendental as t

FORMULAS = {
    e.add: "{0} + {1}",
    e.subtract: "{0} - {1}",
    e.multiply: "{0} * {1}",
    e.divide: "{0} / {1}",
    e.negative: "-{0}",
    e.power: "{0} ** {1}",
    e.square: "{0} * {0}",
    e.absolute: "abs({0})",
    e.sqrt: "np.sqrt({0})",
    e.exp: "np.exp({0})",
    e.log: "np.log({0})",
    e.sin: "np.sin({0})",
    e.cos: "np.cos({0})",
    e.tanh: "np.tanh({0})",
    t.expm1: "np.expm1({0})",
    t.log1p: "np.log1p({0})",
    t.tan: "np.tan({0})",
    # the pullbacks' fused primitives (their functions: g * np.cos(x), -g * np.sin(x), g * (1 - ans * ans))
    e.sin_backward: "{0} * np.cos({1})",
    e.cos_backward: "-{0} * np.sin({1})",
    e.tanh_backward: "{0} * (ONE - {1} * {1})",
}

# The formulas that call a transcendental function.  numba calls libm's scalar function per element; numpy's
# own loops are vectorised (float32 on AVX2, float64 too on AVX-512).  Measured on 8192 float32 values (AMD EPYC,
# Zen 3, 2026-12-07): numba's tanh took 3.5-4x numpy's time, exp, sin and log about 2x.  Fusion keeps such an
# equation out of a run over many elements (fusion.VECTOR_MATH_ABOVE), where numpy's loop is worth more than the
# saved pass over memory.
VECTOR_MATH = frozenset({e.exp, e.log, e.sin, e.cos, e.tanh, t.expm1, t.log1p, t.tan, e.sin_backward,
                         e.cos_backward})

_ARITY = {prim: 1 + max(int(field) for _, field, _, _ in string.Formatter().parse(formula) if field)
          for prim, formula in FORMULAS.items()}


def arity(prim):
    """How many operands ``prim``'s formula takes."""
    return _ARITY[prim]
