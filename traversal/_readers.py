"""Compiled parameter readers: straight-line code for a model structure seen before.

``parameters`` walks a model with a generic loop, about 0.3 µs per node.  A
training loop hands it the same structure every step, so once a structure has
been walked twice we generate a function that reads the same positions
directly (``m.layers``, then ``a, b, c = that``, then ``a.weight``, ...),
checking on the way that the structure is still the one it was compiled for:
container types, lengths, dict keys, ``trainable`` selections, and the type
of every leaf.  Any difference makes the reader return ``None`` and the
generic walk runs instead (which then compiles the new structure), so a reader
can be stale but never wrong.  This is JAX's treedef cache, in Python.

Structures with a container met twice (a tied layer object, or a cycle), or
with more than ``MAX_NODES`` nodes, are not compiled.
"""

import numpy as np

from autodiff.extend import Traced, node_of

from ._trainable import isnumeric, trainable

MAX_NODES = 5000
READERS_PER_TYPE = 4

_readers = {}  # type(root) -> [(reader, leaf types), ...], newest first
_sightings = {}  # type(root) -> generic walks seen; a structure is compiled the second time


def clear():
    """Forget every reader (the container or trainable registry changed)."""
    _readers.clear()
    _sightings.clear()


def read(model):
    """The distinct trainable arrays of ``model`` from a compiled reader, or ``None`` if none fits."""
    for reader, leaf_types in _readers.get(type(model), ()):
        values = reader(model)
        if values is not None:
            found = _pick(values, leaf_types)
            if found is not None:
                return found
    return None


def _pick(values, leaf_types):
    """Parameters among the leaf values, each once, in order; ``None`` if a leaf has an unexpected type."""
    found, seen = [], set()
    for v in values:
        t = type(v)
        if t is np.ndarray:
            if v.dtype.kind in "fc" and id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        elif t is Traced:
            if id(v) not in seen and isnumeric(v):
                seen.add(id(v))
                found.append(v)
        elif t not in leaf_types:  # a container (or something new) where a leaf was: walk instead
            return None
    return found


def learn(model, is_customised):
    """After a generic walk: compile ``model``'s structure if its type has been walked before."""
    cls = type(model)
    seen = _sightings.get(cls, 0) + 1
    _sightings[cls] = seen
    if seen < 2:
        return
    compiled = _compile(model, is_customised)
    if compiled is not None:
        readers = _readers.setdefault(cls, [])
        readers.insert(0, compiled)
        del readers[READERS_PER_TYPE:]


def _compile(model, is_customised):
    plan = _describe(model, is_customised)
    if plan is None:
        return None
    lines, constants, leaves, leaf_types = plan
    body = "\n".join("    " + line for line in lines)
    source = f"def reader(v0):\n{body}\n    return [{', '.join(leaves)}]\n"
    namespace = dict(constants, trainable=trainable)
    exec(compile(source, "<traversal reader>", "exec"), namespace)  # noqa: S102 (our own generated code)
    return namespace["reader"], frozenset(leaf_types)


def _describe(model, is_customised):
    """The reader's lines for ``model``: one check and one unpacking per container, in walk order."""
    lines, constants, leaves, leaf_types = [], {}, [], set()
    containers = set()
    stack = [(model, "v0")]
    count = 0
    while stack:
        x, var = stack.pop()
        count += 1
        if count > MAX_NODES:
            return None
        node = node_of(x)
        if node is None or type(x) is Traced:
            leaves.append(var)
            if type(x) not in (np.ndarray, Traced):
                leaf_types.add(type(x))
            continue
        if id(x) in containers:  # a tie or a cycle: leave it to the generic walk
            return None
        containers.add(id(x))
        kid_values, kid_lines = _expand(x, var, node, len(constants), is_customised)
        if kid_lines is None:
            return None
        names = [f"v{count}_{k}" for k in range(len(kid_values))]
        for line in kid_lines:
            lines.append(line.format(kids=", ".join(names) + ("," if len(names) == 1 else "")))
        constants.update(_constants_of(x, node, len(constants), is_customised))
        stack.extend(reversed(list(zip(kid_values, names))))
    return lines, constants, leaves, leaf_types


def _expand(x, var, node, k, is_customised):
    """(the children a walk enters, in order) and the lines that check ``var`` and unpack them."""
    cls = type(x)
    keys, kids = node.children(x)
    keys, kids = list(keys), list(kids)
    c = f"C{k}"
    if is_customised(cls):
        allowed = trainable(x)
        picked = [i for i, key in enumerate(keys) if key in allowed]
        return [kids[i] for i in picked], [
            f"if type({var}) is not {c} or trainable({var}) != A{k}: return None",
            f"keys, kids = N{k}.children({var})",
            f"if tuple(keys) != K{k}: return None",
            *([f"{{kids}} = ({', '.join(f'kids[{i}]' for i in picked)},)"] if picked else []),
        ]
    if cls in (list, tuple):
        return kids, [f"if type({var}) is not {c} or len({var}) != {len(kids)}: return None",
                      *(["{kids} = " + var] if kids else [])]
    if cls is dict:
        return kids, [f"if type({var}) is not dict or tuple({var}) != K{k}: return None",
                      *([f"{{kids}} = {var}.values()"] if kids else [])]
    if node.fields is not None:  # a dataclass: its fields are fixed by its type
        return kids, [f"if type({var}) is not {c}: return None",
                      *([f"{{kids}} = ({', '.join(f'{var}.{name}' for name in node.fields)},)"] if kids else [])]
    return kids, [f"if type({var}) is not {c}: return None",
                  f"keys, kids = N{k}.children({var})",
                  f"if tuple(keys) != K{k}: return None",
                  *(["{kids} = kids"] if kids else [])]


def _constants_of(x, node, k, is_customised):
    keys = tuple(node.children(x)[0])
    constants = {f"C{k}": type(x), f"N{k}": node, f"K{k}": keys}
    if is_customised(type(x)):
        constants[f"A{k}"] = trainable(x)
    return constants
