"""What :func:`autodiff.trace` sees of ``vmap``: every primitive a batch level ran, and which rule it took.

The core tells observers about every push of a ``jvp`` (``_forward.observers``), every pullback
(``_backward.observers``) and every push of a batch level (``_batching.observers``).  While a trace runs,
a push made on the tracing thread is reported to its ``Trace``
(:meth:`~autodiff._study.trace.Trace.observe_batch`); the observer is added by the first trace that runs and
removed by the last (a count, under a lock, so threads that trace at once leave the list as they found it).

A ``BatchPush`` is one row of a batch level's listing: the push, the batching rule that ran (its name), the
batch axes in (``0`` batched, ``None`` the same for every example) and out, and the marks of every level
when it started, which tell the rows its rule recorded on lower levels.
"""

import inspect
import threading
from functools import partial

from .. import _batching
from .._batch_rules import batch_rule_of, loop
from .._traced import Traced, _state

_lock = threading.Lock()
_count = [0]  # traces running, on any thread


class watching_batches:
    """Context manager: report every batch push of this thread to the trace being recorded (through the core's
    ``_batching.observers``, while at least one trace runs)."""

    def __enter__(self):
        with _lock:
            if _count[0] == 0:
                _batching.observers.append(_observe)
            _count[0] += 1
        return self

    def __exit__(self, *exc):
        with _lock:
            _count[0] -= 1
            if _count[0] == 0:
                _batching.observers.remove(_observe)
        return False


def _observe(level, prim, args, kwargs):
    """Before a push: the marks now, and what to report once it has run (nothing off the tracing thread)."""
    tracer = _state.__dict__.get("tracer")
    if tracer is None:
        return None
    before = tracer.marks_now()

    def done(result):
        tracer.observe_batch(level, prim, args, kwargs, result, BatchPush(level, prim, args, kwargs, result, before))

    return done


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
