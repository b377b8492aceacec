"""Stripping tracing: ``value_of`` (every level but vmap's batches) and ``stop_gradient`` (a constant).

Both are core: rules read masks and signs through ``value_of``, and users hold a value constant with
``stop_gradient``.  While a rule written outside autodiff runs nested, the rule checks
(:mod:`autodiff._study.rule_checks`) put its traced arguments in :data:`watched`, so that a strip of one of
them is noted there; otherwise :data:`watched` is empty and a strip costs one test of an empty dict.
"""

import sys

import numpy as np

from ._batching import Batch, batch_depth, keep_batches
from ._protection import protect
from ._traced import Tape, Traced, staging_kinds, staging_of

# id(traced argument) -> the watch of the rule call given it; empty unless a user rule runs nested. One dict for
# all threads, so that value_of stays one test of an empty dict: two threads running rules nested at once, on
# the same traced object, may note a strip for the wrong call (a warning missed or misplaced, never a gradient).
watched = {}


def value_of(x):
    """Strip every level of tracing from ``x`` (noting it when a rule strips an argument it was given traced).

    Under ``vmap`` the batch levels stay: a value read for a mask or a sign still differs per example, so it
    comes back batched (with no derivative), and masks built from it by comparisons stay batched too.  Under
    ``jit`` the staging level stays for the same reason: the value differs per call (the program records the
    strip of the levels below it).

    >>> value_of(2.0)
    2.0
    """
    if watched and id(x) in watched:
        watched[id(x)].note(x, sys._getframe(1))
    while type(x) is Traced:
        if type(x.tape) is Batch:  # under vmap a value still differs per example: it stays batched
            return x if type(x.value) is not Traced else keep_batches(x)
        if type(x.tape) in staging_kinds:  # under jit it differs per call: it stays staged
            return x.tape.kept(x)
        x = x.value
    return x


def stop_gradient(x):
    """``x`` as a constant: every level of tracing stripped, so no derivative flows through it.

    The array returned is the one the tapes saved, which their pullbacks may
    still read, so it stays read-only until they are done (copy it to change it).
    Inside a rule, stripping an argument traced at a lower level is checked
    (:mod:`autodiff._study.rule_checks`).

    >>> import autodiff
    >>> autodiff.grad(lambda x: x * autodiff.stop_gradient(x))(3.0)
    3.0
    """
    if watched and id(x) in watched:
        watched[id(x)].note(x, sys._getframe(1))
    if type(x) is Traced and (batch_depth(x) or staging_of(x)):  # vmap's, jit's: no derivative, but still data
        return keep_batches(x)
    return _constant(x)


def _constant(x):
    """``x`` with every level of tracing stripped, protected for each live tape that saved it."""
    tapes = []
    while type(x) is Traced:
        tapes.append(x.tape)
        x = x.value
    if isinstance(x, np.ndarray):
        for tape in tapes:
            if type(tape) is Tape and not tape.done:  # a jvp's level (a Pushforward) saves nothing
                protect(tape, x)
    return x
