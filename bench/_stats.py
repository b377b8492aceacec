"""How sure a measurement is: the median of the rounds and the band a goal is judged against.

A row's value is the median of its per-round samples (per-round ratios ours/torch, or per-round times).
Its *band* is the distribution-free confidence interval of that median (order statistics: with 9 rounds,
the 2nd and 8th smallest samples cover the true median with 96% probability), widened to at least
``MARGIN`` either side of the median.  The widening is there because two runs in two processes differ by
more than the rounds inside one run do (address-space layout, cache state, the VM's clock), and a
within-run interval alone would call a 2% difference certain.

A goal *holds* when the whole band is on its good side, is *missed* when the whole band is on the bad side,
and is *within noise* otherwise.  So a value near its threshold is reported as within noise with its
spread, rather than flipping between held and missed from one run to the next.

>>> value, band = summary([1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.00, 1.00])
>>> value, [round(b, 3) for b in band]
(1.0, [0.95, 1.05])
>>> judge(0.9, (0.8, 0.85)), judge(0.9, (0.85, 0.95)), judge(0.9, (0.95, 1.0))
('holds', 'within noise', 'missed')
"""

import math
import statistics

MARGIN = 0.05  # the band is at least ±5% of the value (see the module docstring)
COVERAGE = 0.95  # of the order-statistic interval, when there are enough rounds for it


def median_interval(samples, coverage=COVERAGE):
    """The order-statistic interval ``(low, high)`` for the median of ``samples``.

    The ``k``-th smallest and ``k``-th largest samples, with the largest ``k`` whose interval still covers the
    true median with probability ``coverage`` (a binomial tail); the whole range when there are too few
    samples for that (8 or fewer at 95%).

    >>> median_interval(range(1, 10))
    (2, 8)
    >>> median_interval([3.0, 1.0, 2.0])
    (1.0, 3.0)
    """
    ordered = sorted(samples)
    n = len(ordered)
    tail, k = 0.0, 0
    while k < n // 2:
        tail += math.comb(n, k) / 2**n  # P(fewer than k + 1 samples fall below the median)
        if tail > (1 - coverage) / 2:
            break
        k += 1
    k = max(k, 1)
    return ordered[k - 1], ordered[n - k]


def summary(samples, margin=MARGIN):
    """``(median, (low, high))``: the value a goal judges and its band."""
    samples = list(samples)
    if not samples:
        raise ValueError("summary: no samples; a row needs at least one round")
    middle = statistics.median(samples)
    low, high = median_interval(samples)
    return middle, (min(low, middle * (1 - margin)), max(high, middle * (1 + margin)))


def judge(goal, band, at_least=False):
    """``"holds"``, ``"missed"`` or ``"within noise"``: where the band ``(low, high)`` sits against ``goal``."""
    good = [(v >= goal) if at_least else (v <= goal) for v in band]
    if all(good):
        return "holds"
    return "within noise" if any(good) else "missed"
