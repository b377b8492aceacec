"""Values outside a distribution's support: ``-inf`` log-density, gradient 0, and no NaN from the formula."""

import numpy as np

from ...extend import plain_value
from ...numpy import where
from .._plain import plain

__all__ = ["plain", "restrict", "safe"]


def restrict(inside, logp, outside=-np.inf):
    """``logp`` where ``inside``, else ``outside``; the rule sends no cotangent to the outside entries."""
    return logp if np.all(plain_value(inside)) else where(inside, logp, outside)  # inside for every example


def safe(inside, x, fill):
    """``x`` where ``inside``, else ``fill``: keeps the formula finite on entries ``restrict`` will drop."""
    return x if np.all(plain_value(inside)) else where(inside, x, fill)
