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
_held = {}  # id(base buffer) -> [how many holds it has, its writeable flag before the first hold]


class _Record(list):
    """``[how many holds, the writeable flag before the first]``: a list that can be weakly referenced, so that
    what is computed under a hold (:func:`hold_of`) can go when the hold does."""

    __slots__ = ("__weakref__",)

_views = {}  # id(base buffer) -> {id(view): (depth below the buffer, view, its writeable flag)}


def hold(array):
    """Count one more hold on ``array``'s buffer, making it (and ``array``) read-only; returns the buffer."""
    root, chain = array, None
    while root.base is not None and isinstance(root.base, np.ndarray):  # numpy collapses view chains
        chain = chain or [array]
        root = root.base
        chain.append(root)
    with _lock:
        _count(id(root), root)
        if chain is not None:
            _note_views(id(root), chain)
    return root


def hold_each(arrays, roots):
    """:func:`hold` each array not yet in ``roots`` (a dict id(array) -> its buffer), under one lock: the
    arrays a tape takes in at once (a model's parameters) share it."""
    with _lock:
        for array in arrays:
            key = id(array)
            if key not in roots:
                roots[key] = hold(array) if array.base is not None else _count(key, array)


def _count(key, root):
    """One more hold on the buffer ``root`` (the lock held); the first notes its writeable flag and clears it."""
    held = _held.get(key)
    if held is None:  # counted before anything below may allocate (and so collect): a nested let_go sees it
        _held[key] = _Record((1, root.flags.writeable))
        root.setflags(write=False)
    else:
        held[0] += 1
    return root


def _note_views(key, chain):
    """Clear the flag of every view on ``chain`` (a view first, the buffer last) not noted yet."""
    views = _views.setdefault(key, {})
    for depth, array in enumerate(reversed(chain[:-1]), 1):
        if id(array) not in views:
            views[id(array)] = (depth, array, array.flags.writeable)
            array.setflags(write=False)


def let_go(roots):
    """Drop one hold on each buffer in ``roots``; a buffer no longer held gets its flags back."""
    with _lock:
        for root in roots:
            key = id(root)
            held = _held[key]
            held[0] -= 1
            if held[0]:
                continue
            del _held[key]
            if held[1]:  # put back the flags noted at the first hold: the buffer's first, so its views can follow
                try:
                    root.setflags(write=True)
                except ValueError:
                    _make_writeable(root)
            if key in _views:
                _restore_views(_views.pop(key))


def _restore_views(views):
    """Put back the flags of the views noted at the first hold, bases before views."""
    for _, array, was_writeable in sorted(views.values(), key=_depth):
        if was_writeable:
            _make_writeable(array)


def _depth(noted):
    return noted[0]


def _make_writeable(array):
    """Set ``array`` writeable; a view its user made writeable over a read-only base needs the base unlocked
    for a moment (numpy refuses otherwise), as it was when the view was made."""
    try:
        array.setflags(write=True)
    except ValueError:
        base = array.base
        if not isinstance(base, np.ndarray):  # memory numpy cannot vouch for (e.g. a foreign buffer): it stays
            return  # read-only, so a write fails loudly rather than change what a pullback read
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
    held = hold_of(array)
    return 0 if held is None else held[0]


def hold_of(array):
    """The registry's record of the holds on ``array``'s buffer, or ``None`` when no tape holds it.

    The record is one object for as long as the buffer stays held, and a new one once it was let go and held
    again, so it versions the values: something computed from a held array (oneDNN's reordered copy of a
    weight) stays right while ``hold_of(array)`` is the object it was computed under (compare with ``is``), and
    a weak reference to it dies when the last hold is let go.

    >>> w = np.ones(3)
    >>> first = hold(w); version = hold_of(w)
    >>> hold_of(w) is version, hold_of(np.ones(3))
    (True, None)
    >>> let_go([first]); w += 1; again = hold(w)
    >>> hold_of(w) is version
    False
    >>> let_go([again])
    """
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    return _held.get(id(root))


# A tape's holds: each tape counts an array once, in ``tape.protected`` (id -> the buffer it holds).


def protect(tape, array):
    """Keep ``array`` (and the arrays it views) read-only while ``tape`` may read it.

    An in-place change to an array a pullback will read would give a silently
    wrong gradient; this turns it into numpy's "assignment destination is
    read-only" error at the mutation site.  Protection is counted per base
    buffer across tapes and threads (the registry above), so the
    array is writable again, if it was before, once the last tape reading it
    is released.  Each tape counts an array once.
    """
    if id(array) not in tape.protected:
        tape.protected[id(array)] = hold(array)


def protect_inside(tape, value):
    """Protect every array inside ``value``: an index tuple, a list, a dict of keyword arguments."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, np.ndarray):
            protect(tape, x)
        elif type(x) in NESTED:
            stack.extend(x.values() if type(x) is dict else x)


NESTED = frozenset((tuple, list, dict))  # containers an entry's arguments may hold arrays in


def release(tape):
    """Give back every array ``tape`` protected; each becomes writable once no live tape reads it."""
    tape.done = True
    tape.residuals.clear()
    if tape.protected:
        let_go(tape.protected.values())
        tape.protected.clear()
