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
    value, frame = _enter(root, path, leaf_fn)
    if frame is None:
        return value
    stack = [frame]
    on_path = {id(root)}
    while True:
        x, node, keys, kids, results, fpath = frame = stack[-1]
        if len(results) < len(kids):
            k = keys[len(results)]
            value, child = _enter(kids[len(results)], fpath + (k,), leaf_fn)
            if child is None:
                results.append(value)
                continue
            if id(child[0]) in on_path:
                raise ValueError(
                    f"cycle: the object at {format_path(child[5])} contains itself; "
                    "a model must be a tree (ties are fine, loops are not)"
                )
            stack.append(child)
            on_path.add(id(child[0]))
            continue
        stack.pop()
        on_path.discard(id(x))
        value = node_fn(fpath, x, node, keys, results)
        if not stack:
            return value
        stack[-1][4].append(value)


def _enter(x, path, leaf_fn):
    node = node_of(x)
    if node is None:
        return leaf_fn(path, x), None
    keys, kids = node.children(x)
    return None, [x, node, list(keys), list(kids), [], path]


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
