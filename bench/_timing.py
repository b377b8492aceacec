"""What every benchmark shares: the best of repeated timings, the context, result rows, and the check
that ours and torch agree before anything is timed."""

import gc
import statistics
import time
from dataclasses import dataclass, field

import numpy as np


def timed_runs(fn, repeats=15, min_time=0.05):
    """Per-call times of ``repeats`` runs, each about ``min_time / 5`` long, after one warm-up call.

    The cyclic garbage collector is paused while timing, as ``timeit`` does, for ours and torch alike:
    otherwise a full collection of everything the process holds lands in whichever step is unlucky.
    """
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        return _runs(fn, repeats, min_time)
    finally:
        if enabled:
            gc.enable()


def _runs(fn, repeats, min_time):
    fn()  # warm up (and compile anything lazy)
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_time / 5:
            break
        calls *= 2
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls)
    return runs


def try_torch(threads=1):
    """torch if installed (``threads`` intra-op threads, or its default with ``None``), else ``None``."""
    try:
        import torch
    except ImportError:
        return None
    if threads is not None:
        torch.set_num_threads(threads)
    return torch


class Mismatch(AssertionError):
    """Ours and the reference disagree: the benchmark stops before timing anything."""


@dataclass
class Context:
    """Settings for one run: quick or full, torch (or None), and a suite whose result to corrupt (a self-test)."""

    quick: bool = True
    torch: object = None
    inject: str = ""
    repeats: int = 15
    spreads: list = field(default_factory=list)  # median / best of every timing: how noisy the machine was

    def check(self, suite, ours, theirs, rtol=1e-5, atol=1e-8):
        """Raise :class:`Mismatch` unless every array in ``ours`` is close to ``theirs``."""
        ours, theirs = list(ours), list(theirs)
        if self.inject and self.inject in suite:
            ours[0] = np.asarray(ours[0]) + 1.0  # a deliberately wrong result
        for k, (a, b) in enumerate(zip(ours, theirs)):
            a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
                worst = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("nan")
                raise Mismatch(f"{suite}: result {k} differs from the reference (largest difference {worst:.3g}, "
                               f"shapes {a.shape} and {b.shape}); nothing was timed")

    def time(self, fn):
        """The best of the repeated runs, for ours and torch alike.

        The best, not the median, because other tenants of this virtual machine slow some runs by up to
        2×, at random; as ``timeit``'s documentation says, the slower runs measure the interference, not
        the code.  How far the medians sat above the best is kept in ``spreads`` and reported.
        """
        runs = timed_runs(fn, repeats=self.repeats, min_time=0.03 if self.quick else 0.1)
        best = min(runs)
        self.spreads.append(statistics.median(runs) / best)
        return best


@dataclass
class Row:
    """One line of the table.  Times are seconds; ``value`` is the number the goal judges."""

    suite: str
    ours: float = None
    torch: float = None
    floor: float = None
    value: float = None
    goal: float = None
    goal_text: str = ""
    at_least: bool = False
    note: str = ""
    unit: str = "s"  # what ours/torch/floor are measured in: seconds, or "MB"

    @property
    def ratio(self):
        base = self.torch or self.floor
        return self.ours / base if base and self.ours and self.unit == "s" else None

    @property
    def held(self):
        if self.goal is None or self.value is None:
            return None
        return self.value >= self.goal if self.at_least else self.value <= self.goal
