"""``remainder`` (``mod``, the ``%`` operator): ``x - floor(x / y) * y``, with the sign of ``y``.

Between the jumps at multiples of ``y`` the floored quotient is a constant,
so the derivative is ``1`` in ``x`` and ``-floor(x / y)`` in ``y``.  At a jump
the derivative does not exist; the pullback and the pushforward give the
one-sided value of the piece numpy's forward chose.
"""

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive, value_of
from ._batch_helpers import elementwise
from ._broadcast import broadcast_as, unbroadcast
from ._elementwise import multiply, negative


def _quotient(x, y):
    """The floored quotient numpy's remainder used: a constant for the pullback."""
    return np.floor_divide(value_of(x), value_of(y))


remainder = primitive(np.remainder, "remainder")
defbatch(remainder, elementwise(remainder))
mod = remainder
defvjp(
    remainder,
    lambda g, ans, x, y: unbroadcast(g, x),
    lambda g, ans, x, y: unbroadcast(negative(multiply(g, _quotient(x, y))), y),
)
defjvp(
    remainder,
    lambda t, ans, x, y: broadcast_as(t, ans),
    lambda t, ans, x, y: broadcast_as(negative(multiply(t, _quotient(x, y))), ans),
)
remainder.__doc__ = """Elementwise remainder of ``x / y``, with the sign of ``y`` (numpy's ``remainder``).

>>> import autodiff
>>> autodiff.grad(lambda y: remainder(7.0, y))(2.0)  # 7 - 3 * y
-3.0
"""

__test__ = {"remainder": remainder.__doc__}  # doctest skips numpy's wrapped ufuncs
