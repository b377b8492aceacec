"""The second-order suite (issue 20): Krylov methods over HVPs, Gauss-Newton products, per-example gradients,
MAML and Hutchinson, each ours beside the fastest of torch's approaches.

The programs are in :mod:`bench.second_order_tasks`; this module only checks and times them.  Each task's
results are checked against every torch approach before anything is timed.  The torch approach raced is the
fastest of them in a short look (one call each after a warm-up, best of three), and the row names it.

Ours races at one thread too (``bench._timing.ours_one_thread``: numpy's BLAS and our kernel thread), as torch
does, and each side is judged at its faster setting.  These tasks are small GEMMs between Python steps, and
some hand our operator to scipy, whose OpenBLAS is a second thread pool: on two cores its spinning workers and
numpy's two BLAS threads share the cores, and the Lanczos row ran 1.8 times slower at default threads than at
one (torch's own threads collapse the same way, which is why its one-thread run is there).  The
tasks take seconds per round, so they run with ``--full`` or when named: ``python -m bench --only
second_order``.
"""

import time

from . import second_order_tasks
from ._row import Row, record
from ._timing import Mismatch, ours_one_thread


def _checked(task):
    """``task.ours()`` checked against every torch approach (raising :class:`Mismatch` before any timing)."""
    result = task.ours()
    for name, variant in task.torch_variants.items():
        try:
            task.check(result, variant())
        except AssertionError as e:
            raise Mismatch(f"{task.name}: ours and {name} disagree ({e}); nothing was timed") from None


def _fastest(variants):
    """The name of the variant with the shortest single call, best of three after a warm-up call."""
    def best(fn):
        fn()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    return min(variants, key=lambda name: best(variants[name]))


def _suite(setup):
    def suite(ctx):
        task = setup(ctx.torch)
        _checked(task)
        goal_text = "(no goal yet)" if task.goal is None else f"ours/reference ≤ {task.goal:g}"
        row = Row(task.name, goal=task.goal, goal_text=goal_text, note=task.note)
        if not task.torch_variants:
            return [record(row, ctx.race({"ours": task.ours}), value="ours")]
        chosen = _fastest(task.torch_variants)
        own = chosen.startswith("ours")  # a reference of our own (the 1-D w row): the floor, not torch
        lane = "floor" if own else "torch"
        row.note = f"{task.note}; reference: {chosen}" if task.note else f"reference: {chosen}"
        contenders = {"ours": task.ours, lane: task.torch_variants[chosen]}
        twin = None if own else ours_one_thread(task.ours)
        if twin is not None:
            contenders[twin.name] = twin
        rounds = ctx.race(contenders)
        return [record(row, rounds, value=("ours", lane))]

    suite.__name__ = setup.__name__
    return suite


SUITES = []
FULL = [_suite(setup) for setup in second_order_tasks.SETUPS]  # seconds per round: --full, or --only second_order
