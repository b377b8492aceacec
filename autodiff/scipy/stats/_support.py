"""Values outside a distribution's support: ``-inf`` log-density, gradient 0, and no NaN from the formula."""

import numpy as np

from ...extend import value_of
from ...numpy import where


def plain(x):
    """The plain numpy value under every level of tracing."""
    while value_of(x) is not x:
        x = value_of(x)
    return x


def restrict(inside, logp, outside=-np.inf):
    """``logp`` where ``inside``, else ``outside``; the rule sends no cotangent to the outside entries."""
    return logp if np.all(inside) else where(inside, logp, outside)


def safe(inside, x, fill):
    """``x`` where ``inside``, else ``fill``: keeps the formula finite on entries ``restrict`` will drop."""
    return x if np.all(inside) else where(inside, x, fill)
