"""Composable walks and the one executor that runs them (after Functors.jl's ``walks.jl``).

A walk's ``visit(x, ys, path)`` either finishes a node at once, returning
``Done(value)``, or asks for its children to be walked first, returning
``Expand(keys, xs, ys, finish)``; ``finish(results)`` then builds the node's
value.  Each walk adds one feature and wraps another.  The executor is
iterative, so a model nested 10,000 deep is fine, and it refuses cycles by
key path.
"""

from autodiff.extend import cycle_error

from ._cache import usecache
from ._functor import children, rebuild
from ._keypath import KeyPath


class Done:
    """A node finished without walking into it; ``cacheable=False`` keeps ``CachedWalk`` from storing it.

    >>> Done(3).value, Done(3, cacheable=False).cacheable
    (3, False)
    """

    __slots__ = ("value", "cacheable")

    def __init__(self, value, cacheable=True):
        self.value, self.cacheable = value, cacheable


class Expand:
    """A node whose children (``xs``, with the other trees' ``ys``) are walked first.

    >>> step = DefaultWalk().visit({"a": 1}, (), KeyPath())
    >>> step.keys, step.xs, step.finish([2])
    (['a'], [1], {'a': 2})
    """

    __slots__ = ("keys", "xs", "ys", "finish")

    def __init__(self, keys, xs, ys, finish):
        self.keys, self.xs, self.ys, self.finish = keys, xs, ys, finish


def split(x, ys, path, keys=None):
    """The children of ``x`` (optionally only ``keys``) and, by the same keys, of every tree in ``ys``.

    A ``None`` in ``ys`` stands for a whole missing subtree (e.g. "no gradient here").
    The building block for a custom walk's ``visit``.

    >>> split({"a": 1, "b": 2}, ({"a": 10, "b": 20}, None), KeyPath())
    (['a', 'b'], [1, 2], [(10, None), (20, None)])
    """
    kids = children(x)
    keys = list(kids) if keys is None else keys
    per_tree = [_matching(kids, y, path, i + 2) for i, y in enumerate(ys)]
    kid_ys = [tuple(t[k] for t in per_tree) for k in keys]
    return keys, [kids[k] for k in keys], kid_ys


def _matching(kids, y, path, which):
    if y is None:
        return dict.fromkeys(kids)
    ykids = children(y)
    if ykids.keys() != kids.keys():
        raise ValueError(
            f"the trees differ at {path}: the first tree has children {list(kids)} "
            f"but tree {which} ({type(y).__name__}) has {list(ykids)}; walk trees of the same structure"
        )
    return ykids


class DefaultWalk:
    """Walk into every child and rebuild the node, in its own type, from the results.

    >>> double = ExcludeWalk(DefaultWalk(), lambda path, x: x * 2, lambda x: not isinstance(x, list))
    >>> execute(double, [1, [2]])
    [2, [4]]
    """

    def visit(self, x, ys, path):
        keys, xs, kid_ys = split(x, ys, path)
        return Expand(keys, xs, kid_ys, lambda results: rebuild(x, results) if keys else x)


class StructuralWalk:
    """Walk into every child; build plain tuples, lists and dicts instead of the user's classes.

    >>> from collections import namedtuple
    >>> execute(StructuralWalk(), namedtuple("P", "a b")(1, 2))
    {'a': 1, 'b': 2}
    """

    def visit(self, x, ys, path):
        keys, xs, kid_ys = split(x, ys, path)
        return Expand(keys, xs, kid_ys, lambda results: _plain(x, keys, results))


def _plain(x, keys, results):
    if not keys:
        return x
    if type(x) is list or type(x) is tuple:
        return type(x)(results)
    return dict(zip(keys, results))


class FlattenWalk:
    """Walk into every child and build nothing (for walks run for their side effects).

    >>> seen = []
    >>> execute(ExcludeWalk(FlattenWalk(), lambda path, x: seen.append(x), lambda x: x == 2), [1, [2]])
    >>> seen
    [2]
    """

    def visit(self, x, ys, path):
        keys, xs, kid_ys = split(x, ys, path)
        return Expand(keys, xs, kid_ys, _nothing)


def _nothing(results):
    return None


class ExcludeWalk:
    """At nodes where ``exclude(x)`` holds, call ``leaf_fn(path, x, *ys)`` instead of walking in.

    >>> execute(ExcludeWalk(DefaultWalk(), lambda path, x: str(path), lambda x: x == 0), {"a": [0]})
    {'a': ['a[0]']}
    """

    def __init__(self, inner, leaf_fn, exclude):
        self.inner, self.leaf_fn, self.exclude = inner, leaf_fn, exclude

    def visit(self, x, ys, path):
        if self.exclude(x):
            return Done(self.leaf_fn(path, x, *ys))
        return self.inner.visit(x, ys, path)


class CachedWalk:
    """Reuse the result for a node met before (by identity); give ``prune`` instead if set.

    >>> from traversal import IdentityCache
    >>> shared = [1.0]
    >>> walk = CachedWalk(DefaultWalk(), IdentityCache(), NOPRUNE)
    >>> out = execute(walk, {"a": shared, "b": shared})
    >>> out["a"] is out["b"]
    True
    """

    def __init__(self, inner, cache, prune):
        self.inner, self.cache, self.prune = inner, cache, prune

    def visit(self, x, ys, path):
        if not usecache(x):
            return self.inner.visit(x, ys, path)
        if x in self.cache:
            return Done(self.cache.get(x) if self.prune is NOPRUNE else self.prune)
        step = self.inner.visit(x, ys, path)
        if type(step) is Done:
            if step.cacheable:
                self.cache.put(x, step.value)
            return step
        finish = step.finish

        def finish_and_store(results):
            value = finish(results)
            self.cache.put(x, value)
            return value

        step.finish = finish_and_store
        return step


class MissingWalk:
    """Where another tree holds ``None`` ("nothing here"), keep the first tree's node as it is.

    Neither the leaf function nor the inner walk sees that node.  The result is
    not cached: a tied node met again where the other trees do hold something
    is mapped there (a gradient may sit at a tie's later, trainable occurrence).

    >>> walk = MissingWalk(ExcludeWalk(DefaultWalk(), lambda path, x, g: x - g, lambda x: not isinstance(x, dict)))
    >>> execute(walk, {"a": 1.0, "b": {"c": 2.0}}, {"a": 0.5, "b": None})
    {'a': 0.5, 'b': {'c': 2.0}}
    """

    def __init__(self, inner):
        self.inner = inner

    def visit(self, x, ys, path):
        for y in ys:
            if y is None:
                return Done(x, cacheable=False)
        return self.inner.visit(x, ys, path)


class CollectWalk:
    """Record every node it visits, pre-order, in ``out``.

    >>> out = []
    >>> execute(CollectWalk(FlattenWalk(), out), [1, [2]])
    >>> out
    [[1, [2]], 1, [2], 2]
    """

    def __init__(self, inner, out):
        self.inner, self.out = inner, out

    def visit(self, x, ys, path):
        self.out.append(x)
        return self.inner.visit(x, ys, path)


class _NoPrune:
    def __repr__(self):
        return "NOPRUNE"


NOPRUNE = _NoPrune()


def execute(walk, x, *ys, path=KeyPath(), name=None):
    """Run ``walk`` over ``x`` (and ``ys`` in step) with an explicit stack; return the root's value.  A cycle
    raises naming its key path (and ``name``, the function walking, when given).

    >>> execute(StructuralWalk(), ([1], 2))
    ([1], 2)
    """
    step = walk.visit(x, ys, path)
    if type(step) is Done:
        return step.value
    stack = [(x, step, path, [])]
    on_path = {id(x)}
    while True:
        node, step, keypath, results = stack[-1]
        k = len(results)
        if k < len(step.keys):
            child, child_path = step.xs[k], keypath + (step.keys[k],)
            child_step = walk.visit(child, step.ys[k], child_path)
            if type(child_step) is Done:
                results.append(child_step.value)
            elif id(child) in on_path:
                raise cycle_error(child_path, name)
            else:
                on_path.add(id(child))
                stack.append((child, child_step, child_path, []))
            continue
        stack.pop()
        on_path.discard(id(node))
        value = step.finish(results)
        if not stack:
            return value
        stack[-1][3].append(value)
