"""oneDNN's reordered copies of the weights, kept for as long as a tape holds the weight unchanged.

oneDNN's forward and backward-data primitives read the weight in blocked layouts of their own, which
:mod:`._convolutions` makes by a reorder (one pass over the weight, on oneDNN's threads).  A weight a live
tape reads is read-only until the last such tape is done (design.md section 10), so while its buffer stays
held its values cannot change: the hold is the weight's version (:func:`autodiff._protection.hold_of`), and
a copy reordered under it is served again.  Once the tapes let go the weight may change in place (an
optimiser step, ``w -= lr * g``), and the next hold is a new version: the copy is reordered again, into the
same memory.  A weight no tape holds, or one still writeable through the array given (a view made before the
hold), is reordered at every call, as before.

It pays wherever one weight version meets one primitive twice: second order (the pullbacks call the
convolution and its input gradient again), ``hvp_operator`` and Krylov solvers (every product), a forward
run twice under one tape.  A first-order training step reads each weight once per direction, and the
forward and backward-data layouts differ (neither primitive has a fast kernel for the other's), so there
it saves only the allocation of the copy.  The copies cost the blocked weights' memory once per direction
and weight; a weight's copies are dropped when it is garbage collected.

>>> import numpy as np
>>> from autodiff._protection import hold, let_go
>>> calls = []
>>> def reorder(into):
...     calls.append(1)
...     return np.array(w) if into is None else np.copyto(into, w) or into
>>> w, direction = np.ones(3, np.float32), object()
>>> roots = [hold(w)]
>>> for _ in range(3):
...     copy = blocked(w, direction, reorder)
>>> len(calls), float(copy[0])
(1, 1.0)
>>> let_go(roots); w += 1; roots = [hold(w)]
>>> float(blocked(w, direction, reorder)[0]), len(calls)
(2.0, 2)
>>> let_go(roots)
"""

import threading
import weakref

import numpy as np

from autodiff._protection import hold_of

_copies = {}  # (id(weight), id(direction)) -> _Copy
_lock = threading.Lock()


class _Copy:
    """One weight's copy in one direction's layout, and the hold (version) it was reordered under."""

    __slots__ = ("weight", "direction", "array", "hold")

    def __init__(self, weight, direction, key):
        self.weight = weakref.ref(weight, lambda ref: _forget(key, ref))
        self.direction, self.array, self.hold = direction, None, None

    def serves(self, weight, direction):
        return self.weight() is weight and self.direction is direction


def _forget(key, ref):
    """Drop a garbage-collected weight's copy (no lock: a collection may run inside ``blocked``'s)."""
    copy = _copies.get(key)
    if copy is not None and copy.weight is ref:
        _copies.pop(key, None)


def _version(w):
    """The hold that versions ``w``'s values, or ``None`` when they may change under us."""
    if type(w) is not np.ndarray or w.dtype != np.float32 or not w.flags.c_contiguous or w.flags.writeable:
        return None
    return hold_of(w)


def blocked(w, direction, reorder):
    """``w`` in ``direction``'s layout: ``reorder(into)`` fills ``into`` (or, given ``None``, a new array) and
    returns it; its result is kept and served again while the same hold versions ``w``."""
    hold = _version(w)
    if hold is None:
        return reorder(None)
    key = (id(w), id(direction))
    with _lock:
        copy = _copies.get(key)
        if copy is None or not copy.serves(w, direction):
            copy = _copies[key] = _Copy(w, direction, key)
        if copy.hold is not hold:
            copy.array, copy.hold = reorder(copy.array), hold
        return copy.array


def clear():
    """Forget every kept copy."""
    with _lock:
        _copies.clear()


def kept():
    """How many copies are kept (for tests)."""
    return len(_copies)
