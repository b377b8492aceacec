"""Elementwise functions of signs, parts and powers of two: ``positive``, ``copysign``, ``heaviside``, ``fmod``,
``divmod``, ``modf``, ``ldexp``, ``frexp`` and ``float_power``.

Most are compositions of ours with a piecewise-constant part read off the plain values (a sign, an integer
part, an exponent), which carries no derivative.  ``fmod`` and ``modf``'s fractional part are primitives, so
their values are numpy's exactly; between their jumps the derivative is ``1`` in the dividend.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda x: copysign(x, -1.0))(2.0)
-1.0
"""

import numpy as np

from ..extend import Traced, defbatch, defjvp, defvjp, primitive, value_of
from ._arraylike import as_array
from ._batch_helpers import elementwise
from ._broadcast import broadcast_as, dtype_of, unbroadcast
from ._construction import astype
from ._elementwise import multiply, negative, power, where
from ._nondiff import NONDIFF
from ._plain_ops import PLAIN
from ._remainder import remainder


def _result_dtype(ufunc, *xs):
    """The dtype numpy's ``ufunc`` gives these arguments (Python scalars weak, as in the ufunc)."""
    return ufunc(*[x if type(x) in (int, float, complex) else np.zeros((), dtype_of(x)) for x in xs]).dtype


def positive(x):
    """``+x``: ``x`` itself (numpy's returns a copy; a traced value is never changed in place).

    >>> positive(np.array([-1.0]))
    array([-1.])
    """
    return x if type(x) is Traced else np.positive(x)


def copysign(x1, x2):
    """``x1`` with the sign of ``x2``: ``x1`` or ``-x1``, so its derivative is ``±1`` in ``x1`` and ``0`` in ``x2``.

    >>> copysign(np.array([1.0, -2.0]), -0.0)
    array([-1., -2.])
    """
    same = NONDIFF["equal"](PLAIN["signbit"](x1), PLAIN["signbit"](x2))
    dtype = _result_dtype(np.copysign, x1, x2)
    return astype(where(same, x1, negative(x1)), dtype)


def heaviside(x1, x2):
    """The step function: ``0`` where ``x1 < 0``, ``x2`` where ``x1 == 0``, ``1`` where ``x1 > 0`` (``nan`` at a
    ``nan``); constant in ``x1``, and ``x2`` passes through where ``x1 == 0``.

    >>> heaviside(np.array([-1.0, 0.0, 2.0]), 0.5)
    array([0. , 0.5, 1. ])
    """
    v1 = value_of(x1)  # a mask: batched under vmap, never differentiated
    out = where(NONDIFF["equal"](v1, 0), x2, NONDIFF["greater"](v1, 0))
    return astype(where(NONDIFF["isnan"](v1), np.nan, out), _result_dtype(np.heaviside, x1, x2))


def _fmod_quotient(x, y, ans):
    """The truncated quotient numpy's ``fmod`` used, exactly (``x - ans`` is a multiple of ``y``)."""
    return np.rint((value_of(x) - value_of(ans)) / value_of(y))


fmod = primitive(np.fmod, "fmod")
defbatch(fmod, elementwise(fmod))
defvjp(fmod, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: unbroadcast(negative(multiply(g, _fmod_quotient(x, y, ans))), y))
defjvp(fmod, lambda t, ans, x, y: broadcast_as(t, ans),
       lambda t, ans, x, y: broadcast_as(negative(multiply(t, _fmod_quotient(x, y, ans))), ans))
fmod.__doc__ = """The remainder of ``x / y`` truncated toward zero, with the sign of ``x`` (C's ``fmod``).

>>> import autodiff
>>> autodiff.grad(lambda y: fmod(-7.0, y))(2.0)  # -7 - (-3) * y
3.0
"""


def divmod(x1, x2):  # noqa: A001 - numpy's name
    """``(floor_divide(x1, x2), remainder(x1, x2))``: the quotient is plain, the remainder differentiable.

    >>> divmod(np.array([7.0]), 2.0)
    (array([3.]), array([1.]))
    """
    return NONDIFF["floor_divide"](x1, x2), remainder(x1, x2)


_fraction = primitive(lambda x: np.modf(x)[0], "modf_fraction")
defbatch(_fraction, elementwise(_fraction))
defvjp(_fraction, lambda g, ans, x: g)
defjvp(_fraction, lambda t, ans, x: t)


def modf(x):
    """``(fractional part, integral part)``, both with the sign of ``x``; the fractional part moves with ``x``
    (derivative 1), the integral part is plain.

    >>> modf(np.array([-2.5]))
    (array([-0.5]), array([-2.]))
    """
    return _fraction(x), PLAIN["trunc"](x)


def _powers_of_two(exponent, dtype):
    return np.ldexp(np.ones((), dtype), exponent)


_powers_of_two = primitive(_powers_of_two, "powers_of_two")
defbatch(_powers_of_two, elementwise(_powers_of_two))


def ldexp(x1, x2):
    """``x1 * 2**x2`` for integer ``x2`` (exact: only the exponent of ``x1`` changes).

    >>> ldexp(np.array([0.75]), 3)
    array([6.])
    """
    x1, x2 = as_array(x1), value_of(x2)  # the exponents are integers: no derivative
    return multiply(x1, _powers_of_two(x2, dtype=_result_dtype(np.ldexp, x1, x2)))


_exponent = primitive(lambda x: np.frexp(x)[1], "frexp_exponent")
defbatch(_exponent, elementwise(_exponent))


def frexp(x):
    """``(mantissa, exponent)`` with ``x = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``; the mantissa
    is ``x`` scaled by a plain power of two, the exponent an integer array.

    >>> frexp(np.array([6.0]))
    (array([0.75]), array([3], dtype=int32))
    """
    exponent = _exponent(value_of(x))
    return ldexp(x, -exponent), exponent


def float_power(x1, x2):
    """``x1 ** x2`` computed in float64 at least (complex128 for complex input), as numpy's ``float_power``.

    >>> float_power(np.float32(2.0), 3)
    np.float64(8.0)
    """
    dtype = _result_dtype(np.float_power, x1, x2)
    return power(astype(as_array(x1), dtype), x2 if type(x2) in (int, float, complex) else astype(x2, dtype))
