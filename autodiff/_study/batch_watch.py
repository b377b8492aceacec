"""What :func:`autodiff.trace` sees of ``vmap``: every primitive a batch level ran, and which rule it took.

The core tells observers about every push of a ``jvp`` (``_forward.observers``) and every pullback
(``_backward.observers``); a batch level (:class:`autodiff._batching.Batch`) has no such list.  So while a
trace runs, ``Batch.push`` is wrapped: a push made on the tracing thread is reported to its ``Trace``
(:meth:`~autodiff._study.trace.Trace.observe_batch`), any other runs as before.  The wrapper is installed
by the first trace that runs and removed by the last (a count, under a lock, so threads that trace at once
leave ``Batch.push`` as they found it).

A ``BatchPush`` is one row of a batch level's listing: the push, the batching rule that ran (its name), the
batch axes in (``0`` batched, ``None`` the same for every example) and out, and the marks of every level
when it started, which tell the rows its rule recorded on lower levels.
"""

import inspect
import threading
from functools import partial

from .._batch_rules import batch_rule_of, loop
from .._batching import Batch
from .._traced import Traced, _state

_lock = threading.Lock()
_installed = {"count": 0, "push": None}


class watching_batches:
    """Context manager: report every batch push of this thread to the trace being recorded."""

    def __enter__(self):
        with _lock:
            if _installed["count"] == 0:
                _installed["push"] = Batch.push
                Batch.push = _observed_push
            _installed["count"] += 1
        return self

    def __exit__(self, *exc):
        with _lock:
            _installed["count"] -= 1
            if _installed["count"] == 0:
                Batch.push = _installed["push"]
        return False


def _observed_push(level, prim, args, kwargs):
    run = _installed["push"]
    tracer = _state.__dict__.get("tracer")
    if tracer is None:
        return run(level, prim, args, kwargs)
    before = tracer.marks_now()
    result = run(level, prim, args, kwargs)
    tracer.observe_batch(level, prim, args, kwargs, result, BatchPush(level, prim, args, kwargs, result, before))
    return result


class BatchPush:
    """How one primitive ran under a batch level: its rule's name, the batch axes in and out, the marks."""

    def __init__(self, level, prim, args, kwargs, result, before):
        self.rule = rule_name(batch_rule_of(prim, level, args, kwargs))
        self.axes_in = tuple(0 if type(a) is Traced and a.tape is level else None for a in args)
        self.axis_out = 0 if type(result) is Traced and result.tape is level else None
        self.before = before


def rule_name(rule):
    """``elementwise``, ``matmul_rule``, ``loop over the examples``: what a batching rule is called; a rule
    made by wrapping another (``first_only`` around ``reduction``) is ``first_only(reduction)``.

    >>> rule_name(partial(loop, print)), rule_name(rule_name)
    ('loop over the examples', 'rule_name')
    """
    if type(rule) is partial and rule.func is loop:
        return "loop over the examples"
    name = getattr(rule, "__qualname__", type(rule).__name__).split(".<locals>")[0]
    inner = _wrapped_rule(rule)
    return f"{name}({rule_name(inner)})" if inner is not None else name


def _wrapped_rule(rule):
    """The rule a wrapper closes over as ``rule`` (``first_only``'s, ``reduction``'s), or ``None``."""
    try:
        inner = inspect.getclosurevars(rule).nonlocals.get("rule")
    except TypeError:  # not a Python function
        return None
    return inner if callable(inner) and inner is not rule else None
