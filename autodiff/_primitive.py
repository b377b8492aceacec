"""Primitives, the one registry of their pullback rules, and recording one call on a tape.

A :class:`Primitive` wraps a plain function on numpy values.  Called with
traced arguments it unwraps those of the highest level, calls itself on the
rest (so lower levels record on their own tapes) and records one entry on the
highest tape.  Rules live in ``_rules``, keyed by the primitive object; a rule is
a function ``rule(g, argnums, ans, args, kwargs)`` returning one cotangent per traced
argument, a tuple of per-argument pullbacks ``vjp(g, ans, *args, **kwargs)``, or a
:class:`ResidualRule` for a primitive whose forward hands residuals to its pullback
(``_forwards`` holds that forward; the tape keeps the residuals, see ``defvjp_fwd_bwd``).
"""

import inspect
from threading import get_ident

from ._checks import leaked
from ._hooks import hooks, slot
from ._protection import protect_inside
from ._traced import Tape, Traced, ambient

_rules = {}
_forwards = {}  # primitive -> fwd(*args, **kwargs) giving (value, residuals), for defvjp_fwd_bwd
_plans = {}  # primitive -> what its pullbacks read (autodiff._residuals.Plan); without one an entry keeps all
_effects = set()  # primitives whose call does more than compute its value (draws random numbers): extend.effectful
_plain_results = set()  # primitives whose values carry no derivative (comparisons, masks, rounding): autodiff.numpy
# calls them on values stripped of their differentiation levels, and so does a program's replay


class Primitive:
    """A function whose derivative is given by a registered rule, not traced."""

    def __init__(self, fun, name=None):
        self.fun = fun
        self.__name__ = name or fun.__name__
        self.__qualname__ = self.__name__
        self.__doc__ = fun.__doc__
        self.__module__ = fun.__module__
        self.__wrapped__ = fun
        params = _parameters(fun)  # read once: what a call may pass, by keyword and by position
        self.keywords = _keywords(params)
        self.positional = _positional(params)
        self.most_positional = _most_positional(params)

    def __call__(self, *args, **kwargs):
        if len(args) > self.most_positional:
            raise _too_many(self, args)
        top = None
        for a in args:
            if type(a) is Traced and (top is None or a.level > top.level):
                top = a
        if kwargs:
            _check_keywords(self, kwargs)
        if top is None:
            if ambient:  # a jit may be tracing
                return _staged_or_plain(self, args, kwargs)
            return self.fun(*args, **kwargs)
        if type(top.tape) is not Tape:  # a jvp's, vmap's or jit's level: it says what a call does (its push)
            return top.tape.push(self, args, kwargs)
        return hooks.record(self, top.tape, args, kwargs)

    def __repr__(self):
        return f"<primitive {self.__name__}>"

    def __reduce__(self):
        return self.__module__ + "." + self.__name__


def _staged_or_plain(prim, args, kwargs):
    """A call of plain values while some thread's jit traces: this thread's staging level records it (its
    constants are the program's), else it is the plain function."""
    staging = ambient.get(get_ident())
    if staging is not None:
        return staging.push(prim, args, kwargs)
    return prim.fun(*args, **kwargs)


def _check_keywords(prim, kwargs):
    """Refuse a value being differentiated passed by keyword, and a keyword the primitive does not take."""
    if Traced in map(type, kwargs.values()):
        raise _traced_keyword(prim, kwargs)
    if prim.keywords is not None and not kwargs.keys() <= prim.keywords:
        raise _unknown_keyword(prim, kwargs)


def _parameters(fun):
    """``fun``'s parameters, or ``None`` for a builtin without a signature (such as ``np.tanh``)."""
    try:
        return list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None


def _keywords(params):
    """The keyword arguments a function with ``params`` accepts, so a call with another fails naming the primitive;
    ``None`` for any (``**kwargs``, or no signature to read: such a builtin checks its own)."""
    if params is None or any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _by_position(params):
    """The parameters a call may give by position, in order."""
    return [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _positional(params):
    """The names of the parameters that a call must give (no default) and may give by position, in order: a
    batching rule reads those by position, so one given by keyword (``anp.roll(x, shift=1)``) is moved there."""
    return () if params is None else tuple(p.name for p in _by_position(params) if p.default is p.empty)


def _most_positional(params):
    """How many arguments a call may give by position (infinity with ``*args`` or no signature to read)."""
    if params is None or any(p.kind is p.VAR_POSITIONAL for p in params):
        return float("inf")
    return len(_by_position(params))


def _too_many(prim, args):
    """The error for more positional arguments than the primitive takes (Python's own named a private function,
    ``_cumsum() takes from 1 to 2 positional arguments``); numpy's order often differs after ``axis``."""
    taken = [p.name for p in _by_position(_parameters(prim.fun))]
    return TypeError(
        f"{prim.__name__}: takes at most {len(taken)} arguments by position ({', '.join(taken)}), got {len(args)}; "
        "pass the others by keyword, leaving out any it does not take (numpy's order may differ after these: its "
        "dtype= or out=)"
    )


def _unknown_keyword(prim, kwargs):
    """The error for a keyword argument the primitive's function does not take (it named a private function)."""
    name = next(k for k in kwargs if k not in prim.keywords)
    return TypeError(
        f"{prim.__name__}: the keyword argument {name}= is not supported here; it takes "
        f"{', '.join(sorted(prim.keywords)) or 'no keyword arguments'}; leave it out, or express it with other "
        f"ops (numpy's where= as anp.where(mask, x, 0), initial= as anp.maximum(result, initial))"
    )


def _traced_keyword(prim, kwargs):
    """The error for a value being differentiated passed by keyword: rules differentiate positional arguments only,
    so it would reach the plain forward still traced (a wrong tangent, or a false "escaped" error)."""
    name = next(k for k, v in kwargs.items() if type(v) is Traced)
    return TypeError(
        f"{prim.__name__}: the keyword argument {name}= is a value being differentiated, but a primitive's rules "
        f"differentiate its positional arguments only; pass it positionally ({prim.__name__}(..., {name}), with "
        f"its rule taking it positionally too), or hold it constant with autodiff.stop_gradient"
    )


def _record(prim, tape, args, kwargs, value=None):
    """Record ``prim(*args, **kwargs)`` on ``tape``; its traced arguments are those of ``tape``'s level.

    A ``value`` given is the call's output, computed before (``autodiff.remat``'s policy replays it), used
    when no traced value of a lower level needs the call recorded on its tape.

    The entry keeps what the pullbacks read (:func:`kept`); the constants among
    it are protected from in-place changes until the tape is done.  Traced
    values of lower levels stay inside the arguments, so the call itself
    records on their tapes.
    """
    if not tape.active:
        raise leaked(prim, tape)
    argvals, parents, argnums = _unwrap(prim, tape, args)
    protect_inside(tape, kwargs)
    lower = any(type(v) is Traced for v in argvals)
    forward, index = _forwards.get(prim), len(tape.entries)
    if forward is not None:  # the forward hands its residuals to the pullback through the tape
        ans, tape.residuals[index] = _run_forward(forward, argnums, argvals, kwargs)
    elif value is not None and not lower:
        ans = value
    else:
        ans = prim(*argvals, **kwargs) if lower else prim.fun(*argvals, **kwargs)
    kept_ans, kept_args = kept(prim, tape, argnums, ans, argvals)
    for i, a in enumerate(kept_args):
        if i not in argnums and type(a) is not Traced:  # a constant the pullback reads: no in-place changes
            protect_inside(tape, a)
    tape.entries.append((prim, parents, argnums, kept_ans, kept_args, kwargs))
    return Traced(ans, tape, index, tape.level)


def _run_forward(forward, argnums, argvals, kwargs):
    """``(value, residuals)`` of a forward; a :class:`ToldForward` is told which arguments are traced."""
    if type(forward) is ToldForward:
        return forward.fwd(argnums, *argvals, **kwargs)
    return forward(*argvals, **kwargs)


def kept(prim, tape, argnums, ans, argvals):
    """``(ans, argvals)`` as the entry keeps them: what ``prim``'s pullbacks read, stand-ins carrying shape and
    dtype for the rest (:mod:`autodiff._residuals`); all of it on a tape that keeps everything (``linearize``'s,
    whose JVP rules read their own, and one ``autodiff.trace`` lists)."""
    plan = _plans.get(prim)
    if plan is None or tape.keeps_all:
        return ans, argvals
    return plan.keep(argnums, ans, argvals)


def _unwrap(prim, tape, args):
    """The arguments with ``tape``'s traced values replaced by their values, their entries and positions."""
    argvals, parents, argnums = list(args), [], []
    for i, a in enumerate(args):
        if type(a) is Traced and a.level == tape.level:
            if a.tape is not tape:
                raise leaked(prim, a.tape)
            parents.append(a.index)
            argnums.append(i)
            argvals[i] = a.value
    return argvals, parents, argnums


slot("record", _record, "record one primitive call on a tape (the accelerated twin unrolls the common case)")


def pull(prim, g, argnums, ans, args, kwargs, residuals=None):
    """The cotangents of the arguments at ``argnums`` given the output cotangent ``g``, by ``prim``'s rule."""
    rule = rule_of(prim)
    if type(rule) is tuple:
        return [argument_pullback(prim, rule, k)(g, ans, *args, **kwargs) for k in argnums]
    if type(rule) is ResidualRule:
        return rule(g, residuals, argnums, ans, args, kwargs)
    return rule(g, argnums, ans, args, kwargs)


def per_argument_rule(name, vjps):
    """A rule from one pullback per argument: ``vjps[i](g, ans, *args, **kwargs)``; an argument given
    ``None`` (or none at all, past the end: see :func:`argument_pullback`) cannot be differentiated."""
    return tuple(v if v is not None else _no_pullback(name, i) for i, v in enumerate(vjps))


def argument_pullback(prim, rule, k):
    """Argument ``k``'s pullback in a per-argument ``rule``, or the error for an argument past its end."""
    if k < len(rule):
        return rule[k]
    return _no_pullback(prim.__name__, k)


def _no_pullback(name, k):
    """A pullback that raises: argument ``k`` of ``name`` has none."""

    def missing(*args, **kwargs):
        raise NotImplementedError(
            f"{name}: argument {k} has no pullback, so it cannot be "
            "differentiated; pass it as a constant, or register a pullback for "
            "it with autodiff.extend.defvjp"
        )

    return missing


def joint_rule(joint):
    """A rule from one pullback giving every argument's cotangent.

    Only the cotangents of traced arguments are kept, so a ``Thunk`` given
    for a constant is never evaluated.
    """

    def rule(g, argnums, ans, args, kwargs):
        return _keep(joint(g, ans, *args, **kwargs), argnums)

    return rule


class ToldForward:
    """A forward (``_forwards``) told which arguments the tape traces: ``fwd(argnums, *args, **kwargs)`` gives
    ``(value, residuals)`` for a pullback of those arguments only (a jitted call's).  Called as a plain forward,
    it takes every argument as traced."""

    __slots__ = ("fwd",)

    def __init__(self, fwd):
        self.fwd = fwd

    def __call__(self, *args, **kwargs):
        return self.fwd(tuple(range(len(args))), *args, **kwargs)


class ResidualRule:
    """A joint pullback that also reads what the forward saved: ``bwd(g, residuals, ans, *args, **kwargs)``; with
    ``told`` true, ``bwd(g, residuals, argnums, ans, *args, **kwargs)``, told which arguments are traced (so it
    may compute only their cotangents, as a jitted call's pullback does)."""

    __slots__ = ("bwd", "told")

    def __init__(self, bwd, told=False):
        self.bwd, self.told = bwd, told

    def cotangents(self, g, residuals, argnums, ans, args, kwargs):
        """One cotangent per positional argument (only those at ``argnums`` are read)."""
        if self.told:
            return self.bwd(g, residuals, argnums, ans, *args, **kwargs)
        return self.bwd(g, residuals, ans, *args, **kwargs)

    def __call__(self, g, residuals, argnums, ans, args, kwargs):
        return _keep(self.cotangents(g, residuals, argnums, ans, args, kwargs), argnums)


def _keep(cts, argnums):
    kept = _Kept([cts[i] for i in argnums])
    kept.all, kept.argnums = cts, argnums  # so autodiff.trace can show the dropped ones
    return kept


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
