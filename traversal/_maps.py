"""fmap and its family, each a short assembly of walks."""

from autodiff.extend import value_of

from ._cache import IdentityCache
from ._functor import children, isleaf
from ._walks import (
    NOPRUNE,
    CachedWalk,
    CollectWalk,
    DefaultWalk,
    ExcludeWalk,
    FlattenWalk,
    MissingWalk,
    StructuralWalk,
    execute,
)

__all__ = [
    "fmap", "fmapstructure", "fmap_with_path", "fmapstructure_with_path", "fleaves", "fcollect", "NOPRUNE",
]


def _assemble(inner, leaf_fn, exclude, cache, prune, several):
    walk = ExcludeWalk(inner, leaf_fn, exclude)
    walk = MissingWalk(walk) if several else walk
    return CachedWalk(walk, IdentityCache(), prune) if cache else walk


def _leaf_fn(f, with_path):
    """``f`` at one leaf: the other trees' leaves checked against it first, f's failure named by key path."""

    def apply(path, leaf, *ys):
        for which, y in enumerate(ys, start=2):
            _check_same_leaf(path, leaf, y, which)
        try:
            return f(path, leaf, *ys) if with_path else f(leaf, *ys)
        except Exception as e:
            raise RuntimeError(
                f"fmap: f raised {type(e).__name__} on the leaf at {path} ({_describe(leaf)}): {e}; "
                "to visit only the parameters pass exclude=traversal.isnumeric, or let f return "
                "other leaves unchanged"
            ) from e

    return apply


def _check_same_leaf(path, leaf, y, which):
    shape, other = getattr(leaf, "shape", None), getattr(y, "shape", None)
    if shape is None:
        return
    if other is None and children(y):
        raise ValueError(f"fmap: the trees differ at {path}: the first tree has a leaf ({_describe(leaf)}) but "
                         f"tree {which} has a {type(y).__name__}; walk trees of the same structure")
    if other is not None and tuple(other) not in (tuple(shape), ()):  # a scalar per leaf (np.float64) is fine
        raise ValueError(f"fmap: the trees differ at {path}: the first tree has shape {tuple(shape)}, tree "
                         f"{which} has shape {tuple(other)}; walk trees of the same structure and leaf shapes")


def _describe(leaf):
    """``numpy.ndarray of shape (4, 3), dtype float32``, or ``numpy.ufunc, no shape``."""
    t = type(leaf)
    name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    if getattr(leaf, "shape", None) is None:
        return f"{name}, no shape"
    return f"{name} of shape {tuple(leaf.shape)}, dtype {getattr(value_of(leaf), 'dtype', '?')}"


def fmap(f, x, *ys, exclude=isleaf, walk=None, cache=True, prune=NOPRUNE):
    """Apply ``f`` to every leaf of ``x`` (and the matching leaves of ``ys``), rebuilding the structure.

    The structure comes from ``x``.  By default every leaf is visited (ints,
    strings, functions too, as in Functors.jl); pass ``exclude=isnumeric`` to
    visit only the parameter arrays and carry everything else over.  With
    several trees, ``f(leaf, *other_leaves)``; where another tree holds ``None``
    ("no gradient here") ``f`` is not called and ``x``'s node is kept, and trees
    that differ in structure or leaf shape raise, naming the key path.  With
    ``cache=True`` a node met again (by identity, keyed on ``x``) gives the
    same result, so ties are kept; ``prune`` replaces repeats instead.  When
    ``f`` raises, the error names the leaf's key path, type and shape.

    >>> import numpy as np
    >>> s = np.array([1.0, 2.0])
    >>> out = fmap(lambda a: a * 10, {"a": s, "b": s, "n": (3, "x")})
    >>> out["a"], out["a"] is out["b"], out["n"]
    (array([10., 20.]), True, (30, 'xxxxxxxxxx'))
    >>> fmap(lambda a: a * 10, {"a": s, "b": s}, prune=None)["b"] is None
    True
    >>> fmap(lambda x, g: x - g, {"w": s, "n": 3}, {"w": s, "n": None})
    {'w': array([0., 0.]), 'n': 3}
    """
    walk = _assemble(walk or DefaultWalk(), _leaf_fn(f, False), exclude, cache, prune, bool(ys))
    return execute(walk, x, *ys)


def fmapstructure(f, x, *ys, exclude=isleaf, cache=True, prune=NOPRUNE):
    """Like :func:`fmap`, but containers come back as plain dicts, tuples and lists.

    A node kept because another tree holds ``None`` there comes back as it is.

    >>> from collections import namedtuple
    >>> P = namedtuple("P", "a b")
    >>> fmapstructure(lambda v: v + 1, P(1, [2, 3]))
    {'a': 2, 'b': [3, 4]}
    """
    return fmap(f, x, *ys, exclude=exclude, walk=StructuralWalk(), cache=cache, prune=prune)


def fmap_with_path(f, x, *ys, exclude=isleaf, walk=None, cache=True, prune=NOPRUNE):
    """Like :func:`fmap`, calling ``f(keypath, leaf, *ys)``.

    >>> fmap_with_path(lambda p, v: str(p), {"a": [1, 2]})
    {'a': ['a[0]', 'a[1]']}
    """
    return execute(_assemble(walk or DefaultWalk(), _leaf_fn(f, True), exclude, cache, prune, bool(ys)), x, *ys)


def fmapstructure_with_path(f, x, *ys, exclude=isleaf, cache=True, prune=NOPRUNE):
    """Like :func:`fmapstructure`, calling ``f(keypath, leaf, *ys)``.

    >>> fmapstructure_with_path(lambda p, v: len(p), ([1], 2))
    ([2], 1)
    """
    return fmap_with_path(f, x, *ys, exclude=exclude, walk=StructuralWalk(), cache=cache, prune=prune)


def fleaves(x, exclude=isleaf):
    """The leaves of ``x`` in traversal order, duplicates kept.

    >>> import numpy as np
    >>> s = np.zeros(1)
    >>> len(fleaves({"a": s, "b": [s, 3]}))
    3
    """
    out = []
    execute(ExcludeWalk(FlattenWalk(), lambda path, leaf: out.append(leaf), exclude), x)
    return out


def fcollect(x, exclude=lambda node: False):
    """Every node of ``x``, pre-order, each shared (mutable) node once; ``exclude`` prunes subtrees.

    >>> inner = [1.0]
    >>> fcollect({"a": inner, "b": inner})
    [{'a': [1.0], 'b': [1.0]}, [1.0], 1.0]
    """
    out = []
    walk = ExcludeWalk(CollectWalk(FlattenWalk(), out), lambda path, node: None, exclude)
    execute(CachedWalk(walk, IdentityCache(), NOPRUNE), x)
    return out
