"""Primitives and the one registry of their pullback rules.

A :class:`Primitive` wraps a plain function on numpy values.  Called with
traced arguments it unwraps those of the highest level, calls itself on the
rest (so lower levels record on their own tapes) and records one entry on the
highest tape.  Rules live in ``_rules``, keyed by the primitive object; a rule is a function
``rule(g, argnums, ans, args, kwargs)`` returning one cotangent per traced
argument, or a tuple of per-argument pullbacks ``vjp(g, ans, *args, **kwargs)``.
"""

import numpy as np

from ._traced import NESTED, Tape, Traced, protect, protect_inside

_rules = {}


class Primitive:
    """A function whose derivative is given by a registered rule, not traced."""

    def __init__(self, fun, name=None):
        self.fun = fun
        self.__name__ = name or fun.__name__
        self.__qualname__ = self.__name__
        self.__doc__ = fun.__doc__
        self.__module__ = fun.__module__
        self.__wrapped__ = fun

    def __call__(self, *args, **kwargs):
        top = None
        for a in args:
            if type(a) is Traced and (top is None or a.level > top.level):
                top = a
        if top is None:
            return self.fun(*args, **kwargs)
        if type(top.tape) is not Tape:  # a jvp's level: push tangents forward, record nothing (_forward.py)
            return top.tape.push(self, args, kwargs)
        return _record(self, top.tape, args, kwargs)

    def __repr__(self):
        return f"<primitive {self.__name__}>"

    def __reduce__(self):
        return self.__module__ + "." + self.__name__


def _record(prim, tape, args, kwargs):
    if not tape.active:
        raise _leaked(prim, tape)
    first = args[0]
    if type(first) is Traced and (len(args) == 1 or (len(args) == 2 and type(args[1]) in _SCALARS)):
        return _record_first(prim, tape, first, args, kwargs)
    argvals = list(args)
    parents = []
    argnums = []
    level = tape.level
    lower = False  # do traced values of lower levels remain inside?
    protected = tape.protected
    i = 0
    for a in args:
        kind = type(a)
        if kind is Traced:
            if a.level == level:
                if a.tape is not tape:
                    raise _leaked(prim, a.tape)
                parents.append(a.index)
                argnums.append(i)
                argvals[i] = a = a.value
            lower = lower or type(a) is Traced
        elif kind is np.ndarray:  # a constant the pullback may read: no in-place changes until done
            if id(a) not in protected:
                protect(tape, a)
        elif kind in NESTED or isinstance(a, np.ndarray):  # index tuples, lists of arrays, subclasses
            protect_inside(tape, a)
        i += 1
    if kwargs:
        protect_inside(tape, kwargs)
    ans = prim(*argvals, **kwargs) if lower else prim.fun(*argvals, **kwargs)
    entries = tape.entries
    entries.append((prim, parents, argnums, ans, argvals, kwargs))
    return Traced(ans, tape, len(entries) - 1, level)


_SCALARS = (float, int)


def _record_first(prim, tape, a, args, kwargs):
    """The common case, unrolled: only the first argument is traced (``sin(x)``, ``x * 0.5``)."""
    if a.tape is not tape:
        raise _leaked(prim, a.tape)
    v = a.value
    argvals = (v,) + args[1:]
    if kwargs:
        protect_inside(tape, kwargs)
    ans = prim(*argvals, **kwargs) if type(v) is Traced else prim.fun(*argvals, **kwargs)
    entries = tape.entries
    entries.append((prim, (a.index,), (0,), ans, argvals, kwargs))
    return Traced(ans, tape, len(entries) - 1, tape.level)


def _leaked(prim, tape):
    return RuntimeError(
        f"{prim.__name__}: got a traced value from a differentiation (level "
        f"{tape.level}) that has already finished. A traced value escaped its "
        "grad/vjp call, e.g. through a global, a closure or `has_aux` misuse. "
        "Return it from the differentiated function instead of storing it."
    )


def per_argument_rule(name, vjps):
    """A rule from one pullback per argument: ``vjps[i](g, ans, *args, **kwargs)``."""

    def missing(*args, **kwargs):
        raise NotImplementedError(
            f"{name}: this argument has no pullback, so it cannot be "
            "differentiated; pass it as a constant, or register a pullback for "
            "it with autodiff.extend.defvjp"
        )

    return tuple(v if v is not None else missing for v in vjps) + (missing,) * 8


def joint_rule(joint):
    """A rule from one pullback giving every argument's cotangent.

    Only the cotangents of traced arguments are kept, so a ``Thunk`` given
    for a constant is never evaluated.
    """

    def rule(g, argnums, ans, args, kwargs):
        cts = joint(g, ans, *args, **kwargs)
        kept = _Kept([cts[i] for i in argnums])
        kept.all, kept.argnums = cts, argnums  # so autodiff.trace can show the dropped ones
        return kept

    return rule


class _Kept(list):
    """The cotangents a joint rule gave for traced arguments; ``dropped`` lists the others."""

    __slots__ = ("all", "argnums")

    @property
    def dropped(self):
        traced = set(self.argnums)
        return [c for i, c in enumerate(self.all) if i not in traced]


def rule_of(prim):
    try:
        return _rules[prim]
    except KeyError:
        raise NotImplementedError(
            f"{prim.__name__} has no registered pullback; define one with "
            "autodiff.extend.defvjp"
        ) from None
