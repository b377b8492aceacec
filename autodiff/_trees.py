"""Iterative walks over nested arguments, for tracing inputs and building gradients.

No recursion: a model nested 10,000 deep is walked with an explicit stack.
A container met again on its own path is a cycle and raises with the key path.
"""

from itertools import islice

from ._containers import node_of, trainable_filter
from ._hooks import slot
from ._paths import cycle_error, format_path


def transform(root, leaf_fn, node_fn, path=()):
    """Rebuild ``root`` bottom-up: ``leaf_fn(path, leaf)`` at leaves,
    ``node_fn(path, x, node, keys, results)`` at containers."""
    node = node_of(root)
    if node is None:
        return leaf_fn(path, root)
    stack = [_frame(root, node, path)]
    on_path = {id(root)}
    while True:
        x, node, keys, kids, results, fpath = stack[-1]
        i = len(results)
        while i < len(kids):
            child = kids[i]
            child_node = node_of(child)
            if child_node is not None:
                break
            results.append(leaf_fn(fpath + (keys[i],), child))
            i += 1
        if i < len(kids):  # descend into a container child
            if id(child) in on_path:
                raise cycle_error(format_path(fpath + (keys[i],)))
            on_path.add(id(child))
            stack.append(_frame(child, child_node, fpath + (keys[i],)))
            continue
        stack.pop()
        on_path.discard(id(x))
        value = node_fn(fpath, x, node, keys, results)
        if not stack:
            return value
        stack[-1][4].append(value)


def _frame(x, node, path):
    keys, kids = node.children(x)
    return [x, node, keys, kids, [], path]


def rebuild_node(path, x, node, keys, results):
    return node.rebuild(x, results)


def tangent_node(path, x, node, keys, results):
    """A ``transform`` node function building structural tangents: ``x``'s tangent with these children, ``None``
    when every child is ``None`` (as in ``grad``)."""
    if all(r is None for r in results):
        return None
    return node.tangent(x, keys, results)


def leaves(root, path=()):
    """``[(path, leaf), ...]`` in traversal order, duplicates kept."""
    out = []
    transform(root, lambda p, leaf: out.append((p, leaf)), _nothing, path)
    return out


def _nothing(*args):
    return None


class TreeDef:
    """The shape of a flattened tree: a post-order ``template`` and the ``containers`` it folds into.

    In the template an int ``k`` takes the next ``k`` leaves, and ``(node, keys, n)``
    folds the last ``n`` results into a container like the next of ``containers``.
    ``flatten`` walks once; ``unflatten`` and ``tangent`` then rebuild from new
    leaves without looking inside anything again (JAX's treedef, in Python).
    ``flags`` says per leaf whether it is reached through trainable children only
    (design.md section 1: the others are constants for every transform); ``None``
    when every leaf is.
    """

    __slots__ = ("template", "containers", "flags")

    def __init__(self, template, containers, flags=None):
        self.template, self.containers, self.flags = template, containers, flags

    def unflatten(self, leaves):
        return self._build(leaves, _rebuild_op)

    def tangent(self, leaves):
        """The structural tangent with these leaves; all-``None`` subtrees collapse to ``None``."""
        return self._build(leaves, _tangent_op)

    def key(self):
        """The structure as a hashable value, equal for equal structures (``autodiff.jit``'s signature): see
        :func:`structure_key`."""
        return structure_key(self.template, self.containers)

    def _build(self, leaves, make):
        take = iter(leaves)
        containers = iter(self.containers)
        stack = []
        for op in self.template:
            if type(op) is int:
                stack.extend(islice(take, op))
                continue
            node, keys, n = op
            if n:
                kids = stack[-n:]
                del stack[-n:]
            else:
                kids = []
            stack.append(make(node, next(containers), keys, kids))
        return stack[0]


def _rebuild_op(node, x, keys, kids):
    return node.rebuild(x, kids)


def _tangent_op(node, x, keys, kids):
    for k in kids:
        if k is not None:
            return node.tangent(x, keys, kids)
    return None


def structure_key(template, containers):
    """A structure as a hashable value: per template op, a run of leaves or a container's keys and number of
    children, and each container's exact type (not the leaves: a caller keys those as it needs).

    >>> treedef = walk_flatten({"w": 1.0, "b": [2.0, 3.0]})[1]
    >>> structure_key(treedef.template, treedef.containers)
    ((1, 2, ((0, 1), 2), (('w', 'b'), 2)), (<class 'list'>, <class 'dict'>))
    """
    return (tuple(op if type(op) is int else (tuple(op[1]), op[2]) for op in template),
            tuple(map(type, containers)))


_EXIT = object()  # on the stack under a container's children: its op comes next


def walk_flatten(root, path=()):
    """``(leaves, treedef)``: the leaves in traversal order (duplicates kept) and how to rebuild.

    Iterative; a cycle is refused with its key path.  The treedef's ``flags`` mark the leaves reached
    through trainable children only, when a trainable filter leaves some out.

    >>> leaves, treedef = walk_flatten({"w": 1.0, "b": [2.0, 3.0]})
    >>> leaves, treedef.unflatten([4.0, 5.0, 6.0]), treedef.flags
    ([1.0, 2.0, 3.0], {'w': 4.0, 'b': [5.0, 6.0]}, None)
    """
    select, flat = trainable_filter(), _Flat()
    visited, inside = set(), []  # containers met, and the ones we are in (read only when one is met again)
    stack = [(root, True)]
    while stack:
        x, ok = stack.pop()
        if x is _EXIT:
            flat.close(*ok)
            inside.pop()
            continue
        node = node_of(x)
        if node is None:
            flat.leaf(x, ok)
            continue
        if id(x) in visited and id(x) in inside:
            _raise_cycle(root, path)
        visited.add(id(x))
        inside.append(id(x))
        keys, kids = node.children(x)
        stack.append((_EXIT, (node, x, keys, len(kids))))
        stack.extend(flat.children(select, x, ok, keys, kids))
    flat.end_run()
    return flat.leaves, TreeDef(flat.template, flat.containers, flat.flags if flat.restricted else None)


class _Flat:
    """What one :func:`walk_flatten` has built: the leaves and their flags, and the template, where a run of
    leaves is one count and a container one op (its node, keys and number of children), children first."""

    __slots__ = ("leaves", "flags", "template", "containers", "run", "restricted")

    def __init__(self):
        self.leaves, self.flags, self.template, self.containers = [], [], [], []
        self.run, self.restricted = 0, False  # leaves since the last op; has any node left a child out?

    def leaf(self, x, ok):
        self.leaves.append(x)
        self.flags.append(ok)
        self.run += 1

    def end_run(self):
        if self.run:
            self.template.append(self.run)
            self.run = 0

    def close(self, node, x, keys, n):
        """A container's children are done: its op comes next."""
        self.end_run()
        self.template.append((node, keys, n))
        self.containers.append(x)

    def children(self, select, x, ok, keys, kids):
        """``x``'s children to push, last first, each with whether it is reached through trainable children."""
        self.end_run()
        allowed = select(x) if ok and select is not None else None
        if allowed is None:
            return [(kid, ok) for kid in reversed(kids)]
        kid_ok = [key in allowed for key in keys]
        self.restricted = self.restricted or not all(kid_ok)
        return list(zip(reversed(kids), reversed(kid_ok)))


slot("flatten", walk_flatten, "a structure's leaves and treedef (the accelerated twin reads a structure seen "
     "before by its compiled layout)")


def _as_it_is(treedef):
    return treedef


slot("rebuilder", _as_it_is, "a treedef that will rebuild many times (a jitted function's output tree), as one "
     "that rebuilds as fast as it can (the accelerated twin: by generated code)")


def _raise_cycle(root, path):
    """Walk again with key paths (``transform`` raises naming the cycle); only reached on error."""
    leaves(root, path)
    raise AssertionError("unreachable: flatten found a cycle that transform did not")  # pragma: no cover


def trainable_flags(root):
    """Per leaf of ``root`` (in :func:`flatten`'s order, duplicates kept): is it reached through trainable
    children only?  ``None`` when every leaf is (no trainable filter is set, or none leaves a child out)."""
    return walk_flatten(root)[1].flags
