"""Tangent types: symbolic zeros, "nothing to differentiate", lazy tangents, and how cotangents add.

``ZeroTangent`` and ``NoTangent`` are never materialised inside the engine;
``Thunk`` defers work until a cotangent is really needed; :func:`is_inexact` says which dtypes have
tangents at all.  ``Tangent``, the structural tangent of an object other than a builtin container, is in
:mod:`autodiff._structural`.
"""

from ._structural import Tangent


def is_inexact(dtype):
    """Whether values of ``dtype`` carry derivatives: float or complex ones (numpy's "inexact" kinds), never
    ints, bools, strings or objects.  The one test behind ``is_differentiable`` and traversal's ``isnumeric``.

    >>> import numpy as np
    >>> is_inexact(np.dtype(np.float32)), is_inexact(np.dtype(complex)), is_inexact(np.dtype(int))
    (True, True, False)
    """
    return dtype.kind in "fc"


class _Marker:
    """A falsy singleton per subclass: ``ZeroTangent() is ZeroTangent()``."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __bool__(self):
        return False


class ZeroTangent(_Marker):
    """The derivative is zero (the value is connected, but nothing flows).

    >>> ZeroTangent() is ZeroTangent()
    True
    """

    __slots__ = ()
    _instance = None


class NoTangent(_Marker):
    """There is nothing to differentiate: ints, bools, strings, functions.

    >>> NoTangent()
    NoTangent()
    """

    __slots__ = ()
    _instance = None


ZERO = ZeroTangent()


class Thunk:
    """A lazy cotangent: ``fn()`` runs only when the value is needed, and at most once.

    >>> t = Thunk(lambda: 3.0)
    >>> t.evaluated
    False
    >>> unthunk(t), t.evaluated
    (3.0, True)
    """

    __slots__ = ("fn", "value", "evaluated")

    def __init__(self, fn):
        self.fn = fn
        self.value = None
        self.evaluated = False

    def __call__(self):
        if not self.evaluated:
            self.value = unthunk(self.fn())
            self.evaluated = True
            self.fn = None
        return self.value

    def __repr__(self):
        state = f"evaluated={self.value!r}" if self.evaluated else "unevaluated"
        return f"Thunk({state})"


def unthunk(x):
    """Evaluate ``x`` if it is a :class:`Thunk`; return anything else unchanged.

    >>> unthunk(2.5)
    2.5
    """
    return x() if type(x) is Thunk else x


def add_tangents(a, b):
    """Accumulate two cotangents: zero + x = x, thunks unthunked, structures field-wise.

    >>> add_tangents(ZeroTangent(), 2.0), add_tangents(None, 2.0)
    (2.0, 2.0)
    >>> add_tangents((1.0, ZeroTangent()), (2.0, 3.0))
    (3.0, 3.0)
    """
    if type(a) in _NOTHING:
        return a if b is None else b
    if type(b) in _NOTHING:
        return a
    if type(a) is Thunk or type(b) is Thunk:  # a thunk may turn out to be a zero: decide again
        return add_tangents(unthunk(a), unthunk(b))
    add = _ADD_STRUCTURE.get(type(a))
    return a + b if add is None else add(a, b)


_NOTHING = frozenset((type(None), ZeroTangent, NoTangent))  # the types of cotangents that add nothing


def _add_sequences(a, b):
    return type(a)(add_tangents(x, y) for x, y in zip(a, b))


def _add_fields(a, b):
    keys = list(a) + [k for k in b if k not in a]
    return {k: add_tangents(a.get(k), b.get(k)) for k in keys}


def _add_structs(a, b):
    return Tangent(a.primal_type, _add_fields(a.fields, b.fields))


_ADD_STRUCTURE = {tuple: _add_sequences, list: _add_sequences, dict: _add_fields, Tangent: _add_structs}
