"""The one table of places where an acceleration may stand in for the reference code.

A **slot** has a name, a line saying what it does, and a default: the reference function, which is always
right.  Code that may be accelerated calls its slot through :data:`hooks` (``hooks.record(prim, tape, args,
kwargs)``), so a reader sees at the call site that something may replace it, and this table says what.  An
**acceleration** is a named switch: it fills some slots (possibly none: a kernel engine, threads, buffer
pools) through :func:`fill`, and only there; ``autodiff/_accel/__init__.py`` fills autodiff's slots,
``traversal/_accel`` and ``optimisers/_accel.py`` theirs, each once at import.  Nothing else assigns to a
slot, to another module's globals or to a primitive.

Two switches, read once at import: ``AUTODIFF_REFERENCE=1`` leaves every slot at its default and every
acceleration off; ``AUTODIFF_ACCEL_OFF=name,name`` leaves out the accelerations named.  :func:`accelerations`
lists each one, the slots it fills, whether it is on, and why not.

>>> import autodiff
>>> reference, what, current = slots()["record"]
>>> reference.__name__, (current is reference) == (REFERENCE or "record" in OFF)
('_record', True)
"""

import os
from typing import NamedTuple

REFERENCE = os.environ.get("AUTODIFF_REFERENCE", "") == "1"
OFF = frozenset(filter(None, os.environ.get("AUTODIFF_ACCEL_OFF", "").replace(" ", "").split(",")))


class _Slots:
    """Each slot's current function, as an attribute: ``hooks.record``, ``hooks.backward``, ..."""

    def __repr__(self):
        return f"<hooks: {', '.join(sorted(vars(self)))}>"


hooks = _Slots()
_slots = {}  # slot name -> (reference function, what it does)
_accelerations = {}  # acceleration name -> Acceleration


class Acceleration(NamedTuple):
    """One acceleration as :func:`accelerations` reports it."""

    name: str
    what: str
    slots: tuple  # the slots it fills (empty for an engine other accelerations and layers call)
    on: bool
    why: str  # "on", or why it is off


def slot(name, reference, what):
    """Declare the slot ``name`` with its ``reference`` function (the default) and what it does."""
    if name in _slots:
        raise ValueError(f"autodiff hooks: the slot {name!r} is declared twice; slot names are unique")
    _slots[name] = (reference, what)
    setattr(hooks, name, reference)


def enabled(name):
    """Is the acceleration ``name`` switched on (not ``AUTODIFF_REFERENCE=1``, not in ``AUTODIFF_ACCEL_OFF``)?"""
    return not REFERENCE and name not in OFF


def _why_off(name, available, reason):
    if REFERENCE:
        return "off: AUTODIFF_REFERENCE=1"
    if name in OFF:
        return "off: named in AUTODIFF_ACCEL_OFF"
    return "on" if available else f"off: {reason}"


def fill(name, what, available=True, reason="", **functions):
    """Put ``functions`` (slot name -> function) in their slots when the acceleration ``name`` is on and
    ``available`` (else ``reason`` says why not); note it for :func:`accelerations` either way."""
    unknown = sorted(set(functions) - set(_slots))
    if unknown:
        raise ValueError(f"autodiff hooks: {name} fills {unknown}, which no module declared; declare each slot "
                         f"with _hooks.slot(name, reference, what) beside its reference function")
    why = _why_off(name, available, reason)
    if why == "on":
        for slot_name, function in functions.items():
            setattr(hooks, slot_name, function)
    _accelerations[name] = Acceleration(name, what, tuple(functions), why == "on", why)


def accelerations():
    """``{name: Acceleration}`` for every acceleration filled so far: what it does, the slots it fills, whether
    it is on and why not.  Importing ``autodiff``, ``traversal``, ``optimisers`` and ``layers`` fills theirs.

    >>> import autodiff
    >>> autodiff.accelerations()["record"].slots
    ('record',)
    """
    return dict(_accelerations)


def slots():
    """``{slot name: (reference function, what it does, current function)}``."""
    return {name: (ref, what, getattr(hooks, name)) for name, (ref, what) in _slots.items()}
