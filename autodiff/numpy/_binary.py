"""Binary elementwise ops that choose or combine: maximum, minimum, fmax, fmin, clip, logaddexp,
hypot, arctan2.

Where two inputs tie (``maximum(x, x)``), each gets half the cotangent (and the output half of
each tangent), as in PyTorch and JAX; the masks are constants, so higher derivatives are exact.
"""

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive, value_of
from ._batch_helpers import elementwise
from ._broadcast import as_constant, broadcast_as, dtype_of, unbroadcast
from ._elementwise import add, divide, exp, multiply, negative, square, subtract, where
from ._kinks import inverse_norm


def _share(pick, tie, like):
    """The constant mask ``pick + tie / 2`` in the dtype of ``like``."""
    return as_constant(pick + 0.5 * tie, dtype_of(like))  # Python floats compare to a bool, not an array


def _taken(g, like, pick, tie=False):
    """``g`` times the share ``pick + tie / 2`` (in ``like``'s dtype), and exactly 0 where the input was not taken.

    ``where``, not only the product: a NaN in ``g`` (a Euclidean norm's second derivative at its kink, design.md
    section 11) then stays off the inputs the choice did not take, whose true derivative is 0, as PyTorch's
    masks keep it off.
    """
    return where(pick | tie, multiply(g, _share(pick, tie, like)), 0.0)


def _choice_rules(prim, win):
    """Define the rules of ``prim``, which returns, elementwise, the input that ``win(x, y)`` prefers: each input
    gets the cotangent (its pullback, summed to its shape) or passes on its tangent (its JVP, broadcast to the
    output) where it was taken, half where the two tie."""

    def x_taken(x, y):
        a, b = value_of(x), value_of(y)
        return win(a, b), a == b

    def y_taken(x, y):
        a, b = value_of(x), value_of(y)
        return win(b, a), a == b

    defvjp(prim, lambda g, ans, x, y: unbroadcast(_taken(g, x, *x_taken(x, y)), x),
           lambda g, ans, x, y: unbroadcast(_taken(g, y, *y_taken(x, y)), y))
    defjvp(prim, lambda t, ans, x, y: broadcast_as(_taken(t, ans, *x_taken(x, y)), ans),
           lambda t, ans, x, y: broadcast_as(_taken(t, ans, *y_taken(x, y)), ans))
    defbatch(prim, elementwise(prim))


def _prefers_number(bigger):
    return lambda a, b: bigger(a, b) | (np.isnan(b) & ~np.isnan(a))


maximum = primitive(np.maximum, "maximum")
_choice_rules(maximum, np.greater)

minimum = primitive(np.minimum, "minimum")
_choice_rules(minimum, np.less)

fmax = primitive(np.fmax, "fmax")  # a NaN loses: the gradient goes to the number
_choice_rules(fmax, _prefers_number(np.greater))

fmin = primitive(np.fmin, "fmin")
_choice_rules(fmin, _prefers_number(np.less))


def _clip(x, lo, hi):
    return np.clip(x, lo, hi)


_clip_p = primitive(_clip, "clip")
defbatch(_clip_p, elementwise(_clip_p))


def _above(x, lo, hi):
    """Where the result is ``hi``: numpy's clip is ``minimum(maximum(x, lo), hi)``, so with ``lo > hi`` every
    value goes to ``hi``, not only those above it."""
    if hi is None:
        return np.zeros(np.shape(value_of(x)), bool)
    v = value_of(x) if lo is None else np.maximum(value_of(x), value_of(lo))
    return v > value_of(hi)


def _below(x, lo, hi, above=None):
    """Where the result is ``lo``: below it, and not sent on to ``hi`` (``above``, when already known)."""
    if lo is None:
        return np.zeros(np.shape(value_of(x)), bool)
    return (value_of(x) < value_of(lo)) & ~(_above(x, lo, hi) if above is None else above)


def _inside(x, lo, hi):
    """Where the result is ``x`` itself: neither bound applies (boundaries included)."""
    above = _above(x, lo, hi)
    return ~(_below(x, lo, hi, above) | above)


defvjp(
    _clip_p,
    lambda g, ans, x, lo, hi: unbroadcast(_taken(g, x, _inside(x, lo, hi)), x),
    lambda g, ans, x, lo, hi: unbroadcast(_taken(g, lo, _below(x, lo, hi)), lo),
    lambda g, ans, x, lo, hi: unbroadcast(_taken(g, hi, _above(x, lo, hi)), hi),
)
defjvp(
    _clip_p,
    lambda t, ans, x, lo, hi: broadcast_as(_taken(t, ans, _inside(x, lo, hi)), ans),
    lambda t, ans, x, lo, hi: broadcast_as(_taken(t, ans, _below(x, lo, hi)), ans),
    lambda t, ans, x, lo, hi: broadcast_as(_taken(t, ans, _above(x, lo, hi)), ans),
)


def clip(x, a_min=None, a_max=None):
    """Limit ``x`` to ``[a_min, a_max]``; the gradient passes inside the interval, boundaries included."""
    return _clip_p(x, a_min, a_max)


logaddexp = primitive(np.logaddexp, "logaddexp")
defbatch(logaddexp, elementwise(logaddexp))
defvjp(
    logaddexp,
    lambda g, ans, x, y: unbroadcast(multiply(g, exp(subtract(x, ans))), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, exp(subtract(y, ans))), y),
)
defjvp(
    logaddexp,
    lambda t, ans, x, y: broadcast_as(multiply(t, exp(subtract(x, ans))), ans),
    lambda t, ans, x, y: broadcast_as(multiply(t, exp(subtract(y, ans))), ans),
)


hypot = primitive(np.hypot, "hypot")
defbatch(hypot, elementwise(hypot))
# x / hypot(x, y), 0 at the origin, and NaN in every higher order there: a Euclidean norm's kink (_kinks)
defvjp(
    hypot,
    lambda g, ans, x, y: unbroadcast(multiply(g, multiply(x, inverse_norm(ans))), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, multiply(y, inverse_norm(ans))), y),
)
defjvp(
    hypot,
    lambda t, ans, x, y: broadcast_as(multiply(t, multiply(x, inverse_norm(ans))), ans),
    lambda t, ans, x, y: broadcast_as(multiply(t, multiply(y, inverse_norm(ans))), ans),
)

arctan2 = primitive(np.arctan2, "arctan2")
defbatch(arctan2, elementwise(arctan2))
defvjp(
    arctan2,
    lambda g, ans, y, x: unbroadcast(multiply(g, divide(x, add(square(x), square(y)))), y),
    lambda g, ans, y, x: unbroadcast(negative(multiply(g, divide(y, add(square(x), square(y))))), x),
)
defjvp(
    arctan2,
    lambda t, ans, y, x: broadcast_as(multiply(t, divide(x, add(square(x), square(y)))), ans),
    lambda t, ans, y, x: broadcast_as(negative(multiply(t, divide(y, add(square(x), square(y))))), ans),
)
