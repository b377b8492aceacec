"""Traced values, tapes and nesting levels.

Each differentiation opens a :class:`Tape` one level above the innermost
active tape of the current thread.  A :class:`Traced` value carries its
value, its tape (and so its level) and its index on that tape.  Because the
value inside may itself be a ``Traced`` of a lower level, an inner derivative
never confuses an outer variable for its own.
"""

import threading

import numpy as np

from ._protection import hold_each, protect, release

_state = threading.local()

# The level types that stage a program rather than compute (``autodiff.jit``'s, registered by ``autodiff._jit``,
# as containers are): their values stand for data that differs per call, so stripping levels keeps them.
staging_kinds = set()
# thread id -> the staging level tracing in that thread; empty unless a jit is tracing, so that a primitive
# called on plain values tests one empty dict before it runs (a jit stages those calls too: their constants)
ambient = {}


class Tape:
    """One differentiation's record: a list of entries, appended in order.

    An entry is ``(primitive, parents, argnums, ans, args, kwargs)``; inputs
    are entries whose primitive is ``None``.  ``residuals`` maps an entry's
    index to what its primitive's forward handed to its pullback (only for
    primitives defined with ``defvjp_fwd_bwd``).  ``active`` is true while the
    forward function runs; a traced value of a closed tape that reaches a
    primitive has leaked out of its differentiation.  An entry keeps only what
    its pullbacks read (:mod:`autodiff._residuals`), unless ``keeps_all``.
    """

    __slots__ = ("level", "entries", "residuals", "active", "done", "protected", "keeps_all", "__weakref__")

    def __init__(self, level):
        self.level = level
        self.entries = []
        self.residuals = {}
        self.active = True
        self.done = False  # released: nothing reads its arrays any more
        self.protected = {}  # id(array) -> its base buffer, for every array this tape reads
        self.keeps_all = False  # linearize's JVP rules and autodiff.trace's listing read every value


class Traced:
    """A value being differentiated at ``level``; the value may be traced too.

    Under a ``jvp`` (forward mode, :mod:`autodiff._forward`) ``tape`` is the
    level's ``Pushforward`` and ``tangent`` the value's tangent; nothing is recorded.
    """

    __slots__ = ("value", "level", "tape", "index", "tangent")

    def __init__(self, value, tape, index, level=None):
        self.value = value
        self.level = tape.level if level is None else level
        self.tape = tape
        self.index = index

    def __repr__(self):
        return f"Traced({self.value!r}, level={self.level})"


class DetachError(TypeError):
    """A traced value would become a plain one (``float``, ``np.asarray``, ``a[i] = x``, ``.item()``).

    ``autodiff.numpy`` raises it.  numpy reports ``a[i] = x`` into a plain array (a 0-d or one-element ``x``)
    as its own ``ValueError`` ("setting an array element with a sequence", since a traced value can be
    indexed), raised from this error; the differentiation that the value belongs to raises this error again
    as it closes (:func:`surfaced`), so the caller sees the one that says what to do.  Public as
    ``autodiff.DetachError``.

    >>> import autodiff
    >>> try:
    ...     autodiff.grad(lambda x: float(x))(1.0)
    ... except autodiff.DetachError as e:
    ...     print(type(e).__name__)
    DetachError
    """


DetachError.__module__ = "autodiff"  # where a user catches it


def surfaced(error):
    """The :class:`DetachError` numpy hid behind ``error``, its own ``ValueError`` raised from it; else ``None``."""
    cause = error.__cause__
    if type(error) is ValueError and isinstance(cause, DetachError):
        return type(cause)(*cause.args).with_traceback(error.__traceback__)
    return None


def close_level(level, error):
    """Close ``level`` (a tape, a batch, a pushforward), the innermost open one: no longer active, this thread
    back at the level below.  When the block raised ``error``, a :class:`DetachError` numpy hid behind its own
    ``ValueError`` (``a[i] = x`` into a plain array) is raised in its place."""
    level.active = False
    _state.level = level.level - 1
    detached = surfaced(error) if error is not None else None
    if detached is not None:
        raise detached from None


def current_level():
    """The level of the innermost open tape in this thread (0 when none)."""
    return getattr(_state, "level", 0)


class open_tape:
    """Context manager: open a tape at the next level of this thread (a ``kind`` of :class:`Tape`)."""

    __slots__ = ("tape", "kind")

    def __init__(self, kind=Tape):
        self.kind = kind

    def __enter__(self):
        level = current_level() + 1
        _state.level = level
        self.tape = self.kind(level)
        tracer = _state.__dict__.get("tracer")  # this thread's; no AttributeError raised and caught when unset
        if tracer is not None:
            tracer.tapes.append(self.tape)
            self.tape.keeps_all = True
        return self.tape

    def __exit__(self, kind, value, traceback):
        if kind is not None:  # the forward failed: nothing will read the saved arrays
            release(self.tape)
        close_level(self.tape, value)
        return False


def new_input(tape, value):
    """Put ``value`` on ``tape`` as an input and return its traced stand-in."""
    if type(value) is np.ndarray:
        protect(tape, value)
    return unprotected_input(tape, value)


def new_inputs(tape, values):
    """:func:`new_input` for each of ``values``, the arrays among them protected together (one lock)."""
    hold_each([v for v in values if type(v) is np.ndarray], tape.protected)
    return [unprotected_input(tape, v) for v in values]


def unprotected_input(tape, value):
    """:func:`new_input` for a caller that protects the array itself, with :func:`new_inputs`'s ``hold_each``."""
    entries = tape.entries
    entries.append((None, (), (), value, (), None))  # an input keeps its value where outputs keep theirs
    return Traced(value, tape, len(entries) - 1, tape.level)


def staging_of(x):
    """The staging level (``autodiff.jit``'s) on ``x``'s chain of levels, or ``None``."""
    while type(x) is Traced:
        if type(x.tape) in staging_kinds:
            return x.tape
        x = x.value
    return None


def value_of(x):
    """Strip every level of tracing from ``x`` (for its shape, dtype or type; a read of its data goes through
    ``autodiff.extend.plain_value``, which a jit notes)."""
    while type(x) is Traced:
        x = x.value
    return x
