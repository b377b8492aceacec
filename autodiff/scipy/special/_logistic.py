"""Logistic and entropy-style functions: ``expit``, ``logit``, ``xlogy``, ``xlog1py``, ``entr``.

``xlogy(0, y)`` is 0 for every ``y`` (``0 log 0 = 0``).  Its derivative in ``x`` is ``log y``, taken as
0 where ``x = 0`` and ``y <= 0`` (PyTorch's convention: finite at ``xlogy(0, 0)``); in ``y`` it is
``x / y``, 0 where ``x = 0`` (the function does not depend on ``y`` there).
"""

import numpy as np
import scipy.special as sc

from ...extend import value_of
from ...numpy import add, divide, log, log1p, multiply, negative, subtract, where
from .._ufuncs import defpartials, ufunc_primitive

expit = ufunc_primitive(sc.expit, "expit")
expit.__doc__ = """The logistic sigmoid ``1 / (1 + exp(-x))``; its derivative is ``expit(x) (1 - expit(x))``.

>>> import autodiff
>>> float(expit(0.0)), float(autodiff.grad(expit)(0.0))
(0.5, 0.25)
"""
defpartials(expit, lambda ans, x: multiply(ans, subtract(1.0, ans)))

logit = ufunc_primitive(sc.logit, "logit")
logit.__doc__ = """``log(p / (1 - p))``, the inverse of ``expit``; its derivative is ``1 / (p (1 - p))``.

>>> import autodiff
>>> float(logit(0.75)), float(autodiff.grad(logit)(0.5))
(1.0986122887, 4.0)
"""
defpartials(logit, lambda ans, x: divide(1.0, multiply(x, subtract(1.0, x))))


def _log_unless_zero_x(log_f, x, y, edge):
    """``log_f(y)``, and 0 where ``x = 0`` and ``y <= edge`` (where the log is not finite)."""
    masked = np.equal(value_of(x), 0) & np.less_equal(value_of(y), edge)
    return where(masked, 0.0, log_f(where(masked, edge + 1.0, y)))


def _x_over(x, y):
    """``x / y``, and 0 where ``x`` is 0 (whatever ``y`` is)."""
    zero = np.equal(value_of(x), 0)
    return where(zero, 0.0, divide(x, where(zero, 1.0, y)))


xlogy = ufunc_primitive(sc.xlogy, "xlogy")
xlogy.__doc__ = """``x log y``, with ``xlogy(0, y) = 0`` for every ``y``; its gradient in ``x`` at ``(0, 0)`` is 0.

>>> import autodiff
>>> float(xlogy(0.0, 0.0)), float(autodiff.grad(xlogy)(0.0, 0.0))
(0.0, 0.0)
>>> float(autodiff.grad(xlogy, argnums=1)(2.0, 4.0))  # x / y
0.5
"""
defpartials(
    xlogy,
    lambda ans, x, y: _log_unless_zero_x(log, x, y, 0.0),
    lambda ans, x, y: _x_over(x, y),
)

xlog1py = ufunc_primitive(sc.xlog1py, "xlog1py")
xlog1py.__doc__ = """``x log(1 + y)``, with ``xlog1py(0, y) = 0`` for every ``y``.

>>> import autodiff
>>> float(xlog1py(2.0, 1.0))  # 2 log 2
1.3862943611
>>> float(autodiff.grad(xlog1py, argnums=1)(2.0, 1.0))  # x / (1 + y)
1.0
"""
defpartials(
    xlog1py,
    lambda ans, x, y: _log_unless_zero_x(log1p, x, y, -1.0),
    lambda ans, x, y: _x_over(x, add(y, 1.0)),
)

entr = ufunc_primitive(sc.entr, "entr")
entr.__doc__ = """``-x log x`` for ``x > 0`` (0 at 0, ``-inf`` below); its derivative is ``-(log x + 1)``.

>>> import autodiff
>>> float(entr(0.5)), float(autodiff.grad(entr)(1.0))
(0.3465735903, -1.0)
"""
defpartials(entr, lambda ans, x: negative(add(log(x), 1.0)))

__all__ = ["expit", "logit", "xlogy", "xlog1py", "entr"]
