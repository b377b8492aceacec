"""Comparing two trees: ``tree_equal`` (bit for bit) and ``tree_allclose``, each naming the first difference.

Checking that a resumed run is the run it resumed (``save`` then ``load``, an optimiser state after N steps)
needs more than ``==``: ``==`` on two arrays gives an array, on two optimiser ``Leaf`` objects it compares
arrays inside and raises, and ``fleaves`` sees such a ``Leaf`` as one leaf.  These walk both trees
together, iteratively, in traversal order, and stop at the first difference, reported by key path:

- the same container types with the same keys (a dataclass registered as a leaf, such as an optimiser's
  ``Leaf``, is opened by its fields: ``state.layers[0].weight.state[1]``);
- arrays: the same dtype and shape, and every element the same bits (``tree_equal``: NaN equals NaN,
  ``0.0`` differs from ``-0.0``) or close (``tree_allclose``: ``|a - b| <= atol + rtol * |b|``, NaNs in the
  same places; dtypes may differ there);
- numbers: the same type, then as arrays; other leaves (strings, functions, ``None``): ``is`` or ``==``;
- the same ties: where one tree holds one array (or mutable container) at two positions, so does the
  other (a resumed model whose tie was broken would train differently); tuples and frozen dataclasses
  (an optimiser's rule) are values.
"""

import dataclasses
import numbers

import numpy as np

from autodiff._for_traversal import node_of
from autodiff.extend import value_of

from ._functor import children
from ._keypath import KeyPath

__all__ = ["tree_equal", "tree_allclose", "assert_tree_equal", "assert_tree_allclose", "TreeComparison"]


class TreeComparison:
    """The result of :func:`tree_equal` or :func:`tree_allclose`: true when the trees match.

    ``path`` is the :class:`KeyPath` of the first difference (``None`` when they match) and ``reason`` says
    what differs there; ``str()`` is the report.

    >>> result = tree_equal({"w": np.ones(2)}, {"w": np.array([1.0, 2.0])})
    >>> bool(result), result.path, result.reason
    (False, KeyPath('w'), 'element (1,) is 1.0 against 2.0')
    """

    __slots__ = ("path", "reason")

    def __init__(self, path=None, reason=""):
        self.path, self.reason = path, reason

    def __bool__(self):
        return self.path is None

    def __str__(self):
        return "the trees match" if self.path is None else f"the trees differ at {self.path}: {self.reason}"

    def __repr__(self):
        return f"TreeComparison({'equal' if self.path is None else str(self)!s})"


def tree_equal(a, b):
    """Do ``a`` and ``b`` match bit for bit: structure, dtypes, shapes, every element's bits, and ties?

    >>> w = np.array([1.0, np.nan])
    >>> bool(tree_equal({"w": w, "n": 3}, {"w": w.copy(), "n": 3}))
    True
    >>> tree_equal({"w": w, "n": 3}, {"w": w.astype(np.float32), "n": 3})
    TreeComparison(the trees differ at w: dtype float64 != float32)
    >>> print(tree_equal([w, w], [w, w.copy()]))
    the trees differ at [1]: a holds the same object here as at [0], b does not (a tie differs)
    """
    return _compare(a, b, _bitwise)


def tree_allclose(a, b, rtol=1e-7, atol=0.0):
    """Do ``a`` and ``b`` match up to ``|a - b| <= atol + rtol * |b|`` at every element (NaNs in the same
    places), with the same structure, shapes and ties?  Dtypes may differ.

    >>> print(tree_allclose({"w": np.ones(3)}, {"w": np.array([1.0, 1.0, 1.1])}, rtol=1e-3))
    the trees differ at w: element (2,) is 1.0 against 1.1 (rtol=0.001, atol=0.0)
    >>> bool(tree_allclose({"w": np.ones(3)}, {"w": np.ones(3, np.float32) + 1e-9}))
    True
    """

    def close(x, y):
        return _close(x, y, rtol, atol)

    return _compare(a, b, close)


def assert_tree_equal(a, b):
    """Raise ``AssertionError`` with :func:`tree_equal`'s report unless ``a`` and ``b`` match bit for bit.

    >>> assert_tree_equal({"w": np.ones(2)}, {"w": np.zeros(2)})
    Traceback (most recent call last):
    AssertionError: the trees differ at w: element (0,) is 1.0 against 0.0
    """
    result = tree_equal(a, b)
    if not result:
        raise AssertionError(str(result))


def assert_tree_allclose(a, b, rtol=1e-7, atol=0.0):
    """Raise ``AssertionError`` with :func:`tree_allclose`'s report unless ``a`` and ``b`` are close.

    >>> assert_tree_allclose([np.ones(2)], [np.ones(2) + 1e-9], rtol=1e-6)
    >>> assert_tree_allclose([np.ones(2)], [np.zeros(2)], atol=0.5)
    Traceback (most recent call last):
    AssertionError: the trees differ at [0]: element (0,) is 1.0 against 0.0 (rtol=1e-07, atol=0.5)
    """
    result = tree_allclose(a, b, rtol, atol)
    if not result:
        raise AssertionError(str(result))


def _compare(a, b, leaves_match):
    """Walk ``a`` and ``b`` together (an explicit stack, no recursion); the first difference, or a match."""
    seen_a, seen_b = {}, {}  # id of an object that can be tied -> the path it was first met at
    stack = [(a, b, KeyPath())]
    while stack:
        x, y, path = stack.pop()
        seen, reason = _tie(x, y, path, seen_a, seen_b)
        if reason:
            return TreeComparison(path, reason)
        if seen:  # both met before at one path, and compared there
            continue
        kx, ky = _children(x), _children(y)
        if kx is None and ky is None:
            reason = _leaf_difference(x, y, leaves_match)
            if reason:
                return TreeComparison(path, reason)
            continue
        reason = _node_difference(x, y, kx, ky)
        if reason:
            return TreeComparison(path, reason)
        stack.extend((kx[k], ky[k], path + KeyPath(k)) for k in reversed(list(kx)))
    return TreeComparison()


def _tie(x, y, path, seen_a, seen_b):
    """``(met before?, why the ties differ or "")``.  Arrays and mutable containers can be tied (by identity);
    numbers, strings and tuples are values."""
    if not (_tieable(x) or _tieable(y)):
        return False, ""
    first_a = seen_a.setdefault(id(x), path) if _tieable(x) else path
    first_b = seen_b.setdefault(id(y), path) if _tieable(y) else path
    if first_a == first_b:
        return first_a != path, ""
    if first_a != path:
        return False, f"a holds the same object here as at {first_a}, b does not (a tie differs)"
    return False, f"b holds the same object here as at {first_b}, a does not (a tie differs)"


def _tieable(x):
    """Arrays and mutable containers; a tuple or a frozen dataclass (an optimiser's rule) is a value."""
    if isinstance(x, np.ndarray):
        return True
    if isinstance(x, tuple) or (dataclasses.is_dataclass(x) and x.__dataclass_params__.frozen):
        return False
    return _children(x) is not None


def _children(x):
    """``x``'s children as a dict, or ``None`` at a leaf; a dataclass registered as a leaf (an optimiser's
    ``Leaf``) is opened by its fields."""
    if node_of(x) is not None:
        return children(x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
    return None


def _node_difference(x, y, kx, ky):
    if type(x) is not type(y):
        return f"a has a {_name(x)}, b has a {_name(y)}"
    if list(kx) != list(ky):
        return f"the keys differ: a has {list(kx)}, b has {list(ky)}"
    return ""


def _leaf_difference(x, y, leaves_match):
    if x is y:
        return ""
    vx, vy = value_of(x), value_of(y)
    if _is_number(vx) and _is_number(vy):
        return leaves_match(vx, vy)
    if _is_number(vx) or _is_number(vy) or type(x) is not type(y):  # True == 1, but a bool is no int here
        return f"a has a {_name(x)}, b has a {_name(y)}"
    try:
        same = bool(x == y)
    except Exception as e:  # noqa: BLE001 (an object whose == cannot answer: report it)
        return f"a {_name(x)} and a {_name(y)} that == cannot compare ({type(e).__name__}: {e})"
    return "" if same else f"{x!r} != {y!r}"


def _is_number(v):
    return isinstance(v, (np.ndarray, np.generic, numbers.Number)) and not isinstance(v, bool) and (
        not isinstance(v, np.ndarray) or v.dtype.kind in "biufc")


def _bitwise(x, y):
    """Why two numbers or arrays differ bit for bit (``""`` if they do not)."""
    if type(x) is not type(y) and not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
        return f"a has a {_name(x)}, b has a {_name(y)}"
    ax, ay = np.asarray(x), np.asarray(y)
    if ax.dtype != ay.dtype:
        return f"dtype {ax.dtype} != {ay.dtype}"
    if ax.shape != ay.shape:
        return f"shape {ax.shape} != {ay.shape}"
    size = ax.dtype.itemsize
    bits_x = np.ascontiguousarray(ax).reshape(-1).view(np.uint8).reshape(-1, size)
    bits_y = np.ascontiguousarray(ay).reshape(-1).view(np.uint8).reshape(-1, size)
    differs = (bits_x != bits_y).any(axis=1)
    return _first(ax, ay, differs, "")


def _close(x, y, rtol, atol):
    """Why two numbers or arrays are not close (``""`` if they are)."""
    ax, ay = np.asarray(x), np.asarray(y)
    if ax.shape != ay.shape:
        return f"shape {ax.shape} != {ay.shape}"
    near = np.isclose(ax, ay, rtol=rtol, atol=atol, equal_nan=True)
    return _first(ax, ay, ~near.reshape(-1), f" (rtol={rtol}, atol={atol})")


def _first(ax, ay, differs, note):
    if not differs.any():
        return ""
    k = int(np.flatnonzero(differs)[0])
    where = np.unravel_index(k, ax.shape) if ax.shape else ()
    at = f"element {tuple(int(i) for i in where)}" if ax.shape else "the value"
    return f"{at} is {ax.reshape(-1)[k].item()!r} against {ay.reshape(-1)[k].item()!r}{note}"


def _name(x):
    return type(x).__name__
