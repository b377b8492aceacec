"""``Tangent``: the structural tangent of an object other than a builtin container (design.md section 2).

A dataclass or registered class gets its gradient as a ``Tangent`` naming the primal type, its fields read as
attributes or by key.  Its arithmetic is in :mod:`autodiff._tangent_algebra`.
"""

from collections.abc import Mapping

import numpy as np


class Tangent(Mapping):
    """The structural tangent of an object of type ``primal_type``: a read-only mapping of its fields.

    Fields are read as attributes or by key; absent fields are ``None``.  As a
    ``Mapping`` it has ``keys``, ``items``, ``values``, ``len``, ``in`` and
    ``dict(g)`` (a field named like one of those methods is read by key).
    Tangents of one primal type form a vector space, leaf by leaf: ``c * g``,
    ``g * c``, ``g / c``, ``-g``, ``g + h``, ``g - h``.  ``None`` means zero, so
    it stays ``None`` under scaling and ``None + x`` is ``x``.  Scale by a traced
    scalar as ``g * c`` (a traced ``c`` in ``c * g`` tries its own operator first).

    >>> import collections
    >>> g = Tangent(collections.Counter, {"weight": 1.0, "bias": None})
    >>> g.weight, g["bias"], dict(g), len(g), "weight" in g
    (1.0, None, {'weight': 1.0, 'bias': None}, 2, True)
    >>> g
    Tangent[Counter](weight=1.0, bias=None)
    >>> 2 * g - g / 2
    Tangent[Counter](weight=1.5, bias=None)
    """

    __slots__ = ("primal_type", "fields")
    __array_ufunc__ = None  # numpy scalars defer to our operators: np.float32(0.5) * g scales g

    def __init__(self, primal_type, fields):
        _set_primal_type(self, primal_type)
        _set_fields(self, dict(fields))

    def __getattr__(self, name):
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(
                f"Tangent[{self.primal_type.__name__}] has no field {name!r}; "
                f"fields are {list(self.fields)}"
            ) from None

    def __getitem__(self, key):
        return self.fields[key]

    def __setattr__(self, name, value):
        raise AttributeError("Tangent is immutable")

    def __iter__(self):
        return iter(self.fields)

    def __len__(self):
        return len(self.fields)

    def __eq__(self, other):
        return (
            type(other) is Tangent
            and other.primal_type is self.primal_type
            and other.fields.keys() == self.fields.keys()
            and all(_same(self.fields[k], other.fields[k]) for k in self.fields)
        )

    __hash__ = None

    def __add__(self, other):
        return arithmetic.add(self, other, "+")

    def __radd__(self, other):
        return arithmetic.add(other, self, "+")

    def __sub__(self, other):
        return arithmetic.add(self, arithmetic.negate(other, "-"), "-")

    def __rsub__(self, other):
        return arithmetic.add(other, arithmetic.negate(self, "-"), "-")

    def __neg__(self):
        return arithmetic.negate(self, "-")

    def __mul__(self, c):
        return arithmetic.scale(self, c, "*", lambda x: x * c)

    def __rmul__(self, c):
        return arithmetic.scale(self, c, "*", lambda x: c * x)

    def __truediv__(self, c):
        return arithmetic.scale(self, c, "/", lambda x: x / c)

    def __repr__(self):
        body = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"Tangent[{self.primal_type.__name__}]({body})"


arithmetic = None
"""The module with the arithmetic, :mod:`autodiff._tangent_algebra`, which puts itself here when imported
(``autodiff`` imports it): it walks trees, and the tree walkers import this module, so it cannot be imported here."""


_set_primal_type = Tangent.__dict__["primal_type"].__set__  # the slots' own setters: no __setattr__ detour
_set_fields = Tangent.__dict__["fields"].__set__


def tangent_of(primal_type, fields):
    """``Tangent(primal_type, fields)`` that keeps ``fields`` (a fresh dict nobody else holds) without copying it."""
    tangent = object.__new__(Tangent)
    _set_primal_type(tangent, primal_type)
    _set_fields(tangent, fields)
    return tangent


def _same(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, (Tangent, tuple, list, dict)):
        return a == b
    return bool(np.array_equal(a, b))
