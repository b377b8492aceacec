"""The two rules of ``autodiff.scipy.stats`` at the edges of a distribution, in one place.

* **An invalid parameter gives NaN**, as in scipy (``norm.logpdf(0, scale=-1)``, ``bernoulli.pmf(1, 1.5)``,
  ``binom.logpmf(1, 2.5, 0.5)``): every method, every entry whose parameters are invalid.  The parameter
  is replaced by a valid stand-in before the formula runs (the double ``where``), so the formula never
  sees it, and the valid entries' gradients are what they were; the invalid entries get gradient 0.
* **A point off the support gives the value at the support's edge**: ``-inf`` for ``logpdf``/``logpmf``,
  ``0`` for ``pdf``/``pmf``, ``0`` or ``1`` for ``cdf``/``sf`` (and their logs), with gradient 0.  The
  formula is again evaluated on a safe stand-in (:func:`safe`) so no NaN leaks into the gradient.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ...extend import surely
from ...numpy import astype, where
from .._plain import plain

__all__ = ["plain", "restrict", "safe", "Parameter", "POSITIVE", "NONNEGATIVE", "PROBABILITY", "COUNT",
           "checked"]


def restrict(inside, logp, outside=-np.inf):
    """``logp`` where ``inside``, else ``outside``; the rule sends no cotangent to the outside entries."""
    if surely(np.all, inside):  # inside for every example (never assumed under jit)
        return logp
    if not isinstance(outside, (float, int)):  # an edge value per entry (0 below, 1 above): in logp's dtype
        outside = astype(outside, np.result_type(logp), copy=False)
    return where(inside, logp, outside)


def safe(inside, x, fill):
    """``x`` where ``inside``, else ``fill``: keeps the formula finite on entries ``restrict`` will drop."""
    return x if surely(np.all, inside) else where(inside, x, fill)


class Parameter(NamedTuple):
    """What a valid value of one parameter is (``test`` on plain values), a valid ``fill`` to compute with in
    its place, and ``reduce`` for a parameter whose entries are judged together (a Dirichlet's ``alpha``)."""

    test: Callable
    fill: float
    reduce: Callable = None


POSITIVE = Parameter(lambda v: v > 0, 1.0)  # scales, shapes, degrees of freedom (inf included, as in scipy)
NONNEGATIVE = Parameter(lambda v: v >= 0, 1.0)  # a Poisson mean
PROBABILITY = Parameter(lambda v: (v >= 0) & (v <= 1), 0.5)
COUNT = Parameter(lambda v: (v >= 0) & (np.floor(v) == v), 1.0)  # a binomial's number of trials


def _judge(spec, value):
    """``(entries, whole)``: the entrywise mask that sanitises ``value``, and the mask the output takes."""
    with np.errstate(invalid="ignore"):
        entries = spec.test(plain(value))
    return entries, (entries if spec.reduce is None else spec.reduce(entries))


def checked(fun, params):
    """``fun`` with each parameter named in ``params`` judged: invalid entries are computed on the parameter's
    fill and come out NaN.  ``fun`` takes keyword arguments (a bound signature's)."""

    def call(**arguments):
        valid = True
        for name, spec in params.items():
            if arguments.get(name) is None:
                continue
            entries, whole = _judge(spec, arguments[name])
            arguments[name] = safe(entries, arguments[name], spec.fill)
            valid = np.logical_and(valid, whole)
        return restrict(valid, fun(**arguments), np.nan)

    return call
