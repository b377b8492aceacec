"""Copies of the weights in the layouts the convolutions read, kept for as long as a tape holds the weight.

oneDNN's forward and backward-data primitives read the weight in blocked layouts of their own, which
:mod:`._convolutions` makes by a reorder (one pass over the weight, on oneDNN's threads); below the size
split the GEMMs read the ``(O, C·kh·kw)`` matrix of the taps that reach the image
(:func:`layers._onednn._primitives._trim`), a strided copy when some are left out.  A weight a live tape
reads is read-only until the last such tape is done (design.md section 10), so while its buffer stays held
its values cannot change: the hold is the weight's version (:func:`autodiff._protection.hold_of`), and a
copy made under it is served again, from its second use on (its third for a layout two directions share).
When the tapes let go, the copy goes with the hold: nothing is kept between steps.  The weight may then
change in place (an optimiser step, ``w -= lr * g``), and the next hold is a new version: the copy is made
again.
A weight no tape holds, or one still writeable through the array given (a view made before the hold), is
copied at every call, as before.  What design.md's protection cannot see, this cannot either: a write through
another view made before the hold, or past ``setflags(write=True)``, would change the tape's gradients too.

It pays wherever one weight version meets one layout twice: the forward and the input gradient below the
split (one matrix for both), second order (the pullbacks call the convolution and its input gradient
again), ``hvp_operator`` and Krylov solvers (every product), a forward run twice under one tape.  oneDNN's
forward and backward-data layouts differ (neither primitive has a fast kernel for the other's), so a
first-order step still reorders each weight once for each, and keeps nothing; below the split its forward
and input gradient read the one matrix twice, which is why that layout keeps from the third read
(``keep_from=3``): a first-order step keeps no copy at all.  The copies cost the copied weights' memory once
per layout only where they are read more often than that, and only while the tape that reads them lives.

>>> import numpy as np
>>> from autodiff._protection import hold, let_go
>>> calls = []
>>> def reorder():
...     calls.append(1)
...     return np.array(w)
>>> w, direction = np.ones(3, np.float32), object()
>>> roots = [hold(w)]
>>> for _ in range(4):
...     copy = copy_of(w, direction, reorder)
>>> len(calls), float(copy[0])  # the first use's copy was not kept; the second's served twice more
(2, 1.0)
>>> kept()
1
>>> let_go(roots)  # the tape is done: the copy goes with the hold
>>> kept()
0
>>> w += 1; roots = [hold(w)]
>>> float(copy_of(w, direction, reorder)[0]), len(calls)
(2.0, 3)
>>> let_go(roots)
"""

import functools
import threading
import weakref

import numpy as np

from autodiff._protection import hold_of

_copies = {}  # (id(weight), id(layout)) -> _Copy
_lock = threading.Lock()


class _Copy:
    """One weight's copy in one layout, the hold (version) it was made under, weakly, and how often that version
    was read in this layout."""

    __slots__ = ("weight", "layout", "array", "hold", "reads", "__weakref__")

    def __init__(self, weight, layout, key):
        self.weight = weakref.ref(weight, functools.partial(_forget, _copies, key))
        self.layout, self.array, self.hold, self.reads = layout, None, _gone, 0

    def serves(self, weight, layout):
        return self.weight() is weight and self.layout is layout

    def note(self, hold):
        """A new version: nothing kept yet; the copy will go when ``hold`` does."""
        self.array, self.reads = None, 0
        self.hold = weakref.ref(hold, functools.partial(_drop, weakref.ref(self)))


def _gone():
    return None


def _drop(copy, hold):
    """The hold a copy was made under is gone (its tapes are done): free the copy (no lock, as ``_forget``)."""
    copy = copy()
    if copy is not None and copy.hold is hold:
        copy.array = None


def _forget(copies, key, ref):
    """Drop a garbage-collected weight's copy (no lock: a collection may run inside ``copy_of``'s; the table
    is bound, not looked up, since at interpreter exit the module's globals may be gone)."""
    copy = copies.get(key)
    if copy is not None and copy.weight is ref:
        copies.pop(key, None)


def _version(w):
    """The hold that versions ``w``'s values, or ``None`` when they may change under us."""
    if type(w) is not np.ndarray or w.dtype != np.float32 or not w.flags.c_contiguous or w.flags.writeable:
        return None
    return hold_of(w)


def copy_of(w, layout, make, keep_from=2):
    """``w`` in ``layout`` (an object naming it: a oneDNN direction, a trim of the kernel), which ``make()``
    returns in new memory.  The copies of the first ``keep_from - 1`` reads under a hold are not kept (a
    first-order step reads each oneDNN layout once, and the trimmed matrix twice: keeping those copies would
    hold them all at once, for nothing); from read ``keep_from`` on, the copy is kept and served again while
    the same hold versions ``w``, and freed when that hold ends."""
    hold = _version(w)
    if hold is None:
        return make()
    key = (id(w), id(layout))
    with _lock:
        copy = _copies.get(key)
        if copy is None or not copy.serves(w, layout):
            copy = _copies[key] = _Copy(w, layout, key)
        if copy.hold() is not hold:  # a new version
            copy.note(hold)
        copy.reads += 1
        if copy.array is None and copy.reads >= keep_from:  # read often enough: keep it from now on
            copy.array = make()
        return make() if copy.array is None else copy.array
def clear():
    """Forget every kept copy."""
    with _lock:
        _copies.clear()


def kept():
    """How many copies are kept (for tests)."""
    return sum(copy.array is not None for copy in list(_copies.values()))
