"""Costs outside the steady state, each in fresh processes (``bench/_fresh.py``): the first
``total(sumsq, ·)`` over ResNet-18's parameters with a warm numba cache, ``import autodiff, traversal``,
and with ``--full`` torch's import time and numba's cold compile of every kernel.
Run alone: ``python -m bench --only system``."""

import statistics
import tempfile

from . import _fresh
from ._noise import Watch
from ._row import Row, absorb
from ._stats import summary

PROCESSES = {"quick": 2, "full": 7, "smoke": 1}  # measuring processes after the warming one


def first_call(ctx):
    """One process warms the caches a user's second session finds: numba's kernels (loaded, or compiled
    where missing) and Python's bytecode (``__pycache__``, which Python writes by default; the warming
    process writes it even where ``PYTHONDONTWRITEBYTECODE`` is set, as it is on this project's machine).
    Then fresh processes each time ``import autodiff, traversal`` and their first ``total``: the median of
    them is judged.  The warming process's import (from source where the cache was missing) is in the note."""
    cold = _fresh.run(["first_call"], env={"PYTHONDONTWRITEBYTECODE": ""})  # empty: Python writes bytecode
    with Watch(ctx.load) as watch:
        runs = [_fresh.run(["first_call"]) for _ in range(PROCESSES[ctx.mode])]
    rows = [_fresh_row("first total(sumsq, ·) over ResNet-18's parameters, warm cache",
                       [r["first_total"] for r in runs], 0.15, "≤ 150 ms"),
            _fresh_row("import autodiff, traversal", [r["import"] for r in runs], 0.3, "< 0.3 s")]
    rows[1].note += (f"; {cold['import'] * 1e3:.0f} ms in the warming process, which compiles from source what "
                     "has no bytecode cache yet (everything, in a fresh clone)")
    return [absorb(row, watch.result) for row in rows]


def _fresh_row(suite, samples, goal, goal_text):
    value, band = summary(samples)
    return Row(suite, ours=value, value=value, band=band, goal=goal, goal_text=goal_text, samples=samples,
               note=f"{len(samples)} fresh processes, {min(samples) * 1e3:.0f} to {max(samples) * 1e3:.0f} ms")


def torch_import(ctx):
    with Watch(ctx.load) as watch:
        seconds = [_fresh.run(["import_torch"])["import"] for _ in range(PROCESSES[ctx.mode])]
    row = Row("import torch", torch=statistics.median(seconds), goal_text="(reported)")
    return [absorb(row, watch.result)]


def numba_compile(ctx):
    with tempfile.TemporaryDirectory() as fresh, Watch(ctx.load) as watch:
        cold = _fresh.run(["warmup"], env={"NUMBA_CACHE_DIR": fresh})["warmup"]
        warm = _fresh.run(["warmup"], env={"NUMBA_CACHE_DIR": fresh})["warmup"]
    row = Row("numba: compile every kernel (autodiff.warmup, empty cache)", ours=cold, goal_text="(reported)",
              note=f"{warm:.2f} s from the on-disk cache; excluded from every other timing")
    return [absorb(row, watch.result)]


SUITES = [first_call]
FULL = [torch_import, numba_compile]
