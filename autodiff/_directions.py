"""Directions for ``jvp`` and ``hvp``: the primals' variables, and a tangent tree checked against them.

A variable is a distinct differentiable leaf of one argument at a trainable position (design.md section 1):
a leaf a node's ``trainable`` leaves out (BatchNorm's running statistics, ``eps``) is a constant (unless
it is an array tied to a trainable position: then it is that variable), and a tangent's entry there is
ignored, whatever it holds, so a direction built with ``traversal.fmap`` or ``destructure``'s ``rebuild``
moves the parameters only.  A tied array
(one array object at several positions of an argument) is one variable, so it
has one direction (``design.md`` section 9): the tangent's entries at its
positions must be ``None`` or one same array.  Across arguments each argument
is its own variable, as in ``grad``.  Python and numpy scalars are values,
never tied.
"""

import numbers

import numpy as np

from . import _ops
from ._arguments import is_differentiable, zeros_like_primal
from ._batching import example_shape
from ._calls import argnums_of
from ._paths import dotted
from ._traced import value_of
from ._trees import leaves, rebuild_node, tangent_node, trainable_flags, transform


def as_arguments(name, primals, tangents):
    """``(primals, tangents, bare)`` as tuples of positional arguments; a bare primal is wrapped.

    A tuple or list holds one primal per positional argument (as in JAX);
    anything else (an array, a float, a model) is the one argument itself.
    """
    if type(primals) not in (tuple, list):
        return (primals,), (tangents,), True
    if type(tangents) not in (tuple, list) or len(tangents) != len(primals):
        got = f"{len(tangents)} tangents" if type(tangents) in (tuple, list) else f"a {type(tangents).__name__}"
        raise ValueError(
            f"{name}: primals is a {type(primals).__name__} of {len(primals)} argument(s), so tangents "
            f"must be a tuple of {len(primals)} too, but got {got}; pass one tangent per primal, "
            f"or a bare primal with its tangent: {name}(f, model, direction)"
        )
    return tuple(primals), tuple(tangents), False


def chosen_arguments(name, primals, tangents, argnums):
    """``(args, nums, chosen, tangents, bare)``: the positional arguments, the numbers of those that move, their
    primals and their tangents (tuples), and whether the tangent was given bare.

    ``argnums=None`` moves every primal (:func:`as_arguments`).  Otherwise ``argnums`` means what it means
    for ``grad``: an int takes the bare tangent of that argument, a tuple one tangent per argument it
    names; the other arguments are held (a closure over them gives the same result).

    >>> import numpy as np
    >>> args, nums, chosen, tangents, bare = chosen_arguments("jvp", (np.ones(2), 3.0), 5.0, 1)
    >>> nums, chosen, tangents, bare
    ((1,), (3.0,), (5.0,), True)
    """
    if argnums is None:
        primals, tangents, bare = as_arguments(name, primals, tangents)
        return primals, tuple(range(len(primals))), primals, tangents, bare
    args = tuple(primals) if type(primals) in (tuple, list) else (primals,)
    nums = argnums_of(argnums, len(args), name)
    chosen = tuple(args[n] for n in nums)
    if not isinstance(argnums, (tuple, list)):
        return args, nums, chosen, (tangents,), True
    if type(tangents) not in (tuple, list) or len(tangents) != len(nums):
        got = f"{len(tangents)} tangents" if type(tangents) in (tuple, list) else f"a {type(tangents).__name__}"
        raise ValueError(
            f"{name}: argnums={argnums!r} names {len(nums)} argument(s), so tangents must be a tuple of "
            f"{len(nums)}, one per argument named, but got {got}; with an int argnums pass the bare tangent"
        )
    return args, nums, chosen, tuple(tangents), False


class Variables:
    """The distinct differentiable trainable leaves of a tuple of primals, with the key paths holding each."""

    def __init__(self, primals):
        self.primals = primals
        self.leaves, self.paths, self.at = [], [], {}  # per variable: leaf, paths; path -> variable
        self.every_path = []  # the key path of every leaf, differentiable or not, in order
        self.held = {}  # path -> a leaf that cannot move (an int array, a string): no direction allowed there
        tied = {}  # (argument, id of an array) -> its variable
        self.ignored, arrays = _left_out(primals)  # non-trainable paths: a tangent's entry there is ignored
        for path, leaf in leaves(primals):
            self.every_path.append(path)
            if path in self.ignored and (path[0], id(leaf)) not in arrays:  # a constant
                continue
            if not is_differentiable(leaf):
                self.held[path] = leaf
                continue
            is_array = isinstance(value_of(leaf), np.ndarray)  # scalars are values: never tied
            v = tied.get((path[0], id(leaf))) if is_array else None
            if v is None:
                v = len(self.leaves)
                self.leaves.append(leaf)
                self.paths.append([])
                if is_array:
                    tied[(path[0], id(leaf))] = v
            self.paths[v].append(path)
            self.at[path] = v

    def homes(self):
        """Per variable, the key path its derivative sits at, as in ``grad``: a tie's first trainable
        occurrence (design §3)."""
        return [next(p for p in paths if p not in self.ignored) for paths in self.paths]

    def as_gradient(self, per_variable, zeros=zeros_like_primal):
        """Per-variable values placed as ``grad`` places gradients (design.md section 2): each at its variable's
        home (:meth:`homes`), ``None`` at a tie's other occurrences and where nothing arrived (a container all
        ``None`` collapses), and ``zeros(leaf)`` for a bare argument nothing reached.  A tuple, one per primal."""
        at = dict(zip(self.homes(), per_variable))

        def leaf_fn(path, leaf):
            if path not in at:
                return None
            g = at[path]
            return zeros(leaf) if g is None and len(path) == 1 else g

        return tuple(transform(p, leaf_fn, tangent_node, (i,)) for i, p in enumerate(self.primals))

    def substitute(self, xs):
        """The primals with variable ``v`` replaced by ``xs[v]`` at every position that holds it."""
        return transform(self.primals, lambda path, leaf: xs[self.at[path]] if path in self.at else leaf, rebuild_node)

    def replace_in(self, mirror, make):
        """``mirror`` (a structure with the primals' key paths, such as ``grad``'s traced copy of them) with the
        leaf of variable ``v`` replaced by ``make(v, leaf)`` at every position holding it, made once per variable."""
        made = {}

        def leaf_fn(path, leaf):
            v = self.at.get(path)
            if v is None:
                return leaf
            if v not in made:
                made[v] = make(v, leaf)
            return made[v]

        return transform(mirror, leaf_fn, rebuild_node)

    def dot(self, grads, directions):
        """``sum(g * d)`` over the variables; ``grads`` mirrors the primals, ``None`` meaning zero."""
        by_path = dict(leaves(grads))
        total = 0.0
        for paths, d in zip(self.paths, directions):
            for path in paths if d is not None else ():
                g = by_path.get(path)
                if g is not None:
                    total = total + _sum(g * d)
        return total

    def directions(self, name, tangents, bare):
        """One direction per variable, ``None`` for zero: ``tangents`` checked leaf by leaf."""
        entries = _entries(name, self.every_path, tangents, bare)
        for path, leaf in self.held.items():
            _refuse_direction(name, entries[path], leaf, path, bare)
        directions, first = [None] * len(self.leaves), [None] * len(self.leaves)
        for path, v in self.at.items():
            t = entries[path]
            if t is None or path in self.ignored:
                continue
            _check_leaf(name, t, self.leaves[v], path, bare)
            if directions[v] is None:
                directions[v], first[v] = t, path
            elif t is not directions[v]:
                raise _tie_error(name, first[v], path, bare)
        return directions


def _left_out(primals):
    """``(paths, arrays)``: the key paths of the leaves a node's ``trainable`` leaves out (constants for every
    transform), and ``(argument, id)`` of the arrays at trainable positions (a tie makes such a path a variable)."""
    paths, arrays = set(), set()
    for i, arg in enumerate(primals):
        flags = trainable_flags(arg)
        if flags is None:
            continue
        for (path, leaf), ok in zip(leaves(arg, (i,)), flags):
            if not ok:
                paths.add(path)
            elif isinstance(value_of(leaf), np.ndarray):
                arrays.add((i, id(leaf)))
    return paths, arrays


def _sum(x):
    """``sum(x)``; its real part for complex ``x`` (docs/complex.md's pairing, so hvp works at complex primals)."""
    total = _ops.sum(x)
    return _ops.real(total) if np.iscomplexobj(value_of(total)) else total


def _entries(name, paths, tangents, bare):
    """``{primal leaf path: tangent entry}`` for the primals' leaf ``paths``; a ``None`` subtree of the
    tangent gives ``None`` below it."""
    given = dict(leaves(tangents))
    used = set()  # the prefixes (None subtrees) that gave an entry
    entries = {}
    for path in paths:
        entries[path] = given[path] if path in given else _entry(name, given, path, used, bare)
    extra = [p for p in given if p not in entries and p not in used and given[p] is not None]
    if extra:
        raise ValueError(
            f"{name}: the tangent has an entry at {_where(extra[0], bare)}, where the primal has "
            "no leaf; tangents must have the primals' structure"
        )
    return entries


def _entry(name, given, path, used, bare):
    """The entry for a primal leaf the tangent does not hold itself: ``None`` under a ``None`` subtree."""
    for k in range(len(path) - 1, 0, -1):
        prefix = path[:k]
        if prefix in given:
            if given[prefix] is not None:
                break
            used.add(prefix)
            return None
    raise ValueError(
        f"{name}: the tangent has no entry at {_where(path, bare)}, where the primal has a leaf; "
        "tangents must have the primals' structure (None stands for a zero subtree)"
    )


def _check_leaf(name, t, primal, path, bare):
    if type(t) is np.ndarray and type(primal) is np.ndarray and t.shape == primal.shape and t.dtype == primal.dtype:
        return  # the common case, with nothing to work out
    tv, pv, where = value_of(t), value_of(primal), _where(path, bare)
    if not isinstance(tv, (numbers.Number, np.ndarray, np.generic)):
        raise TypeError(
            f"{name}: {where} is a {type(tv).__name__}, but the primal there is {_describe(pv)}; "
            "pass an array of that shape and dtype, or None for a zero direction"
        )
    tshape, pshape = example_shape(t), example_shape(primal)  # one example's under vmap
    plain_scalar = isinstance(tv, (int, float)) and pshape == ()
    if tshape != pshape or (np.result_type(tv) != np.result_type(pv) and not plain_scalar):
        raise ValueError(
            f"{name}: {where} is {_describe(tv, tshape)}, but the primal there is {_describe(pv, pshape)}; "
            "pass a tangent of the primal's exact shape and dtype (e.g. cast with .astype)"
        )


def _refuse_direction(name, t, primal, path, bare):
    """Refuse a nonzero number at a leaf that cannot move (an int array, a string): forward mode would
    drop the direction silently, where ``grad`` refuses the same argument.  The primal's own leaf is no
    direction (``fmap`` leaves it in place at a leaf it skips), nor is ``None``, zeros or a non-number."""
    tv, pv = value_of(t), value_of(primal)
    if t is primal or not _is_numeric(tv) or not np.any(tv):
        return  # nothing is lost
    kind = f"dtype {np.result_type(pv)}" if _is_numeric(pv) else f"type {type(pv).__name__}"
    raise TypeError(
        f"{name}: {_where(path, bare)} is a nonzero direction, but the primal there has {kind}, which cannot "
        "be differentiated, so the direction would be dropped; cast the primal to float "
        "(e.g. np.asarray(x, dtype=float)), or pass None there"
    )


def _is_numeric(v):
    """A number or an array of numbers (not of objects: ``fmap(np.ones_like, model)`` makes those of functions)."""
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.kind in "biufc"
    return isinstance(v, numbers.Number)


def _describe(v, shape=None):
    return f"of shape {np.shape(v) if shape is None else shape} and dtype {np.result_type(v)}"


def _tie_error(name, first, later, bare):
    a, b = _where(first, bare), _where(later, bare)
    return ValueError(
        f"{name}: {a} and {b} hold different directions, but the primal holds one tied array at "
        f"both places: one variable, so one direction. Put the direction at {a} and None (or the "
        f"same array) at {b}"
    )


def _where(path, bare):
    """``tangent.layers[0].weight`` for a bare primal, ``tangents[1].weight`` for a tuple of them."""
    return "tangent" + dotted(path[1:]) if bare else f"tangents[{path[0]}]" + dotted(path[1:])
