"""Elementwise ops, each with its pullback right under it.

Pullbacks use these same differentiable ops, so every derivative can be
differentiated again.  Binary pullbacks ``unbroadcast`` back to their
argument's shape and dtype.
"""

import numpy as np

from ..extend import ZeroTangent, defvjp, primitive, value_of
from ._broadcast import unbroadcast

add = primitive(np.add, "add")
defvjp(add, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(g, y))

subtract = primitive(np.subtract, "subtract")
defvjp(
    subtract,
    lambda g, ans, x, y: unbroadcast(g, x),
    lambda g, ans, x, y: unbroadcast(negative(g), y),
)

multiply = primitive(np.multiply, "multiply")
defvjp(
    multiply,
    lambda g, ans, x, y: unbroadcast(multiply(g, y), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, x), y),
)

divide = primitive(np.divide, "divide")
true_divide = divide
defvjp(
    divide,
    lambda g, ans, x, y: unbroadcast(divide(g, y), x),
    lambda g, ans, x, y: unbroadcast(negative(multiply(g, divide(ans, y))), y),
)

negative = primitive(np.negative, "negative")
defvjp(negative, lambda g, ans, x: negative(g))


def _power_exponent_vjp(g, ans, x, y):
    safe_log = log(where(np.equal(value_of(x), 0), 1.0, x))  # 0 ** y contributes nothing through y
    return unbroadcast(multiply(multiply(g, ans), safe_log), y)


power = primitive(np.power, "power")
defvjp(
    power,
    lambda g, ans, x, y: unbroadcast(multiply(g, multiply(y, power(x, subtract(y, 1)))), x),
    _power_exponent_vjp,
)

exp = primitive(np.exp, "exp")
defvjp(exp, lambda g, ans, x: multiply(g, ans))

log = primitive(np.log, "log")
defvjp(log, lambda g, ans, x: divide(g, x))

# sin, cos and tanh pull back through fused primitives (as PyTorch's *_backward
# ops do): one tape entry instead of two or three when differentiated again.
sin = primitive(np.sin, "sin")
sin_backward = primitive(lambda g, x: g * np.cos(x), "sin_backward")
defvjp(sin, lambda g, ans, x: sin_backward(g, x))

cos = primitive(np.cos, "cos")
cos_backward = primitive(lambda g, x: -g * np.sin(x), "cos_backward")
defvjp(cos, lambda g, ans, x: cos_backward(g, x))

defvjp(
    sin_backward,
    lambda h, out, g, x: sin_backward(h, x),
    lambda h, out, g, x: cos_backward(multiply(h, g), x),
)
defvjp(
    cos_backward,
    lambda h, out, g, x: cos_backward(h, x),
    lambda h, out, g, x: negative(sin_backward(multiply(h, g), x)),
)

tanh = primitive(np.tanh, "tanh")
tanh_backward = primitive(lambda g, ans: g * (1 - ans * ans), "tanh_backward")
defvjp(tanh, lambda g, ans, x: tanh_backward(g, ans))
defvjp(
    tanh_backward,
    lambda h, out, g, ans: tanh_backward(h, ans),
    lambda h, out, g, ans: multiply(multiply(-2, ans), multiply(g, h)),
)

sqrt = primitive(np.sqrt, "sqrt")
defvjp(sqrt, lambda g, ans, x: divide(multiply(g, 0.5), ans))


def _where(cond, x, y):
    return np.where(cond, x, y)


where = primitive(_where, "where")
defvjp(
    where,
    None,
    lambda g, ans, c, x, y: unbroadcast(where(c, g, 0), x),
    lambda g, ans, c, x, y: unbroadcast(where(c, 0, g), y),
)



def _zero_vjp(g, ans, *args, **kwargs):
    return ZeroTangent()


sign = primitive(np.sign, "sign")
defvjp(sign, _zero_vjp)

absolute = primitive(np.absolute, "absolute")
abs = absolute  # noqa: A001 - mirrors numpy's name
defvjp(absolute, lambda g, ans, x: multiply(g, sign(x)))

square = primitive(np.square, "square")
defvjp(square, lambda g, ans, x: multiply(g, multiply(2, x)))
