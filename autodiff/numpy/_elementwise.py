"""Elementwise ops, each with its pullback and its pushforward right under it.

Both rules use these same differentiable ops, so every derivative can be
differentiated again.  Binary pullbacks ``unbroadcast`` back to their
argument's shape and dtype; binary pushforwards ``broadcast_as`` the output.
"""

import numpy as np

from .._hooks import hooks, slot
from ..extend import ZeroTangent, defbatch, defjvp, deflinear, defvjp, primitive, surely, value_of
from ._batch_helpers import elementwise
from ._broadcast import broadcast_as, dtype_of, unbroadcast

add = primitive(np.add, "add")
defvjp(add, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(g, y),
       reads=("", ""))  # x and y for their shapes only: an entry of x + y keeps no array
defjvp(add, lambda t, ans, x, y: broadcast_as(t, ans), lambda t, ans, x, y: broadcast_as(t, ans))
defbatch(add, elementwise(add))

subtract = primitive(np.subtract, "subtract")
defvjp(
    subtract,
    lambda g, ans, x, y: unbroadcast(g, x),
    lambda g, ans, x, y: unbroadcast(negative(g), y),
    reads=("", ""),
)
defjvp(subtract, lambda t, ans, x, y: broadcast_as(t, ans), lambda t, ans, x, y: broadcast_as(negative(t), ans))
defbatch(subtract, elementwise(subtract))

multiply = primitive(np.multiply, "multiply")
defvjp(
    multiply,
    lambda g, ans, x, y: unbroadcast(multiply(g, y), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, x), y),
    reads=("y", "x"),  # x * 2.0 keeps 2.0 alone
)
deflinear(multiply)
defbatch(multiply, elementwise(multiply))

divide = primitive(np.divide, "divide")
defbatch(divide, elementwise(divide))
true_divide = divide
defvjp(
    divide,
    lambda g, ans, x, y: unbroadcast(divide(g, y), x),
    lambda g, ans, x, y: unbroadcast(negative(multiply(g, divide(ans, y))), y),
    reads=("y", "ans y"),
)
defjvp(
    divide,
    lambda t, ans, x, y: broadcast_as(divide(t, y), ans),
    lambda t, ans, x, y: broadcast_as(negative(multiply(t, divide(ans, y))), ans),
)

negative = primitive(np.negative, "negative")
defvjp(negative, lambda g, ans, x: negative(g))
deflinear(negative)
defbatch(negative, elementwise(negative))


def _no_zero(v):
    return np.all(np.not_equal(v, 0))


def _power_base_derivative(x, y):
    """``y * x ** (y - 1)``, the derivative in the base."""
    exponent = subtract(y, 1)
    if not surely(_no_zero, y):  # a 0 in any example (or under jit: any call); y is rarely 0, so x is scanned then
        # y * x ** (y - 1) is 0 * inf at x = y = 0, where x ** 0 is constant: use the exponent 1 there,
        # so the derivative is 0 at every order (as in JAX)
        exponent = where(np.equal(value_of(x), 0) & np.equal(value_of(y), 0), 1.0, exponent)
    return multiply(y, power(x, exponent))


def _safe_log(x):
    return log(where(np.equal(value_of(x), 0), 1.0, x))  # 0 ** y contributes nothing through y


power = primitive(np.power, "power")
defbatch(power, elementwise(power))
defvjp(
    power,
    lambda g, ans, x, y: unbroadcast(multiply(g, _power_base_derivative(x, y)), x),
    lambda g, ans, x, y: unbroadcast(multiply(multiply(g, ans), _safe_log(x)), y),
)
defjvp(
    power,
    lambda t, ans, x, y: broadcast_as(multiply(t, _power_base_derivative(x, y)), ans),
    lambda t, ans, x, y: broadcast_as(multiply(multiply(t, ans), _safe_log(x)), ans),
)

exp = primitive(np.exp, "exp")
defvjp(exp, lambda g, ans, x: multiply(g, ans))
defjvp(exp, lambda t, ans, x: multiply(t, ans))
defbatch(exp, elementwise(exp))

log = primitive(np.log, "log")
defvjp(log, lambda g, ans, x: divide(g, x))
defjvp(log, lambda t, ans, x: divide(t, x))
defbatch(log, elementwise(log))

# sin, cos and tanh pull back and push forward through fused primitives (as PyTorch's *_backward
# ops do): one tape entry or one push instead of two or three.
sin = primitive(np.sin, "sin")
sin_backward = primitive(lambda g, x: g * np.cos(x), "sin_backward")
defbatch(sin_backward, elementwise(sin_backward))
defvjp(sin, lambda g, ans, x: sin_backward(g, x))
defjvp(sin, lambda t, ans, x: sin_backward(t, x))
defbatch(sin, elementwise(sin))

cos = primitive(np.cos, "cos")
cos_backward = primitive(lambda g, x: -g * np.sin(x), "cos_backward")
defbatch(cos_backward, elementwise(cos_backward))
defvjp(cos, lambda g, ans, x: cos_backward(g, x))
defjvp(cos, lambda t, ans, x: cos_backward(t, x))
defbatch(cos, elementwise(cos))

# Second order: unbroadcast keeps each cotangent in its argument's dtype (a real x under a complex h stays real).
defvjp(
    sin_backward,
    lambda h, out, g, x: unbroadcast(sin_backward(h, x), g),
    lambda h, out, g, x: unbroadcast(cos_backward(multiply(h, g), x), x),
)
# Forward over reverse runs the fused pullbacks on duals: g cos(x) moves by t cos(x) - g sin(x) s.
defjvp(
    sin_backward,
    lambda t, out, g, x: broadcast_as(sin_backward(t, x), out),
    lambda s, out, g, x: broadcast_as(cos_backward(multiply(g, s), x), out),
)
defvjp(
    cos_backward,
    lambda h, out, g, x: unbroadcast(cos_backward(h, x), g),
    lambda h, out, g, x: unbroadcast(negative(sin_backward(multiply(h, g), x)), x),
)
defjvp(
    cos_backward,
    lambda t, out, g, x: broadcast_as(cos_backward(t, x), out),
    lambda s, out, g, x: broadcast_as(negative(sin_backward(multiply(g, s), x)), out),
)

def _tanh(x, *args, **kwargs):
    """The hyperbolic tangent, elementwise (numpy's ``tanh``, unless an acceleration fills the slot)."""
    return hooks.tanh(x, *args, **kwargs)


slot("tanh", np.tanh, "tanh's forward (the accelerated twin runs float64 arrays on a numba kernel where numpy's "
     "own is not vectorised)")
tanh = primitive(_tanh, "tanh")
tanh_backward = primitive(lambda g, ans: g * (1 - ans * ans), "tanh_backward")
defbatch(tanh_backward, elementwise(tanh_backward))
defvjp(tanh, lambda g, ans, x: tanh_backward(g, ans))
defjvp(tanh, lambda t, ans, x: tanh_backward(t, ans))
defbatch(tanh, elementwise(tanh))
defvjp(
    tanh_backward,
    lambda h, out, g, ans: unbroadcast(tanh_backward(h, ans), g),
    lambda h, out, g, ans: unbroadcast(multiply(multiply(-2, ans), multiply(g, h)), ans),
)
defjvp(
    tanh_backward,
    lambda t, out, g, ans: broadcast_as(tanh_backward(t, ans), out),
    lambda s, out, g, ans: broadcast_as(multiply(multiply(-2, ans), multiply(g, s)), out),
)

sqrt = primitive(np.sqrt, "sqrt")
defvjp(sqrt, lambda g, ans, x: divide(multiply(g, 0.5), ans))
defjvp(sqrt, lambda t, ans, x: divide(multiply(t, 0.5), ans))
defbatch(sqrt, elementwise(sqrt))

cbrt = primitive(np.cbrt, "cbrt")
# 1 / (3 cbrt(x)**2): +inf at 0, as sqrt's (design.md section 11); the second derivative there is NaN, its two
# one-sided limits being -inf and +inf
defvjp(cbrt, lambda g, ans, x: divide(g, multiply(3.0, square(ans))))
defjvp(cbrt, lambda t, ans, x: divide(t, multiply(3.0, square(ans))))
defbatch(cbrt, elementwise(cbrt))


def _where(cond, x, y):
    return np.where(cond, x, y)


where = primitive(_where, "where")
defbatch(where, elementwise(where))
defvjp(
    where,
    None,
    lambda g, ans, c, x, y: unbroadcast(where(c, g, 0), x),
    lambda g, ans, c, x, y: unbroadcast(where(c, 0, g), y),
)
defjvp(
    where,
    None,
    lambda t, ans, c, x, y: broadcast_as(where(c, t, 0), ans),
    lambda t, ans, c, x, y: broadcast_as(where(c, 0, t), ans),
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


def _sign_jvp(t, ans, x):
    """Complex ``s = z/|z|`` moves by ``(t - s Re(conj(s) t)) / |z|`` (0 at z = 0, as the pullback)."""
    if not _is_complex(x):
        return ZeroTangent()
    from ._complex import conj, real

    r = absolute(x)
    turned = subtract(t, multiply(ans, real(multiply(conj(ans), t))))
    return where(np.equal(value_of(r), 0), 0.0, divide(turned, _nonzero(r)))


sign = primitive(np.sign, "sign")
defvjp(sign, _sign_vjp)
defjvp(sign, _sign_jvp)
defbatch(sign, elementwise(sign))


def _absolute_vjp(g, ans, x):
    """``sign(x)`` for real ``x``; ``conj(z)/|z|`` for complex ``z`` (JAX's convention), 0 at z = 0.

    A complex ``|z|`` is ``hypot(re, im)``, a Euclidean norm: its higher derivatives at 0 are NaN (``_kinks``).
    """
    if not _is_complex(x):
        return multiply(g, sign(x))
    from ._complex import conj
    from ._kinks import inverse_norm

    return multiply(g, multiply(conj(x), inverse_norm(ans)))


def _absolute_jvp(t, ans, x):
    """``sign(x) t`` for real ``x``; ``Re(conj(z) t)/|z|`` for complex ``z``, 0 at z = 0."""
    if not _is_complex(x):
        return multiply(t, sign(x))
    from ._complex import conj, real
    from ._kinks import inverse_norm

    return multiply(real(multiply(conj(x), t)), inverse_norm(ans))


absolute = primitive(np.absolute, "absolute")
abs = absolute  # noqa: A001 - mirrors numpy's name
defvjp(absolute, _absolute_vjp)
defjvp(absolute, _absolute_jvp)
defbatch(absolute, elementwise(absolute))

square = primitive(np.square, "square")
defvjp(square, lambda g, ans, x: multiply(g, multiply(2, x)))
defjvp(square, lambda t, ans, x: multiply(t, multiply(2, x)))
defbatch(square, elementwise(square))
