"""Protection by count: the arrays live tapes read stay read-only until the last of them is done.

One registry, shared by every tape in every thread, counts the holds on each
base buffer (an array that owns its memory, or the last array in a view's
``.base`` chain).  The first hold on a buffer notes the writeable flag of the
buffer and of each view through which it was held, and clears it; when the
count drops back to zero each flag is put back as it was, the buffer first, so
its views can follow.  A view keeps its base read-only too, since a write
through the base would change the view's data (design.md section 10).

>>> import numpy as np
>>> flat = np.arange(4.0)
>>> w, b = flat[:2], flat[2:]
>>> roots = [hold(w), hold(b), hold(flat)]
>>> w.flags.writeable, flat.flags.writeable
(False, False)
>>> let_go(roots[:2])
>>> b.flags.writeable  # flat is still held, so its views stay read-only
False
>>> let_go(roots[2:])
>>> w.flags.writeable, b.flags.writeable, flat.flags.writeable
(True, True, True)
"""

import threading

import numpy as np

# Reentrant: a pullback collected by the garbage collector mid-``hold`` lets go of its tape's arrays from
# inside this thread's critical section (both orders keep the counts right, see ``hold``).
_lock = threading.RLock()
_held = {}  # id(base buffer) -> _Hold


class _Hold:
    """The holds on one base buffer: how many, and the flags to put back (the buffer's, then its views')."""

    __slots__ = ("count", "root", "writeable", "views")

    def __init__(self, root):
        self.count, self.root, self.writeable, self.views = 0, root, root.flags.writeable, None
        root.setflags(write=False)

    def note(self, chain):
        """Clear the flag of every view on ``chain`` (a view first, the root last) not noted yet."""
        views = self.views if self.views is not None else {}
        self.views = views
        for depth, array in enumerate(reversed(chain[:-1]), 1):
            if id(array) not in views:
                views[id(array)] = (depth, array, array.flags.writeable)
                array.setflags(write=False)

    def restore(self):
        if self.writeable:
            self.root.setflags(write=True)
        if self.views is not None:
            for _, array, writeable in sorted(self.views.values(), key=_depth):  # bases before their views
                if writeable:
                    _make_writeable(array)


def _depth(noted):
    return noted[0]


def hold(array):
    """Count one more hold on ``array``'s buffer, making it (and ``array``) read-only; returns the buffer."""
    root, chain = array, None
    while isinstance(root.base, np.ndarray):  # numpy collapses view chains, so this is usually one step
        chain = chain or [array]
        root = root.base
        chain.append(root)
    with _lock:
        held = _held.get(id(root))
        if held is None:
            held = _held[id(root)] = _Hold(root)
        held.count += 1  # before anything below may allocate (and so collect): a nested let_go sees our hold
        if chain is not None:
            held.note(chain)
    return root


def let_go(roots):
    """Drop one hold on each buffer in ``roots``; a buffer no longer held gets its flags back."""
    with _lock:
        for root in roots:
            held = _held[id(root)]
            held.count -= 1
            if not held.count:
                del _held[id(root)]
                held.restore()


def _make_writeable(array):
    """Set ``array`` writeable; a view its user made writeable over a read-only base needs the base unlocked
    for a moment (numpy refuses otherwise), as it was when the view was made."""
    try:
        array.setflags(write=True)
    except ValueError:
        base = array.base
        try:
            base.setflags(write=True)
        except ValueError:
            return  # its memory is not writable at all (e.g. a bytes buffer): nothing to give back
        try:
            array.setflags(write=True)
        finally:
            base.setflags(write=False)


def held_count(array):
    """How many holds the registry has on ``array``'s buffer (0 when none): for tests and ``show``."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    held = _held.get(id(root))
    return 0 if held is None else held.count
