"""autodiff's own registry of container types: how to list children and rebuild.

``traversal`` registers into it, so what traversal can walk, ``grad`` can
differentiate through.  Every container is described by a :class:`Node`:
``children(x) -> (keys, values)``, ``rebuild(x, values) -> new x`` and
``tangent(x, keys, values)``, the structural tangent of ``x``.
"""

import copy
import dataclasses
import operator

from ._structural import Tangent


class Node:
    """How to see inside one container type.

    ``fields`` names the attributes of a dataclass node (its children, in
    order), so fast walkers can read them with ``fields_getter``; ``None`` for
    any other node.
    """

    __slots__ = ("children", "rebuild", "tangent", "fields")

    def __init__(self, children, rebuild, tangent, fields=None):
        self.children = children
        self.rebuild = rebuild
        self.tangent = tangent
        self.fields = fields


def _seq_children(x):
    return range(len(x)), x


def _dict_children(x):
    return list(x), list(x.values())


def _dict_rebuild(x, values):
    return dict(zip(x, values))


def _namedtuple_rebuild(x, values):
    return type(x)(*values)


def _dataclass_node(cls):
    """A Node for one dataclass type, with its field names looked up once."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    get = fields_getter(names)

    def children(x):
        return names, get(x)

    def rebuild(x, values):
        new = copy.copy(x)  # without calling __init__ or __post_init__ again; frozen ones too
        for n, v in zip(names, values):
            object.__setattr__(new, n, v)
        return new

    def tangent(x, keys, values):
        return Tangent(cls, zip(names, values))

    return Node(children, rebuild, tangent, names)


def fields_getter(names):
    """``x -> tuple of x's attributes names``, in one C call (``operator.attrgetter``) for two or more."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    if len(names) == 1:
        name = names[0]
        return lambda x: (getattr(x, name),)
    return lambda x: ()


def _tangent_children(x):
    return list(x.fields), list(x.fields.values())


def _tangent_rebuild(x, values):
    return Tangent(x.primal_type, zip(x.fields, values))


_BUILTIN = {
    list: Node(_seq_children, lambda x, v: list(v), lambda x, k, v: list(v)),
    tuple: Node(_seq_children, lambda x, v: tuple(v), lambda x, k, v: tuple(v)),
    dict: Node(_dict_children, _dict_rebuild, lambda x, k, v: dict(zip(k, v))),
    Tangent: Node(_tangent_children, _tangent_rebuild, lambda x, k, v: _tangent_rebuild(x, v)),
}


def _dict_subclass_rebuild(x, values):
    new = copy.copy(x)
    new.clear()
    new.update(zip(list(x), values))
    return new


_DICT_SUBCLASS = Node(_dict_children, _dict_subclass_rebuild, lambda x, k, v: dict(zip(k, v)))
_NAMEDTUPLE = Node(
    lambda x: (list(x._fields), list(x)), _namedtuple_rebuild, lambda x, k, v: _namedtuple_rebuild(x, v)
)

_registry = dict(_BUILTIN)
_leaves = set()
_resolved = {}  # type -> Node or None, memoised lookups: every type a walk has met since it was last forgotten
_version = [0]  # bumped by a registration that changes a memoised lookup, so walkers may memoise per type too


def registry_version():
    """A number that changes whenever a registration changes how a type already met flattens (the type, or a
    subclass of it, was looked up before); registering a type no walk has met changes nothing walked, compiled
    or traced so far, so it leaves the number alone (libraries register their types when they import)."""
    return _version[0]


def _forget(cls):
    """Forget the lookups a registration of ``cls`` may change: ``cls``'s and its subclasses' (resolved by
    their MRO); a lookup changed moves the version."""
    stale = [t for t in list(_resolved) if cls in t.__mro__]
    for t in stale:
        del _resolved[t]
        _filter_rules.pop(t, None)
    if stale:
        _version[0] += 1


def register_container(cls, children, rebuild):
    """Let autodiff (and traversal) see inside ``cls``.

    ``children(x)`` returns a dict of named children or a sequence of them;
    ``rebuild(x, children)`` returns a new object from children of the same form.
    Its gradient is a ``Tangent`` naming ``cls``.
    """
    node = Node(*_user_functions(children, rebuild))
    _registry[cls] = node
    _leaves.discard(cls)
    _forget(cls)
    return cls


def _user_functions(children, rebuild):
    def keyed_children(x):
        kids = children(x)
        if isinstance(kids, dict):
            return list(kids), list(kids.values())
        return range(len(kids)), list(kids)

    def keyed_rebuild(x, values):
        kids = children(x)
        if isinstance(kids, dict):
            return rebuild(x, dict(zip(kids, values)))
        return rebuild(x, type(kids)(values) if isinstance(kids, (list, tuple)) else list(values))

    def tangent(x, keys, values):
        return Tangent(type(x), dict(zip(keys, values)))

    return keyed_children, keyed_rebuild, tangent


def register_leaf(cls):
    """Make ``cls`` a leaf: never looked inside, even if it is a dataclass."""
    _leaves.add(cls)
    _registry.pop(cls, None)
    _forget(cls)
    return cls


def node_of(x):
    """The :class:`Node` for ``x``, or ``None`` if ``x`` is a leaf."""
    cls = type(x)
    try:
        return _resolved[cls]
    except KeyError:
        node = _resolved[cls] = _resolve(cls)
        if node is not None and _trainable_filter[1] is not None:
            _filter_rules[cls] = _rule_of(cls)  # what its trainable children are, as first met
        return node


def _resolve(cls):
    if cls in _leaves:
        return None
    for klass in cls.__mro__:
        if klass in _registry and (klass is cls or klass not in _BUILTIN):
            return _registry[klass]
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return _NAMEDTUPLE
    if dataclasses.is_dataclass(cls):
        return _dataclass_node(cls)
    if issubclass(cls, dict):
        return _DICT_SUBCLASS
    return None


_trainable_filter = [None, None, None]  # the filter, its rule per type, what registrations elsewhere move
_filter_rules = {}  # container type met -> the filter's rule for it when last looked at
_filter_seen = [None]  # changes() when the rules were last compared
_filter_version = [0]


def set_trainable_filter(select, rule=None, changes=None):
    """Tell autodiff which children of a container are trainable: ``select(x)`` names them, or returns
    ``None`` for all.  ``rule(cls)`` is what decides it for instances of ``cls`` (compared with ``is``);
    ``changes()`` changes whenever a registration elsewhere may change ``rule``'s answer for some type (an
    ABC's), and the filter's own registrations call :func:`recheck_trainable_filter`; without them ``select``
    is taken never to change.  ``traversal`` sets its ``trainable`` here (autodiff never imports
    traversal): the children it leaves out are constants for every transform, and a tied array's gradient
    sits at its first trainable occurrence (design.md sections 1 and 3)."""
    _trainable_filter[:] = [select, rule, changes]
    _filter_seen[0] = changes() if changes is not None else None
    _filter_rules.clear()
    if rule is not None:
        _filter_rules.update((t, _rule_of(t)) for t, node in _resolved.items() if node is not None)
    _filter_version[0] += 1


def trainable_filter():
    """The function set by :func:`set_trainable_filter`, or ``None``."""
    return _trainable_filter[0]


def trainable_filter_version():
    """A number that changes whenever the trainable filter's rule changes for a container type already met.

    A registration elsewhere (another type's rule; for ``traversal.trainable``, a class registered with any ABC
    anywhere, which may change what it dispatches to) compares the rules of the types met, once, and leaves the
    number alone when none changed: a jitted function does not trace again, a compiled layout stays.

    >>> import abc
    >>> before = trainable_filter_version()
    >>> _ = abc.ABC.register(type("Elsewhere", (), {}))
    >>> trainable_filter_version() == before
    True
    """
    changes = _trainable_filter[2]
    now = changes() if changes is not None else None
    if now != _filter_seen[0]:
        _filter_seen[0] = now
        _compare_rules()
    return _filter_version[0]


def recheck_trainable_filter():
    """Compare the rules of the types met now: the trainable filter has registered a rule."""
    _compare_rules()


def _rule_of(cls):
    """The trainable filter's rule for ``cls``; ``None`` when asking fails (``singledispatch``'s ambiguous
    dispatch, which the walk that asks the filter itself raises, naming the types)."""
    try:
        return _trainable_filter[1](cls)
    except RuntimeError:
        return None


def _compare_rules():
    """Move the version if the rule for a type met has changed, and remember the new rules."""
    if _trainable_filter[1] is None:
        return
    changed = False
    for cls, before in list(_filter_rules.items()):  # a snapshot: another thread may meet a type
        after = _rule_of(cls)
        if after is not before:
            _filter_rules[cls], changed = after, True
    _filter_version[0] += changed
