"""Iterative walks over nested arguments, for tracing inputs and building gradients.

No recursion: a model nested 10,000 deep is walked with an explicit stack.
A container met again on its own path is a cycle and raises with the key path.
"""

from ._containers import node_of


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


def tangent_node(path, x, node, keys, results):
    """Structural tangent of ``x``; a subtree that is all ``None`` collapses to ``None``."""
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
