"""fmap and its family, each a short assembly of walks."""

from ._cache import IdentityCache
from ._functor import isleaf
from ._walks import (
    NOPRUNE,
    CachedWalk,
    CollectWalk,
    DefaultWalk,
    ExcludeWalk,
    FlattenWalk,
    StructuralWalk,
    execute,
)

__all__ = [
    "fmap", "fmapstructure", "fmap_with_path", "fmapstructure_with_path", "fleaves", "fcollect", "NOPRUNE",
]


def _assemble(inner, leaf_fn, exclude, cache, prune):
    walk = ExcludeWalk(inner, leaf_fn, exclude)
    return CachedWalk(walk, IdentityCache(), prune) if cache else walk


def fmap(f, x, *ys, exclude=isleaf, walk=None, cache=True, prune=NOPRUNE):
    """Apply ``f`` to every leaf of ``x`` (and the matching leaves of ``ys``), rebuilding the structure.

    The structure comes from ``x``; a ``None`` in ``ys`` stands for a missing
    subtree.  With ``cache=True`` a node met again (by identity, keyed on
    ``x``) gives the same result, so ties are kept; ``prune`` replaces
    repeats instead.

    >>> import numpy as np
    >>> s = np.array([1.0, 2.0])
    >>> out = fmap(lambda a: a * 10, {"a": s, "b": s, "n": (3, "x")})
    >>> out["a"], out["a"] is out["b"], out["n"]
    (array([10., 20.]), True, (30, 'xxxxxxxxxx'))
    >>> fmap(lambda a: a * 10, {"a": s, "b": s}, prune=None)["b"] is None
    True
    """
    leaf_fn = lambda path, leaf, *rest: f(leaf, *rest)  # noqa: E731
    return execute(_assemble(walk or DefaultWalk(), leaf_fn, exclude, cache, prune), x, *ys)


def fmapstructure(f, x, *ys, exclude=isleaf, cache=True, prune=NOPRUNE):
    """Like :func:`fmap`, but containers come back as plain dicts, tuples and lists.

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
    return execute(_assemble(walk or DefaultWalk(), f, exclude, cache, prune), x, *ys)


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
