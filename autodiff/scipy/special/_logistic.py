"""Logistic and entropy-style functions: ``expit``, ``logit``, ``xlogy``, ``xlog1py``, ``entr``.

``xlogy(0, y)`` is 0 for every ``y`` (``0 log 0 = 0``).  Its derivative in ``x`` is ``log y``, taken as
0 where ``x = 0`` and ``y <= 0`` (PyTorch's convention: finite at ``xlogy(0, 0)``); in ``y`` it is
``x / y``, 0 where ``x = 0`` (the function does not depend on ``y`` there).
"""

import numpy as np
import scipy.special as sc

from ...extend import defvjp, value_of
from ...numpy import add, divide, log, log1p, multiply, negative, subtract, where
from ...numpy._broadcast import unbroadcast
from .._ufuncs import ufunc_primitive

expit = ufunc_primitive(sc.expit, "expit")
defvjp(expit, lambda g, ans, x: multiply(g, multiply(ans, subtract(1.0, ans))))

logit = ufunc_primitive(sc.logit, "logit")
defvjp(logit, lambda g, ans, x: divide(g, multiply(x, subtract(1.0, x))))


def _log_unless_zero_x(log_f, x, y, edge):
    """``log_f(y)``, and 0 where ``x = 0`` and ``y <= edge`` (where the log is not finite)."""
    masked = np.equal(value_of(x), 0) & np.less_equal(value_of(y), edge)
    return where(masked, 0.0, log_f(where(masked, edge + 1.0, y)))


def _x_over(x, y):
    """``x / y``, and 0 where ``x`` is 0 (whatever ``y`` is)."""
    zero = np.equal(value_of(x), 0)
    return where(zero, 0.0, divide(x, where(zero, 1.0, y)))


xlogy = ufunc_primitive(sc.xlogy, "xlogy")
defvjp(
    xlogy,
    lambda g, ans, x, y: unbroadcast(multiply(g, _log_unless_zero_x(log, x, y, 0.0)), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, _x_over(x, y)), y),
)

xlog1py = ufunc_primitive(sc.xlog1py, "xlog1py")
defvjp(
    xlog1py,
    lambda g, ans, x, y: unbroadcast(multiply(g, _log_unless_zero_x(log1p, x, y, -1.0)), x),
    lambda g, ans, x, y: unbroadcast(multiply(g, _x_over(x, add(y, 1.0))), y),
)

entr = ufunc_primitive(sc.entr, "entr")
defvjp(entr, lambda g, ans, x: multiply(g, negative(add(log(x), 1.0))))

__all__ = ["expit", "logit", "xlogy", "xlog1py", "entr"]
