"""Rule checks: gradcheck a rule at its first call, and warn when a rule silently drops a second derivative.

A pullback runs with its arguments traced at every lower level in play, so
that the ops it calls are recorded there and the outer derivative can
differentiate them.  A rule that strips that tracing (``value_of(x)``,
``stop_gradient(x)``) and computes with the bare value gives the outer level
a constant, and ``f''`` comes out zero without a word, in JAX and HIPS
autograd alike.  Two checks catch it:

* **At the source, always on.**  While a rule defined outside autodiff runs
  with an argument traced at a lower level (a nested differentiation is
  active), :func:`value_of` and :func:`stop_gradient` note a strip of that
  argument (or of ``ans``).  When the rule returns, the derivative of its
  cotangents along a direction in the stripped value is taken twice, on
  plain values: by central differences, and by pushing the direction through
  the rule's own ops (where the strip shows as a constant).  If they differ,
  the strip lost a real dependence and a :class:`RuleWarning` names the rule,
  once per rule.  A strip for a shape, a dtype or a mask, or of a value the
  rule also reads through differentiable ops, agrees and stays silent.
* **On request.**  ``defvjp(..., check=True)``, or the global switch
  (:func:`check_rules`, or ``AUTODIFF_CHECK_RULES=1`` in the environment),
  runs :func:`autodiff.gradcheck` at orders 1 and 2 on the rule's first call,
  at that call's argument values (the float ones varied along random
  directions, the others held), and raises naming the rule and the order.

Cost: autodiff's own rules are never wrapped, so its backward pass is as
before; :func:`value_of` pays one test of an empty dict.  A user rule pays one
scan of its arguments per call; only a nested call sets up the watch, and
the first noted strip reruns the rule three times on plain values, after which
that rule is no longer watched.
"""

import os
import warnings
from threading import get_ident

import numpy as np

from .._arguments import is_differentiable, zeros_like_primal
from .._batching import example_shape
from .._higher import jvp
from .._residuals import Like
from .._stop_gradient import stop_gradient, value_of  # noqa: F401 (re-exported)
from .._stop_gradient import watched as _watched
from .._tangents import Thunk, ZeroTangent
from .._traced import Traced, _state, ambient
from .gradcheck import GradcheckError, gradcheck

_switch = [os.environ.get("AUTODIFF_CHECK_RULES", "") not in ("", "0")]


class RuleWarning(UserWarning):
    """A rule stripped tracing from an argument traced at a lower level: its higher derivative is lost."""


def check_rules(on=True):
    """Gradcheck (orders 1 and 2) every rule defined outside autodiff at its first call from now on; returns
    the previous setting.  ``AUTODIFF_CHECK_RULES=1`` in the environment switches it on at import, for a
    test session.  A rule registered with ``check=False`` is never checked, ``check=True`` always; a rule
    already called is not checked again, and autodiff's own rules (tested by its op tables) only when
    registered with ``check=True``.

    >>> previous = check_rules(True)
    >>> check_rules(previous)
    True
    """
    previous, _switch[0] = _switch[0], bool(on)
    return previous


def guarded(prim, rule, check, source, caller):
    """The rule to register for ``prim``: autodiff's own as given (unless ``check=True``); any other wrapped
    in a :class:`_Guard`, in the rule's own form (a tuple of per-argument pullbacks, or one joint rule).
    ``source`` is what the rule writer gave: the per-argument pullbacks (``None`` for an argument without
    one), or the joint pullback; a warning points at its code."""
    builtin = caller == "autodiff" or caller.startswith("autodiff.")
    if builtin and check is not True:
        return rule
    guard = _Guard(prim, rule, check, source, watch=not builtin)
    if type(rule) is tuple:
        return tuple(_PerArgument(guard, k) for k in range(len(rule)))
    return guard.joint


class _PerArgument:
    """Argument ``k``'s pullback, through the guard: what the backward pass calls as ``rule[k](g, ans, *args)``."""

    __slots__ = ("guard", "k")

    def __init__(self, guard, k):
        self.guard, self.k = guard, k

    def __call__(self, g, ans, *args, **kwargs):
        guard, k = self.guard, self.k
        ct = guard.call(lambda g, ans, args: guard.rule[k](g, ans, *args, **kwargs), g, ans, args, kwargs)
        return _shaped(guard.prim, k, ct, args[k])


class _Guard:
    """One rule's checks: the first-call gradcheck (once) and the strip watch (on nested calls)."""

    def __init__(self, prim, rule, check, source, watch):
        self.prim, self.rule, self.check, self.watch = prim, rule, check, watch
        self.source = source if isinstance(source, tuple) else (source,)
        self.differentiable = [v is not None for v in source] if isinstance(source, tuple) else None
        self.first = True

    def joint(self, g, argnums, ans, args, kwargs):
        cts = self.call(lambda g, ans, args: self.rule(g, argnums, ans, args, kwargs), g, ans, args, kwargs)
        for k, ct in zip(argnums, cts):
            _shaped(self.prim, k, ct, args[k])
        return cts

    def call(self, run, g, ans, args, kwargs):
        if self.first:
            self.first = False
            if self.check is True or (self.check is None and _switch[0]):
                _gradcheck_rule(self.prim, self.differentiable, args, kwargs)
        if not self.watch or (type(ans) is not Traced and not any(type(a) is Traced for a in args)):
            return run(g, ans, args)
        return _watching(self, run, g, ans, args)


_ARRAYS = (Traced, np.ndarray, np.generic, float, int, complex, Like)  # a Like: what a tape keeps of an argument


def _widens(got, want):
    """Would broadcasting a value of shape ``got`` against one of shape ``want`` give another shape than ``want``?
    A scalar (``0.0`` for "no gradient") or a size-1 axis broadcasts harmlessly; (3, 1) against (3,) does not."""
    try:
        return np.broadcast_shapes(got, want) != want
    except ValueError:
        return True


def _shaped(prim, k, ct, arg):
    """``ct``, the cotangent a user rule gave argument ``k``, unless broadcasting would widen it past that
    argument's shape (one example's under ``vmap``).  Such a shape is refused here, naming the rule: the
    pullbacks below it would broadcast it silently (a (3, 1) cotangent for a (3,) value becomes (3, 3) at the
    next product and can come back to (3,) through a sum), which the check at the inputs cannot see."""
    if type(ct) not in _ARRAYS or type(arg) not in _ARRAYS:  # a zero, a thunk, a structure: nothing to compare
        return ct
    got, want = example_shape(ct), example_shape(arg)
    if got != want and _widens(got, want):
        raise ValueError(
            f"{prim.__name__}: its pullback for argument {k} returned a cotangent of shape {got}, but the "
            f"argument has shape {want}; a pullback must return its argument's shape (sum a broadcast "
            f"cotangent back down, e.g. with autodiff.numpy.sum over the broadcast axes)")
    return ct


def _gradcheck_rule(prim, differentiable, args, kwargs):
    """Gradcheck ``prim`` at orders 1 and 2 at ``args``' values, outside any trace; raise naming the rule."""
    plain = [_plain(a) for a in args]
    wrt = [i for i, a in enumerate(plain)
           if is_differentiable(a) and (differentiable is None or (i < len(differentiable) and differentiable[i]))]

    def f(*xs):
        full = list(plain)
        for i, x in zip(wrt, xs):
            full[i] = x
        return prim(*full, **kwargs)

    tracer, _state.tracer = _state.__dict__.get("tracer"), None  # a trace shows the program, not this check
    staging = ambient.pop(get_ident(), None)  # nor does a jit's program record it (its plain values are a check's)
    try:
        for order in (1, 2):
            gradcheck(f, *[plain[i] for i in wrt], order=order)
    except GradcheckError as e:
        raise GradcheckError(f"{prim.__name__}: its rule fails gradcheck at its first call "
                             f"(defvjp(..., check=True) or autodiff.extend.check_rules): {e}") from None
    finally:
        _state.tracer = tracer
        if staging is not None:
            ambient[get_ident()] = staging


class _Watch:
    """The strips one rule call made: positions (0 for ``ans``, ``i + 1`` for argument ``i``) and levels."""

    def __init__(self, positions):
        self.positions, self.stripped = positions, {}

    def note(self, x, frame):
        if not frame.f_globals.get("__name__", "").startswith("autodiff."):  # not an op reading a shape
            self.stripped[self.positions[id(x)]] = x.level


def _watching(guard, run, g, ans, args):
    """Run the rule with its traced arguments watched; at its first strip, warn if that lost a dependence
    (and stop watching: a rule is judged once)."""
    values = [ans, *args]
    positions = {id(v): k for k, v in enumerate(values) if type(v) is Traced}
    watch = _Watch(positions)
    saved = {key: _watched.get(key) for key in positions}
    _watched.update((key, watch) for key in positions)
    try:
        out = run(g, ans, args)
    finally:
        for key, before in saved.items():
            if before is None:
                _watched.pop(key, None)
            else:
                _watched[key] = before
    if watch.stripped:
        guard.watch = False
        _warn_if_it_mattered(guard, run, g, values, watch.stripped)
    return out


def _warn_if_it_mattered(guard, run, g, values, stripped):
    plain, probe = [_plain(v) for v in values], _probe(_plain(g))
    tracer, _state.tracer = _state.__dict__.get("tracer"), None  # a trace shows the program, not this check
    staging = ambient.pop(get_ident(), None)  # nor does a jit's program record it (its plain values are a check's)
    try:
        for position, level in stripped.items():
            if _lost(run, probe, plain, position):
                _warn_at_rule(guard, RuleWarning(_message(guard.prim, position, level)))
                return
    except Exception:  # the rule cannot run on moved or dual values (a domain, a shape): say nothing
        return
    finally:
        _state.tracer = tracer
        if staging is not None:
            ambient[get_ident()] = staging


def _lost(run, probe, plain, position):
    """Did the strip lose a dependence?  The cotangents' derivative along a direction in the stripped value, by
    central differences, against the derivative the rule's own ops carry (its pushforward along that direction,
    where the strip shows as a constant).  A strip for a shape, a dtype or a mask agrees; so does a value that
    the rule also reads through differentiable ops (a convolution's weight, stripped only for its shape)."""
    x = plain[position]
    if not is_differentiable(x):
        return False

    def cotangents(value):
        moved = list(plain)
        moved[position] = value
        return tuple(_dense(c, p) for c, p in zip(_cotangents(run(probe, moved[0], moved[1:])), plain[1:]))

    direction = _direction(x)
    step = np.sqrt(np.finfo(np.result_type(x)).eps) * (1.0 + float(np.max(np.abs(x))))
    ahead, behind = cotangents(x + step * direction), cotangents(x - step * direction)
    carried = jvp(cotangents, (x,), (direction,))[1]
    for a, b, c in zip(ahead, behind, carried):
        difference = (np.asarray(a, np.complex128) - b) / (2 * step)
        if np.linalg.norm(difference - c) > 1e-2 * (np.linalg.norm(difference) + np.linalg.norm(c)) + 1e-8:
            return True
    return False


def _warn_at_rule(guard, warning):
    """Warn at the line that defined the rule (the backward pass that called it is far from user code)."""
    rule = next((f for f in guard.source if hasattr(f, "__code__") and hasattr(f, "__globals__")), None)
    if rule is None:
        warnings.warn(warning, stacklevel=3)
        return
    where = rule.__globals__
    warnings.warn_explicit(warning, RuleWarning, rule.__code__.co_filename, rule.__code__.co_firstlineno,
                           module=where.get("__name__"), registry=where.setdefault("__warningregistry__", {}))


def _message(prim, position, level):
    what = "its output `ans`" if position == 0 else f"argument {position - 1}"
    return (
        f"{prim.__name__}: its pullback stripped tracing (value_of / stop_gradient) from {what}, which was "
        f"traced at level {level} (a nested differentiation is active), and its cotangent depends on that "
        f"value. The outer derivative sees a constant there, so this rule's second derivative is silently "
        f"zero (f'' = 0). Write the pullback with differentiable ops on the traced value (autodiff.numpy), "
        f"and use value_of only for shapes, dtypes or masks."
    )


def _plain(x):
    while type(x) is Traced:
        x = x.value
    return x


def _probe(g):
    """A cotangent of ones shaped like ``g``: the rule's own may be zero (forward mode linearises a pullback at
    ``u = 0``), and a rule linear in its cotangent shows no dependence on anything there."""
    if isinstance(g, np.ndarray) and is_differentiable(g):
        return np.ones_like(g)
    if isinstance(g, float):
        return 1.0
    return g


def _direction(v):
    """A fixed random direction shaped and typed like ``v``."""
    d = np.random.default_rng(0).standard_normal(np.shape(v))
    return type(v)(d) if isinstance(v, float) else np.asarray(d, np.result_type(v))


def _dense(c, primal):
    """A cotangent as an array: a symbolic zero or ``None`` as zeros shaped like its argument."""
    return zeros_like_primal(primal) if c is None or type(c) is ZeroTangent else c


def _cotangents(cts):
    out = []
    for c in cts if isinstance(cts, (tuple, list)) else (cts,):
        out.append(c() if type(c) is Thunk else c)
    return out
