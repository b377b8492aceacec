"""The one registry of forward (JVP) rules, and the fallback through a primitive's VJP.

``_jvp_rules`` maps a primitive to a rule ``rule(tangents, argnums, ans, args,
kwargs)`` giving the output tangent from the tangents of the arguments at
``argnums`` (never symbolic zeros: those arguments are left out).  Rules are
built from one JVP per argument (:func:`per_argument_jvp`), one joint JVP
(:func:`joint_jvp`) or multilinearity (:func:`linear_jvp`).  A primitive with
only a pullback is pushed forward by :func:`linearised`: its pullback
``u -> Jᵀu`` is linear in ``u``, so pulling the tangent back through it gives
``J t`` (the double-vjp trick, for one primitive).
"""

from functools import partial

from ._arguments import zeros_like_primal
from ._checks import check_tangent
from ._hooks import hooks
from ._primitive import _forwards, _rules, pull
from ._protection import release
from ._tangents import ZERO, Thunk, ZeroTangent, add_tangents, unthunk
from ._traced import Traced, _state, new_input, open_tape, value_of

_jvp_rules = {}
_fallbacks = {}  # primitive -> its linearised rule, built once


def jvp_rule_of(prim):
    """The forward rule of ``prim``: its own, or the linearisation of its pullback."""
    rule = _jvp_rules.get(prim) or _fallbacks.get(prim)
    if rule is not None:
        return rule
    if prim not in _rules:
        raise NotImplementedError(
            f"{prim.__name__} has neither a JVP rule nor a pullback, so it cannot be pushed "
            "forward; define one with autodiff.extend.defjvp (or a pullback with defvjp)"
        )
    rule = _fallbacks[prim] = partial(linearised, prim)
    return rule


def checked_jvp(prim, rule, caller):
    """The JVP rule to register for ``prim`` from module ``caller``: autodiff's own as given (its op tables test
    them); any other checked at each call, so that a tangent of another shape or dtype than the output's is
    refused naming the rule (:func:`autodiff._checks.check_tangent`), before the ops after it broadcast it
    silently: the pushforward's counterpart of a pullback's check (:mod:`autodiff._study.rule_checks`)."""
    if caller == "autodiff" or caller.startswith("autodiff."):
        return rule

    def checked(tangents, argnums, ans, args, kwargs):
        return check_tangent(prim, rule(tangents, argnums, ans, args, kwargs), ans)

    return checked


def per_argument_jvp(name, jvps):
    """A rule from one JVP per argument, ``jvps[i](t, ans, *args, **kwargs)``, summed over the arguments."""

    def jvp_of(i):
        """Argument ``i``'s JVP, or the error that says how to give one."""
        if i < len(jvps) and jvps[i] is not None:
            return jvps[i]
        raise NotImplementedError(
            f"{name}: argument {i} has no JVP, so it cannot carry a tangent; pass it as a "
            "constant, or register one with autodiff.extend.defjvp"
        )

    def rule(tangents, argnums, ans, args, kwargs):
        if len(argnums) == 1:  # the usual case
            return jvp_of(argnums[0])(tangents[0], ans, *args, **kwargs)
        out = ZERO
        for i, t in zip(argnums, tangents):
            out = add_tangents(out, jvp_of(i)(t, ans, *args, **kwargs))
        return out

    return rule


def joint_jvp(jvp):
    """A rule from one JVP of all arguments: ``jvp(tangents, ans, *args, **kwargs)``, zeros symbolic."""

    def rule(tangents, argnums, ans, args, kwargs):
        full = [ZERO] * len(args)
        for i, t in zip(argnums, tangents):
            full[i] = t
        return jvp(full, ans, *args, **kwargs)

    return rule


def linear_jvp(prim):
    """The rule of a primitive linear in each positional argument, the others held: ``prim`` of the tangent."""

    def rule(tangents, argnums, ans, args, kwargs):
        out = ZERO
        for i, t in zip(argnums, tangents):
            out = add_tangents(out, prim(*args[:i], t, *args[i + 1:], **kwargs))
        return out

    return rule


def linearised(prim, tangents, argnums, ans, args, kwargs):
    """``J t`` for one call of ``prim`` from its pullback: the transpose of ``u -> Jᵀu`` applied to ``t``.

    The pullback is traced once at ``u = 0`` on a tape of its own (above every
    level in play), and the tangents are pulled back through that tape.
    """
    tracer, _state.tracer = _state.__dict__.get("tracer"), None  # autodiff.trace shows the push, not this tape
    try:
        with open_tape() as tape:
            u = _cotangent_inputs(tape, ans)
            cts = _pull(prim, u, argnums, ans, args, kwargs)
    finally:
        _state.tracer = tracer
    try:
        seeds = {}
        for c, t in zip(cts, tangents):
            _seed(seeds, tape, c, t)
        got = hooks.backward(tape, seeds) if seeds else [None] * len(tape.entries)
        if type(u) is tuple:
            return tuple(_settle(got[x.index]) for x in u)
        return _settle(got[u.index])
    finally:
        release(tape)


def _cotangent_inputs(tape, ans):
    """A zero cotangent shaped like ``ans``, traced on ``tape`` (one input per part of a tuple)."""
    value = value_of(ans)
    if type(value) is tuple:
        return tuple(new_input(tape, zeros_like_primal(a)) for a in value)
    return new_input(tape, zeros_like_primal(value))


def _pull(prim, u, argnums, ans, args, kwargs):
    """The cotangents of the arguments at ``argnums``, thunks evaluated while the tape is open.

    A primitive whose forward hands residuals to its pullback runs that forward again for them.
    """
    forward = _forwards.get(prim)
    residuals = forward(*args, **kwargs)[1] if forward is not None else None
    return [unthunk(c) for c in pull(prim, u, argnums, ans, args, kwargs, residuals)]


def _seed(seeds, tape, c, t):
    """Seed the entry holding cotangent ``c`` with tangent ``t`` (part by part for a tuple)."""
    if type(c) in (tuple, list):
        for ci, ti in zip(c, t if type(t) in (tuple, list) else (t,) * len(c)):
            _seed(seeds, tape, ci, ti)
    elif type(c) is Traced and c.tape is tape and type(t) is not ZeroTangent:
        seeds[c.index] = add_tangents(seeds.get(c.index), t)


def _settle(t):
    if type(t) is Thunk:
        t = t()
    return ZERO if t is None else t
