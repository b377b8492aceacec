"""Exponentials, logarithms, trigonometric and hyperbolic functions and their inverses.

Each pullback and pushforward sits under its forward, written with differentiable ops.  All are
holomorphic, so both are the product with the derivative: ``g * f'(x)`` and ``t * f'(x)``.
"""

import math

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive
from ._batch_helpers import elementwise
from ._elementwise import add, divide, multiply, negative, sqrt, square, subtract

# Python floats, not numpy float64 scalars: a float32 cotangent times them stays float32
_LN2, _LN10 = math.log(2.0), math.log(10.0)

exp2 = primitive(np.exp2, "exp2")
defvjp(exp2, lambda g, ans, x: multiply(g, multiply(ans, _LN2)))
defjvp(exp2, lambda t, ans, x: multiply(t, multiply(ans, _LN2)))
defbatch(exp2, elementwise(exp2))

log2 = primitive(np.log2, "log2")
defvjp(log2, lambda g, ans, x: divide(g, multiply(x, _LN2)))
defjvp(log2, lambda t, ans, x: divide(t, multiply(x, _LN2)))
defbatch(log2, elementwise(log2))

log10 = primitive(np.log10, "log10")
defvjp(log10, lambda g, ans, x: divide(g, multiply(x, _LN10)))
defjvp(log10, lambda t, ans, x: divide(t, multiply(x, _LN10)))
defbatch(log10, elementwise(log10))

log1p = primitive(np.log1p, "log1p")
defvjp(log1p, lambda g, ans, x: divide(g, add(x, 1.0)))
defjvp(log1p, lambda t, ans, x: divide(t, add(x, 1.0)))
defbatch(log1p, elementwise(log1p))

expm1 = primitive(np.expm1, "expm1")
defvjp(expm1, lambda g, ans, x: multiply(g, add(ans, 1.0)))
defjvp(expm1, lambda t, ans, x: multiply(t, add(ans, 1.0)))
defbatch(expm1, elementwise(expm1))

tan = primitive(np.tan, "tan")
defvjp(tan, lambda g, ans, x: multiply(g, add(square(ans), 1.0)))
defjvp(tan, lambda t, ans, x: multiply(t, add(square(ans), 1.0)))
defbatch(tan, elementwise(tan))

arcsin = primitive(np.arcsin, "arcsin")
defvjp(arcsin, lambda g, ans, x: divide(g, sqrt(subtract(1.0, square(x)))))
defjvp(arcsin, lambda t, ans, x: divide(t, sqrt(subtract(1.0, square(x)))))
defbatch(arcsin, elementwise(arcsin))

arccos = primitive(np.arccos, "arccos")
defvjp(arccos, lambda g, ans, x: negative(divide(g, sqrt(subtract(1.0, square(x))))))
defjvp(arccos, lambda t, ans, x: negative(divide(t, sqrt(subtract(1.0, square(x))))))
defbatch(arccos, elementwise(arccos))

arctan = primitive(np.arctan, "arctan")
defvjp(arctan, lambda g, ans, x: divide(g, add(square(x), 1.0)))
defjvp(arctan, lambda t, ans, x: divide(t, add(square(x), 1.0)))
defbatch(arctan, elementwise(arctan))

sinh = primitive(np.sinh, "sinh")
defvjp(sinh, lambda g, ans, x: multiply(g, cosh(x)))
defjvp(sinh, lambda t, ans, x: multiply(t, cosh(x)))
defbatch(sinh, elementwise(sinh))

cosh = primitive(np.cosh, "cosh")
defvjp(cosh, lambda g, ans, x: multiply(g, sinh(x)))
defjvp(cosh, lambda t, ans, x: multiply(t, sinh(x)))
defbatch(cosh, elementwise(cosh))

arcsinh = primitive(np.arcsinh, "arcsinh")
defvjp(arcsinh, lambda g, ans, x: divide(g, sqrt(add(square(x), 1.0))))
defjvp(arcsinh, lambda t, ans, x: divide(t, sqrt(add(square(x), 1.0))))
defbatch(arcsinh, elementwise(arcsinh))

arccosh = primitive(np.arccosh, "arccosh")


def _sqrt_x2_minus_1(x):
    # sqrt(x - 1) * sqrt(x + 1), not sqrt(x**2 - 1): x**2 overflows float32 past 1.8e19 (found by the fuzzer)
    return multiply(sqrt(subtract(x, 1.0)), sqrt(add(x, 1.0)))


defvjp(arccosh, lambda g, ans, x: divide(g, _sqrt_x2_minus_1(x)))
defjvp(arccosh, lambda t, ans, x: divide(t, _sqrt_x2_minus_1(x)))
defbatch(arccosh, elementwise(arccosh))

arctanh = primitive(np.arctanh, "arctanh")
defvjp(arctanh, lambda g, ans, x: divide(g, subtract(1.0, square(x))))
defjvp(arctanh, lambda t, ans, x: divide(t, subtract(1.0, square(x))))
defbatch(arctanh, elementwise(arctanh))

