"""Key paths: where a node sits inside a model."""

import re
from collections.abc import Sequence

from ._functor import children, rebuild

__all__ = ["KeyPath", "getkeypath", "haskeypath", "setkeypath"]


class KeyPath(tuple):
    """A tuple of keys: str for dict keys and attributes, int for sequence positions (0-based).

    >>> p = KeyPath("layers", 2, "weight")
    >>> p
    KeyPath('layers', 2, 'weight')
    >>> str(p)
    'layers[2].weight'
    >>> p + KeyPath("x") == KeyPath("layers", 2, "weight", "x")
    True
    """

    def __new__(cls, *keys):
        return super().__new__(cls, keys)

    def __add__(self, other):
        return KeyPath(*tuple.__add__(self, tuple(other)))

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return KeyPath(*got) if isinstance(index, slice) else got

    def __repr__(self):
        return "KeyPath(" + ", ".join(map(repr, self)) + ")"

    def __str__(self):
        out = ""
        for k in self:
            out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
        return out or "(root)"

    @classmethod
    def parse(cls, text):
        """The key path a printed one names: ``"layers[0].weight"`` is ``KeyPath("layers", 0, "weight")``.

        >>> KeyPath.parse("layers[0].weight")
        KeyPath('layers', 0, 'weight')
        >>> KeyPath.parse(str(KeyPath(1, "b"))) == KeyPath(1, "b")
        True
        """
        if text == "(root)":
            return cls()
        keys, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or (m.group(2) is not None and pos and not m.group(0).startswith(".")):
                raise ValueError(
                    f"KeyPath.parse: cannot read {text!r} at position {pos}; write keys as in "
                    "str(KeyPath(...)): 'layers[0].weight' (names joined by '.', positions in [])"
                )
            keys.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
            pos = m.end()
        return cls(*keys)


_TOKEN = re.compile(r"\[(-?\d+)\]|\.?([^.\[\]]+)")


def getkeypath(x, path):
    """The node of ``x`` at ``path``: a KeyPath (or tuple of keys), or a printed one such as ``"a[1].b"``.

    A string that is a key of ``x`` itself means that key; any other string is read by
    :meth:`KeyPath.parse`.  A bool is refused as a sequence position (``True`` is not ``1`` here).

    >>> getkeypath({"a": [1.0, {"b": 2.0}]}, KeyPath("a", 1, "b"))
    2.0
    >>> getkeypath({"a": [1.0, {"b": 2.0}]}, "a[1].b"), getkeypath({"a.b": 3.0}, "a.b")
    (2.0, 3.0)
    """
    path = _as_keypath(x, path, "getkeypath")
    node = x
    for depth, key in enumerate(path):
        kids = _children(node, key, path[:depth], "getkeypath")
        if key not in kids:
            raise KeyError(
                f"getkeypath: no key {key!r} at {path[:depth]}; the node there is a "
                f"{type(node).__name__} with keys {list(kids)}"
            )
        node = kids[key]
    return node


def haskeypath(x, path):
    """True when ``path`` leads to a node of ``x``; ``path`` is read as for :func:`getkeypath`.

    >>> haskeypath({"a": [1.0]}, KeyPath("a", 0)), haskeypath({"a": [1.0]}, KeyPath("a", 1))
    (True, False)
    >>> haskeypath({"a": [1.0]}, "a[0]")
    True
    """
    path = _as_keypath(x, path, "haskeypath")
    node = x
    for depth, key in enumerate(path):
        kids = _children(node, key, path[:depth], "haskeypath")
        if key not in kids:
            return False
        node = kids[key]
    return True


def setkeypath(x, path, value):
    """A copy of ``x`` with the node at ``path`` replaced by ``value`` (``x`` is not mutated).

    ``path`` is read as for :func:`getkeypath`.  Only that one position changes: where ``x``
    holds one array (or one shared layer) at several positions, a tie, the others keep the old
    one, so the tie is broken there.  To change every tied position, use ``fmap``.

    >>> setkeypath({"a": [1.0, 2.0]}, KeyPath("a", 1), 5.0)
    {'a': [1.0, 5.0]}
    >>> import numpy as np
    >>> w = np.ones(2)
    >>> new = setkeypath({"enc": w, "dec": w}, "dec", np.zeros(2))
    >>> new["enc"] is w, new["dec"]
    (True, array([0., 0.]))
    """
    path = _as_keypath(x, path, "setkeypath")
    if not path:
        return value
    getkeypath(x, path)  # raises naming the missing key
    key, rest = path[0], path[1:]
    kids = children(x)
    kids[key] = setkeypath(kids[key], rest, value)
    return rebuild(x, kids)


def _as_keypath(x, path, fn):
    """``path`` as a KeyPath; a string names a key of ``x`` if it is one, else is parsed as a printed key path."""
    if not isinstance(path, str):
        return KeyPath(*path)
    if path in children(x):
        return KeyPath(path)
    try:
        return KeyPath.parse(path)
    except ValueError as e:
        raise ValueError(f"{fn}: {path!r} is not a key of the {type(x).__name__} at the root, and {e}") from None


def _children(node, key, where, fn):
    """``children(node)``, refusing a bool as a position: a list would take ``True`` as 1."""
    if isinstance(key, bool) and isinstance(node, Sequence):
        raise TypeError(f"{fn}: the key {key!r} at {where} is a bool, but the {type(node).__name__} there is "
                        f"indexed by int positions; write {int(key)} if you mean position {int(key)}")
    return children(node)
