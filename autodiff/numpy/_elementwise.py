"""Elementwise ops, each with its pullback right under it.

Pullbacks use these same differentiable ops, so every derivative can be
differentiated again.  Binary pullbacks ``unbroadcast`` back to their
argument's shape and dtype.
"""

import numpy as np

from ..extend import ZeroTangent, defvjp, primitive, value_of
from ._broadcast import dtype_of, unbroadcast

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


def _power_base_vjp(g, ans, x, y):
    exponent = subtract(y, 1)
    if np.any(np.equal(value_of(y), 0)):  # y is rarely 0, so x (often large) is only scanned then
        # y * x ** (y - 1) is 0 * inf at x = y = 0, where x ** 0 is constant: use the exponent 1 there,
        # so the derivative is 0 at every order (as in JAX)
        exponent = where(np.equal(value_of(x), 0) & np.equal(value_of(y), 0), 1.0, exponent)
    return unbroadcast(multiply(g, multiply(y, power(x, exponent))), x)


def _power_exponent_vjp(g, ans, x, y):
    safe_log = log(where(np.equal(value_of(x), 0), 1.0, x))  # 0 ** y contributes nothing through y
    return unbroadcast(multiply(multiply(g, ans), safe_log), y)


power = primitive(np.power, "power")
defvjp(power, _power_base_vjp, _power_exponent_vjp)

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

# Second order: unbroadcast keeps each cotangent in its argument's dtype (a real x under a complex h stays real).
defvjp(
    sin_backward,
    lambda h, out, g, x: unbroadcast(sin_backward(h, x), g),
    lambda h, out, g, x: unbroadcast(cos_backward(multiply(h, g), x), x),
)
defvjp(
    cos_backward,
    lambda h, out, g, x: unbroadcast(cos_backward(h, x), g),
    lambda h, out, g, x: unbroadcast(negative(sin_backward(multiply(h, g), x)), x),
)

tanh = primitive(np.tanh, "tanh")
tanh_backward = primitive(lambda g, ans: g * (1 - ans * ans), "tanh_backward")
defvjp(tanh, lambda g, ans, x: tanh_backward(g, ans))
defvjp(
    tanh_backward,
    lambda h, out, g, ans: unbroadcast(tanh_backward(h, ans), g),
    lambda h, out, g, ans: unbroadcast(multiply(multiply(-2, ans), multiply(g, h)), ans),
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


def _is_complex(x):
    return dtype_of(x).kind == "c"


def _nonzero(r):
    """``r`` with its zeros replaced by 1: a divisor for rules whose subgradient at 0 is 0."""
    return where(np.equal(value_of(r), 0), 1.0, r)


def _sign_vjp(g, ans, x):
    """Real ``sign`` is piecewise constant.  Complex ``sign(z) = z/|z|`` is smooth away from 0:
    with JAX's convention it pulls ``g`` back to ``(g - conj(g) conj(s)**2) / (2|z|)``, 0 at z = 0."""
    if not _is_complex(x):
        return ZeroTangent()
    from ._complex import conj

    r = absolute(x)
    turned = subtract(g, multiply(conj(g), square(conj(ans))))
    return where(np.equal(value_of(r), 0), 0.0, divide(turned, multiply(2.0, _nonzero(r))))


sign = primitive(np.sign, "sign")
defvjp(sign, _sign_vjp)


def _absolute_vjp(g, ans, x):
    """``sign(x)`` for real ``x``; ``conj(z)/|z|`` for complex ``z`` (JAX's convention), 0 at z = 0."""
    if not _is_complex(x):
        return multiply(g, sign(x))
    from ._complex import conj

    return multiply(g, divide(conj(x), _nonzero(ans)))


absolute = primitive(np.absolute, "absolute")
abs = absolute  # noqa: A001 - mirrors numpy's name
defvjp(absolute, _absolute_vjp)

square = primitive(np.square, "square")
defvjp(square, lambda g, ans, x: multiply(g, multiply(2, x)))
