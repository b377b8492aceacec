"""The fast collectors behind ``total``: distinct trainable parameters, and (parameter, gradient) pairs.

The twins of :mod:`traversal._collect`'s walks (the reference), plugged in as
``_collect.parameters`` and ``_collect.parameter_pairs`` by :func:`install`
unless ``AUTODIFF_REFERENCE=1``.  They follow the same rules as ``trainables``
(``isnumeric``, ``trainable``, ties once, traversal order) in a tight loop,
because ``total`` runs in training steps; key paths are only rebuilt when an
error needs one (through the reference).
"""

from itertools import repeat

import numpy as np

from autodiff._for_traversal import fields_getter, node_of, registry_version, trainable_filter_version
from autodiff._hooks import fill
from autodiff.extend import Traced, ZeroTangent, is_inexact, value_of

from .. import _collect
from .._keypath import KeyPath
from .._trainable import is_customised, isnumeric, trainable, trainable_paths
from . import readers as _readers

_customised = {}  # type -> bool, valid while the registrations stay as they were
_seen_version = [None]


def _refresh():
    """Forget what was worked out per type once ``trainable`` (an ABC registration included) or the
    container registry changes."""
    version = (trainable_filter_version(), registry_version())
    if version != _seen_version[0]:
        _customised.clear()
        _getters.clear()
        _seen_version[0] = version


def _is_customised(cls):
    hit = _customised.get(cls)
    if hit is None:
        hit = _customised[cls] = is_customised(cls)
    return hit


def _kids(x, node):
    keys, kids = node.children(x)
    if not _is_customised(type(x)):
        return keys, kids
    allowed = trainable(x)
    return [k for k in keys if k in allowed], [v for k, v in zip(keys, kids) if k in allowed]


def _customised_getter(node):
    """Children named by ``trainable(x)`` (asked per instance), last first; per allowed set, one getter."""
    by_allowed = {}

    def get(x):
        allowed = trainable(x)
        try:
            return by_allowed[allowed](x)
        except (KeyError, TypeError):  # new (or unhashable) allowed set
            keys, kids = node.children(x)
            picked = [(k, v) for k, v in zip(keys, kids) if k in allowed]
            if node.fields is not None and isinstance(allowed, tuple):
                by_allowed[allowed] = fields_getter(tuple(k for k, _ in reversed(picked)))
            return [v for _, v in reversed(picked)]

    return get


def _is_param(x):
    t = type(x)
    if t is np.ndarray:
        return is_inexact(x.dtype)
    return t is Traced and isnumeric(x)


def parameters(model, match=None):
    """Distinct trainable arrays of ``model``, in order; with ``match``, only those inside matching nodes."""
    _refresh()
    if match is not None:
        return _parameters_inside(model, match)
    found = _readers.read(model)
    if found is None:
        found = _walk(model)
        _readers.learn(model, _is_customised)
    return found


def _walk(model):
    """The generic walk: iterative, ties once, a cycle refused with its key path."""
    return _readers.pick(_trainable_leaves(model))


def _trainable_leaves(model):
    """The leaves a walk into trainable children meets, in order (a tied container's once)."""
    leaves, visited, path = [], set(), []  # containers met, and those we are inside (checked only when met again)
    getters = _getters
    stack = [model]
    pop, push = stack.pop, stack.extend
    while stack:
        x = pop()
        t = type(x)
        if t is np.ndarray or t is Traced:
            leaves.append(x)
        elif x is _EXIT:
            path.pop()
        else:
            get = getters.get(t) or _getter(x)
            if get is _LEAF:
                continue
            if t is tuple:  # immutable: it cannot close a cycle, and a tied tuple costs no more than its leaves
                push(get(x))
            elif id(x) not in visited:
                visited.add(id(x))
                path.append(id(x))
                stack.append(_EXIT)
                push(get(x))
            elif id(x) in path:  # met again while inside it: a cycle, not a tie
                _refuse_cycle(model)
    return leaves


_EXIT = object()  # on the stack after a container's children: leaving it
_LEAF = object()
_getters = {}  # type -> its trainable children in reverse order (a stack pushes them), or _LEAF


def _getter(x):
    """How ``parameters`` expands ``x`` and every other instance of its type, worked out once."""
    cls = type(x)
    node = node_of(x)
    if node is None:
        get = _LEAF
    elif _is_customised(cls):
        get = _customised_getter(node)
    elif node.fields is not None:  # a dataclass: one C call reads its fields, last first
        get = fields_getter(node.fields[::-1])
    elif cls in (list, tuple):
        get = reversed
    elif cls is dict:
        get = lambda x: reversed(x.values())  # noqa: E731
    else:
        get = lambda x: reversed(node.children(x)[1])  # noqa: E731
    _getters[cls] = get
    return get
def _first_visit(model, key, visited):
    """True the first time; a container met again is a tie (skipped) or a cycle (refused)."""
    if key not in visited:
        visited.add(key)
        return True
    if None not in visited:  # check for a cycle once per walk
        _refuse_cycle(model)
        visited.add(None)
    return False


def _parameters_inside(model, match):
    found, seen, visited = [], set(), set()
    stack = [(model, False)]
    while stack:
        x, inside = stack.pop()
        if _is_param(x):  # a parameter is kept when it, or a node on its path, matches
            if (inside or match(x)) and id(x) not in seen:
                seen.add(id(x))
                found.append(x)
            continue
        node = node_of(x)
        if node is None:
            continue
        inside = inside or match(x)
        if type(x) is tuple or _first_visit(model, (id(x), inside), visited):
            stack.extend(zip(reversed(_kids(x, node)[1]), repeat(inside)))
    return found


def _refuse_cycle(model):
    trainable_paths(model)  # raises, naming the key path, if the model has a cycle


def parameter_pairs(model, grads, match=None):
    """``[(x, dx), ...]`` per distinct trainable ``x`` with a gradient; a tie's ``dx`` added up."""
    _refresh()
    order, total_dx = [], {}
    stack = [((), model, grads, match is None)]
    while stack:
        path, x, dx, inside = stack.pop()
        if dx is None or type(dx) is ZeroTangent:
            continue
        if _is_param(x):
            if inside or match(x):
                _add(order, total_dx, x, _checked_dx(path, x, dx))
            continue
        node = node_of(x)
        if node is None:
            continue
        inside = inside or match(x)
        keys, kids = _kids(x, node)
        dkids = _grad_children(dx, keys, path, x)
        stack.extend((path + (k,), kid, d, inside) for k, kid, d in reversed(list(zip(keys, kids, dkids))))
    return [(x, total_dx[id(x)]) for x in order]


def _add(order, total_dx, x, dx):
    if id(x) in total_dx:
        total_dx[id(x)] = total_dx[id(x)] + dx
    else:
        order.append(x)
        total_dx[id(x)] = dx


def _checked_dx(path, x, dx):
    """``dx`` if it is an array (or number) of ``x``'s shape; else an error naming the key path and both."""
    if type(dx) is np.ndarray and type(x) is np.ndarray and dx.shape == x.shape:  # the usual case
        return dx
    v, want = value_of(dx), np.shape(value_of(x))
    if not isinstance(v, (np.ndarray, np.generic, float, int, complex, Traced)):  # Traced: batched by vmap
        raise TypeError(
            f"total: grads has a {type(v).__name__} at {_show(path)}, where the model has an array of shape "
            f"{want}; pass the structural gradient of this model (e.g. from autodiff.grad)"
        )
    if np.shape(v) != want:
        raise ValueError(
            f"total: grads at {_show(path)} has shape {np.shape(v)}, but the parameter there has shape "
            f"{want}; pass a gradient of the parameter's shape"
        )
    return dx


def _grad_children(dx, keys, path, x):
    """The children of ``dx`` at the model's (trainable) ``keys``; ``dx`` must have exactly the model's children."""
    node = node_of(dx)
    if node is None:
        raise _collect.mismatch(KeyPath(*path), x, dx)
    dkeys, dkids = node.children(dx)
    by_key = dict(zip(dkeys, dkids))
    if len(by_key) != len(keys) or any(k not in by_key for k in keys):  # or fewer keys: trainable left some out
        if set(by_key) != set(node_of(x).children(x)[0]):
            raise _collect.mismatch(KeyPath(*path), x, dx)
    return [by_key[k] for k in keys]


def _show(path):
    return str(KeyPath(*path))


def install():
    """Plug the fast collectors in (nothing under ``AUTODIFF_REFERENCE=1``)."""
    fill("collectors", "total's collectors in tight loops with per-type getters, and compiled readers for a "
         "structure seen before", parameters=parameters, parameter_pairs=parameter_pairs)
