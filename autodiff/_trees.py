"""Iterative walks over nested arguments, for tracing inputs and building gradients.

No recursion: a model nested 10,000 deep is walked with an explicit stack.
A container met again on its own path is a cycle and raises with the key path.
"""

from ._containers import node_of


def dotted(path):
    """A key path as ``.layers[2].weight``: str keys as attributes, ints as positions.

    >>> dotted(("layers", 2, "weight"))
    '.layers[2].weight'
    """
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


def format_path(path):
    """Render a key path like ``[0]['layers'][2].weight`` (first key is the argument).

    >>> format_path((0, 'layers', 2, 'weight'))
    "arg 0: ['layers'][2]['weight']"
    """
    if not path:
        return "the argument"
    head, rest = path[0], path[1:]
    body = "".join(f"[{k!r}]" for k in rest)
    return f"arg {head}: {body}" if body else f"arg {head}"


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
                raise ValueError(
                    f"cycle: the object at {format_path(fpath + (keys[i],))} contains itself; "
                    "a model must be a tree (ties are fine, loops are not)"
                )
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


def leaves(root, path=()):
    """``[(path, leaf), ...]`` in traversal order, duplicates kept."""
    out = []
    transform(root, lambda p, leaf: out.append((p, leaf)), _nothing, path)
    return out


def _nothing(*args):
    return None


class TreeDef:
    """The shape of a flattened tree: post-order ops, ``None`` per leaf, ``(node, x, keys, n)`` per container.

    ``flatten`` walks once; ``unflatten`` and ``tangent`` then rebuild from new
    leaves without looking inside anything again (JAX's treedef, in Python).
    """

    __slots__ = ("ops",)

    def __init__(self, ops):
        self.ops = ops

    def unflatten(self, leaves):
        return self._build(leaves, _rebuild_op)

    def tangent(self, leaves):
        """The structural tangent with these leaves; all-``None`` subtrees collapse to ``None``."""
        return self._build(leaves, _tangent_op)

    def _build(self, leaves, make):
        it = iter(leaves)
        stack = []
        for op in self.ops:
            if op is None:
                stack.append(next(it))
                continue
            node, x, keys, n = op
            kids = stack[len(stack) - n:]
            del stack[len(stack) - n:]
            stack.append(make(node, x, keys, kids))
        return stack[0]


def _rebuild_op(node, x, keys, kids):
    return node.rebuild(x, kids)


def _tangent_op(node, x, keys, kids):
    for k in kids:
        if k is not None:
            return node.tangent(x, keys, kids)
    return None


def flatten(root, path=()):
    """``(leaves, treedef)``: the leaves in traversal order (duplicates kept) and how to rebuild."""
    node = node_of(root)
    if node is None:
        return [root], TreeDef([None])
    leaves, ops = [], []
    keys, kids = node.children(root)
    stack = [[root, node, keys, kids, 0]]
    on_path = {id(root)}
    while stack:
        frame = stack[-1]
        kids, i, n = frame[3], frame[4], len(frame[3])
        while i < n:
            child = kids[i]
            child_node = node_of(child)
            i += 1
            if child_node is not None:
                break
            leaves.append(child)
            ops.append(None)
        else:
            stack.pop()
            on_path.discard(id(frame[0]))
            ops.append((frame[1], frame[0], frame[2], n))
            continue
        frame[4] = i
        if id(child) in on_path:
            raise ValueError(
                f"cycle: the object at {format_path(path + _stack_path(stack))} contains itself; "
                "a model must be a tree (ties are fine, loops are not)"
            )
        on_path.add(id(child))
        ckeys, ckids = child_node.children(child)
        stack.append([child, child_node, ckeys, ckids, 0])
    return leaves, TreeDef(ops)


def _stack_path(stack):
    """The key path of the child being entered, read off the frames (only needed for errors)."""
    return tuple(frame[2][frame[4] - 1] for frame in stack)
