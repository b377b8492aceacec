"""Costs outside the steady state, each in fresh processes (``bench/_fresh.py``): the first
``total(sumsq, ·)`` over ResNet-18's parameters with a warm numba cache (reported), ``import autodiff,
traversal`` against ``import torch``, and with ``--full`` torch's import time alone and numba's cold compile
of every kernel.
Run alone: ``python -m bench --only system``."""

import statistics
import tempfile

from . import _fresh
from ._noise import Watch
from ._row import Row, absorb
from ._stats import summary

PROCESSES = {"quick": 2, "full": 7, "smoke": 1}  # measuring processes after the warming one
IMPORT_GOAL = 0.25  # a research library should load in a fraction of torch's time


def first_call(ctx):
    """One process warms the caches a user's second session finds: numba's kernels (loaded, or compiled
    where missing) and Python's bytecode (``__pycache__``, which Python writes by default; the warming
    process writes it even where ``PYTHONDONTWRITEBYTECODE`` is set, as it is on this project's machine).
    Then fresh processes each time ``import autodiff, traversal`` and their first ``total``: the median of
    them is judged.  The warming process's import (from source where the cache was missing) is in the note."""
    cold = _fresh.run(["first_call"], env={"PYTHONDONTWRITEBYTECODE": ""})  # empty: Python writes bytecode
    with Watch(ctx.load) as watch:
        runs = [_fresh.run(["first_call"]) for _ in range(PROCESSES[ctx.mode])]
        theirs = None if ctx.torch is None or ctx.busy else [_fresh.run(["import_torch"])["import"] for _ in runs]
    first = [r["first_total"] for r in runs]
    rows = [_fresh_row("first total(sumsq, ·) over ResNet-18's parameters, warm cache", first),
            _import_row([r["import"] for r in runs], theirs)]
    rows[1].note += (f"; {cold['import'] * 1e3:.0f} ms in the warming process, which compiles from source what "
                     "has no bytecode cache yet (everything, in a fresh clone)")
    ctx.observe(watch.result)
    return [absorb(row, watch.result) for row in rows]


def _fresh_row(suite, samples):
    """A row reporting the median of ``samples`` (seconds, one per fresh process), with no goal: an absolute
    time says more about the machine than about us."""
    value = statistics.median(samples)
    return Row(suite, ours=value, goal_text="(reported)", samples=samples,
               note=f"{len(samples)} fresh processes, {min(samples) * 1e3:.0f} to {max(samples) * 1e3:.0f} ms")


def _import_row(ours, theirs):
    """``import autodiff, traversal`` against ``import torch``, each in fresh processes, paired run by run."""
    row = _fresh_row("import autodiff, traversal", ours)
    if theirs:
        row.torch = statistics.median(theirs)
        row.goal, row.goal_text = IMPORT_GOAL, f"ours/import torch ≤ {IMPORT_GOAL}"
        row.value, row.band = summary([a / b for a, b in zip(ours, theirs)])
        row.ratio = row.value
    return row


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
