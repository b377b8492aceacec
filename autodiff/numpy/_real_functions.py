"""``fabs`` and ``logaddexp2``: elementwise functions numpy defines for real input only.

numpy refuses complex input to both, and so do these.
"""

import math

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive
from ._batch_helpers import elementwise
from ._broadcast import broadcast_as, unbroadcast
from ._elementwise import exp, multiply, sign, subtract

_LN2 = math.log(2.0)  # a Python float, so float32 pullbacks stay float32

fabs = primitive(np.fabs, "fabs")
defvjp(fabs, lambda g, ans, x: multiply(g, sign(x)))
defjvp(fabs, lambda t, ans, x: multiply(t, sign(x)))
defbatch(fabs, elementwise(fabs))
fabs.__doc__ = """The absolute value of real ``x``, as a float (integers included).

>>> import autodiff
>>> autodiff.grad(fabs)(-2.0)
-1.0
"""


def _share(x, ans):
    """``2**x / (2**x + 2**y)``, written as ``exp((x - ans) ln 2)``: never overflows."""
    return exp(multiply(subtract(x, ans), _LN2))


logaddexp2 = primitive(np.logaddexp2, "logaddexp2")
defbatch(logaddexp2, elementwise(logaddexp2))
defvjp(
    logaddexp2,
    lambda g, ans, x, y: unbroadcast(multiply(g, _share(x, ans)), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, _share(y, ans)), y),
)
defjvp(
    logaddexp2,
    lambda t, ans, x, y: broadcast_as(multiply(t, _share(x, ans)), ans),
    lambda t, ans, x, y: broadcast_as(multiply(t, _share(y, ans)), ans),
)
logaddexp2.__doc__ = """``log2(2**x + 2**y)``, without overflow.

>>> import autodiff
>>> autodiff.grad(logaddexp2, argnums=(0, 1))(1.0, 1.0)  # a tie: half each
(0.5, 0.5)
"""

__test__ = {"fabs": fabs.__doc__, "logaddexp2": logaddexp2.__doc__}  # doctest skips numpy's wrapped ufuncs
