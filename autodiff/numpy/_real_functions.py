"""``fabs`` and ``logaddexp2``: elementwise functions numpy defines for real input only.

numpy refuses complex input to both, and so do these.
"""

import math

import numpy as np

from ..extend import defvjp, primitive
from ._broadcast import unbroadcast
from ._elementwise import exp, multiply, sign, subtract

_LN2 = math.log(2.0)  # a Python float, so float32 pullbacks stay float32

fabs = primitive(np.fabs, "fabs")
defvjp(fabs, lambda g, ans, x: multiply(g, sign(x)))


def _share(x, ans):
    """``2**x / (2**x + 2**y)``, written as ``exp((x - ans) ln 2)``: never overflows."""
    return exp(multiply(subtract(x, ans), _LN2))


logaddexp2 = primitive(np.logaddexp2, "logaddexp2")
defvjp(
    logaddexp2,
    lambda g, ans, x, y: unbroadcast(multiply(g, _share(x, ans)), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, _share(y, ans)), y),
)
