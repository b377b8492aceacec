"""Compiled layouts: straight-line code that reads the leaves of a structure seen before.

A generic walk over a model costs about 0.3 µs per node.  A training loop
hands ``grad`` (and ``traversal.total``) the same structure every step, so once
a structure has been walked twice we generate a function that reads the same
positions directly (``m.layers``, then ``a, b, c = that``, then ``a.weight``,
...), checking on the way that the structure is still the one it was compiled
for: container types, lengths, dict keys and key order, and any per-instance
selection of children.  A difference makes it return ``None``, and the caller
walks generically instead, so a stale layout is never a wrong one.  Callers
also check the leaves' types, since a leaf position may now hold a container.
This is JAX's treedef cache, in Python.

Structures with a container met twice (a tied layer object, or a cycle), or
with more than ``MAX_NODES`` nodes, are not compiled; with ``AUTODIFF_ACCEL_OFF=layouts``
or ``AUTODIFF_REFERENCE=1`` in the environment no cache compiles anything (every
walk is the generic one).  ``ENABLED`` is that switch.

>>> import numpy as np
>>> from autodiff._trees import walk_flatten
>>> root = {"w": np.ones(2), "b": [0.5, np.zeros(1)]}
>>> layout = compile_layout(root, treedef=walk_flatten(root)[1])  # the treedef: read returns containers too
>>> leaves, containers = layout.read({"w": np.ones(3), "b": [1.5, np.zeros(2)]})
>>> [np.shape(x) for x in leaves], [type(c).__name__ for c in containers]
([(3,), (), (2,)], ['list', 'dict'])
>>> layout.read({"w": np.ones(3), "b": [1.5]}) is None  # the list changed length
True
"""

import itertools
import linecache

from .._containers import node_of, registry_version
from .._hooks import enabled
from .._structural import tangent_of

MAX_NODES = 5000
ENABLED = enabled("layouts")


class LayoutCache:
    """Compiled layouts per root type, for one kind of walk.

    A structure is compiled the second time a root of its type is walked generically; the newest
    ``PER_TYPE`` layouts are kept, and no more than ``COMPILES_PER_TYPE`` are ever compiled for one type,
    so a program that keeps passing new structures stops paying for compilation and just walks.
    ``version()`` names the registrations the layouts depend on (the container registry by default).
    """

    PER_TYPE = 4
    COMPILES_PER_TYPE = 16

    def __init__(self, version=registry_version):
        self._layouts, self._walks, self._compiles = {}, {}, {}
        self._version, self._seen_version = version, None

    def get(self, cls):
        """The layouts for roots of type ``cls``, newest first; none at all once ``version()`` has changed
        (a type was registered since, so any layout may be wrong)."""
        version = self._version()
        if version != self._seen_version:
            self.clear()
            self._seen_version = version
        return self._layouts.get(cls, ())

    def learn(self, root, select=None, treedef=None, watch=None):
        """After a generic walk of ``root``: compile its structure if its type was walked before
        (``select``, ``treedef`` and ``watch`` as for :func:`compile_layout`)."""
        cls = type(root)
        self._walks[cls] = self._walks.get(cls, 0) + 1
        if not ENABLED or self._walks[cls] < 2 or self._compiles.get(cls, 0) >= self.COMPILES_PER_TYPE:
            return
        self._compiles[cls] = self._compiles.get(cls, 0) + 1
        layout = compile_layout(root, select, treedef, watch)
        if layout is not None:
            kept = self._layouts.setdefault(cls, [])
            kept.insert(0, layout)
            del kept[self.PER_TYPE:]

    def clear(self):
        self._layouts.clear()
        self._walks.clear()
        self._compiles.clear()


class Layout:
    """A compiled structure: ``read(root) -> (leaves, containers in post-order)`` or ``None``.

    ``leaf_types`` are the types its leaf positions held when it was compiled;
    ``template`` and ``flags`` are the flatten template and trainable flags (see ``_trees.TreeDef``) of
    that structure.
    """

    __slots__ = ("read", "leaf_types", "template", "flags")

    def __init__(self, read, leaf_types, template, flags=None):
        self.read, self.leaf_types, self.template, self.flags = read, leaf_types, template, flags


class Template:
    """A layout's flatten template, with straight-line ``unflatten`` and ``tangent`` builders
    generated the first time each is needed (``TreeDef`` runs the plain template otherwise), and the
    structure's key (``_trees.structure_key``) once asked for."""

    __slots__ = ("ops", "_builders", "key")

    def __init__(self, ops):
        self.ops, self._builders = ops, {}
        self.key = None  # the structure's key, once a CompiledTreeDef was asked for it

    def build(self, kind, containers, leaves):
        """``kind`` is ``"rebuild"`` (unflatten) or ``"tangent"``: the structure over ``leaves``."""
        builder = self._builders.get(kind)
        if builder is None:
            builder = self._builders[kind] = _builder(self.ops, kind, [type(c) for c in containers])
        return builder(containers, leaves)


def _builder(ops, kind, types):
    """``build(containers, leaves)`` for a post-order template: one line per container.  ``types`` are the
    containers' types, the same at every call (the layout's ``read`` checked them)."""
    lines, constants, stack, n_leaves, n_containers = [], {}, [], 0, 0
    container_lines = _BUILD_LINES[kind]
    for op in ops:
        if type(op) is int:
            stack.extend(f"l{n_leaves + j}" for j in range(op))
            n_leaves += op
            continue
        node, keys, n = op
        kids = stack[len(stack) - n:]
        del stack[len(stack) - n:]
        lines.extend(container_lines(node, keys, kids, n_containers, constants, types[n_containers]))
        stack.append(f"r{n_containers}")
        n_containers += 1
    unpack = [f"{''.join(f'l{j}, ' for j in range(n_leaves))}= l"] if n_leaves else []
    body = "\n".join("    " + line for line in unpack + lines)
    source = f"def build(c, l):\n{body}\n    return {stack[0]}\n"
    return _define(source, kind, dict(constants, tangent_of=tangent_of))["build"]


def _rebuild_lines(node, keys, kids, k, constants, cls):
    """The lines that rebuild container ``k`` (of type ``cls``) as ``r{k}`` from the variables ``kids``."""
    if _copies_dict(node, cls):  # a dataclass: a new instance, the old __dict__, new fields (not copy.copy)
        return [f"cls = type(c[{k}]); r{k} = cls.__new__(cls); state = r{k}.__dict__",
                f"state.update(c[{k}].__dict__)",
                *(f"state[{name!r}] = {kid}" for name, kid in zip(node.fields, kids))]
    constants[f"F{k}"] = node.rebuild
    return [f"r{k} = F{k}(c[{k}], [{', '.join(kids)}])"]


def _copies_dict(node, cls):
    """Whether ``cls`` is a dataclass (``node.fields``) whose instances keep their fields in ``__dict__``, so a
    rebuild may copy that dict instead of going through ``copy.copy``'s reduce protocol (1.7 against 5.1 µs per
    node on the AMD EPYC VM, 2026-12-07)."""
    return node.fields is not None and not any("__slots__" in vars(k) for k in cls.__mro__)


def _tangent_lines(node, keys, kids, k, constants, cls):
    """The line that builds container ``k``'s tangent as ``r{k}``: ``None`` if its children all are."""
    empty = " and ".join(f"{kid} is None" for kid in kids) or "True"
    if node.fields is not None:  # a dataclass's Tangent, its fields written out
        fields = ", ".join(f"{name!r}: {kid}" for name, kid in zip(node.fields, kids))
        return [f"r{k} = None if {empty} else tangent_of(type(c[{k}]), {{{fields}}})"]
    constants[f"F{k}"], constants[f"K{k}"] = node.tangent, keys
    return [f"r{k} = None if {empty} else F{k}(c[{k}], K{k}, [{', '.join(kids)}])"]


_BUILD_LINES = {"rebuild": _rebuild_lines, "tangent": _tangent_lines}


def compile_layout(root, select=None, treedef=None, watch=None):
    """A :class:`Layout` for ``root``'s structure, or ``None`` if it has ties, cycles or too many nodes.

    ``select(cls)``, if given, may return a function ``pick(x)`` naming the keys of
    ``x`` a walk enters (``traversal``'s ``trainable``); the layout then reads
    only those children and checks that ``pick(x)`` is unchanged.  ``treedef``,
    the ``TreeDef`` that ``_trees.walk_flatten`` made of ``root``, lets the layout
    rebuild too: its ``template`` and the containers it reads, in that template's order, and its
    ``flags``.  ``watch(x)``, if given, names the children of ``x`` that are trainable (``None``: all);
    the layout reads every child but checks that this is unchanged, so the treedef's flags stay true.
    """
    plan = _describe(root, select, watch)
    if plan is None:
        return None
    lines, constants, leaves, leaf_types, var_of = plan
    template, containers, flags = None, [], None
    if treedef is not None and select is None:  # the flatten template, and the containers in its (post-)order
        template, containers = Template(treedef.template), [var_of[id(x)] for x in treedef.containers]
        flags = treedef.flags
    body = "\n".join("    " + line for line in lines)
    source = f"def read(v0):\n{body}\n    return [{', '.join(leaves)}], [{', '.join(containers)}]\n"
    return Layout(_define(source, "layout", dict(constants))["read"], frozenset(leaf_types), template, flags)


def _define(source, kind, namespace):
    """Run the generated ``source`` in ``namespace`` under a file name of its own, with its lines registered
    in ``linecache``, so a traceback through it shows the generated line; returns the namespace."""
    filename = f"<autodiff {kind} {next(_generated)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (our own generated code)
    return namespace


_generated = itertools.count(1)


def _describe(root, select, watch=None):
    """The lines that check and unpack every container, in walk order, and the leaf variables."""
    lines, constants, leaves, leaf_types, var_of = [], {}, [], set(), {}
    stack = [(root, "v0")]
    count = 0
    while stack:
        x, var = stack.pop()
        count += 1
        if count > MAX_NODES:
            return None
        node = node_of(x)
        if node is None:
            leaves.append(var)
            leaf_types.add(type(x))
            continue
        if id(x) in var_of:  # a tie or a cycle: leave it to the generic walk
            return None
        var_of[id(x)] = var
        k = len(constants)
        kids, kid_lines, consts = _expand(x, var, node, k, select, watch)
        names = [f"v{count}_{j}" for j in range(len(kids))]
        target = ", ".join(names) + ("," if len(names) == 1 else "")
        lines.extend(line.format(kids=target) for line in kid_lines)
        constants.update(consts)
        stack.extend(reversed(list(zip(kids, names))))
    return lines, constants, leaves, leaf_types, var_of


def _expand(x, var, node, k, select, watch=None):
    """(the children a walk enters, the lines that check ``var`` and unpack them, their constants).

    The unpacking line is a template: ``{kids}`` stands for the children's variables."""
    cls = type(x)
    keys, kids = node.children(x)
    keys, kids = tuple(keys), list(kids)
    consts = {f"C{k}": cls, f"N{k}": node, f"K{k}": keys}
    pick = select(cls) if select is not None else None
    if pick is not None:
        kids, check, source = _selected(x, var, k, keys, kids, pick, consts)
    else:
        check, source = _unselected(x, var, k, node, len(kids))
    watched = watch(x) if watch is not None and select is None else None
    if watched is not None:  # the same children trainable, or the flags are stale
        consts[f"W{k}"], consts[f"T{k}"] = watch, watched
        check = check + [f"if W{k}({var}) != T{k}: return None"]
    return kids, check + ([f"{{kids}} = {source}"] if kids else []), consts


def _selected(x, var, k, keys, kids, pick, consts):
    """Only the selected children, and a check that the selection is the same: (kids, check, source)."""
    consts[f"P{k}"], consts[f"A{k}"] = pick, pick(x)
    chosen = [i for i, key in enumerate(keys) if key in consts[f"A{k}"]]
    source = f"({''.join(f'kids[{i}], ' for i in chosen)})"
    return [kids[i] for i in chosen], _check_children(var, k, f" or P{k}({var}) != A{k}"), source


def _unselected(x, var, k, node, n):
    """(check, source) for every child: a list, tuple or dict by its own check, a dataclass by its fields (fixed
    by its type), anything else through its node."""
    cls = type(x)
    if cls in _CHECKS:
        return _CHECKS[cls](var, k, n)
    if node.fields is not None:
        return [f"if type({var}) is not C{k}: return None"], f"({''.join(f'{var}.{name}, ' for name in node.fields)})"
    return _check_children(var, k), "kids"


def _check_children(var, k, also=""):
    """Check ``var``'s type (and ``also``), then read its children through its node and check their keys."""
    return [f"if type({var}) is not C{k}{also}: return None",
            f"keys, kids = N{k}.children({var})",
            f"if tuple(keys) != K{k}: return None"]


_CHECKS = {  # (lines checking a list, tuple or dict, what its children are read from)
    list: lambda var, k, n: ([f"if type({var}) is not C{k} or len({var}) != {n}: return None"], var),
    tuple: lambda var, k, n: ([f"if type({var}) is not C{k} or len({var}) != {n}: return None"], var),
    dict: lambda var, k, n: ([f"if type({var}) is not dict or tuple({var}) != K{k}: return None"], f"{var}.values()"),
}
