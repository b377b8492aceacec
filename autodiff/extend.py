"""The door for rule writers: define primitives, their pullbacks (VJPs) and pushforwards (JVPs).

Every built-in op, ``traversal`` and user code define rules through this
module alone.  (The hooks that only ``traversal`` needs, for its fast
collectors and ``total``, live in ``autodiff._for_traversal``.)

>>> import numpy as np
>>> import autodiff
>>> from autodiff.extend import primitive, defvjp
>>> cube = primitive(lambda x: x ** 3, name="cube")
>>> defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
>>> autodiff.grad(cube)(2.0)
12.0
>>> autodiff.grad(autodiff.grad(cube))(2.0)  # the pullback is differentiable
12.0
>>> float(autodiff.jvp(cube, 2.0, 1.0)[1])  # no JVP rule yet: pushed forward through the pullback
12.0
>>> defjvp(cube, lambda t, ans, x: t * 3 * x ** 2)
>>> float(autodiff.jvp(cube, 2.0, 1.0)[1])  # now through its own rule
12.0
"""

import sys

from ._arguments import is_differentiable
from ._batch_rules import BatchingWarning, _batch_rules, loop
from ._batching import batch_through
from ._containers import register_container, register_leaf
from ._forward import jvp_via_ad
from ._jvp_rules import _jvp_rules, checked_jvp, joint_jvp, linear_jvp, per_argument_jvp
from ._paths import cycle_error
from ._primitive import Primitive, ResidualRule, _effects, _forwards, _plans, _rules, joint_rule, per_argument_rule
from ._residuals import Plan
from ._stop_gradient import value_of
from ._structural import Tangent
from ._study.rule_checks import RuleWarning, check_rules, guarded
from ._tangents import NoTangent, Thunk, ZeroTangent, add_tangents, is_inexact, unthunk
from ._traced import Traced, staging_of
from ._traced import value_of as _strip_all
from ._via_ad import vjp_via_ad

__all__ = [
    "primitive", "defvjp", "defvjp_joint", "defvjp_fwd_bwd", "defjvp", "defjvp_joint", "deflinear",
    "Primitive", "Traced", "value_of", "is_differentiable", "is_inexact", "register_container", "register_leaf",
    "ZeroTangent", "NoTangent", "Thunk", "Tangent", "unthunk", "add_tangents", "vjp_via_ad", "jvp_via_ad",
    "check_rules", "RuleWarning", "defbatch", "batch_through", "batch_loop", "BatchingWarning", "plain_value", "surely",
    "cycle_error", "effectful",
]


def plain_value(x):
    """``x`` with every level of tracing stripped, a ``vmap``'s too: under ``vmap``, every example's values
    stacked.  For checks on values (a label's range, an id's), never to compute with: unlike
    :func:`value_of`, which keeps the batch, what it returns belongs to no example in particular.

    >>> import numpy as np
    >>> import autodiff
    >>> autodiff.vmap(lambda i: plain_value(i).shape == (3,) and i)(np.arange(3))
    array([0, 1, 2])

    Under ``autodiff.jit`` the data differs per call, so a read is noted: that signature runs without jit.
    """
    if type(x) is Traced:
        staging = staging_of(x)
        if staging is not None:
            staging.read(sys._getframe(1))
    return _strip_all(x)


def surely(test, x):
    """``test(plain_value(x))`` as a bool when ``x``'s data is known; ``False`` under ``autodiff.jit``, where
    it is not (the program serves every call).  For a fast path that is taken when the test holds and whose
    general path is right for every value: under jit the general path runs, nothing is read, the program stays.

    >>> import numpy as np
    >>> surely(np.all, np.array([True, True])), surely(np.all, np.array([True, False]))
    (True, False)
    """
    if type(x) is Traced and staging_of(x) is not None:
        return False
    return bool(test(_strip_all(x)))


def primitive(fun, name=None):
    """Wrap ``fun`` (a function on plain values) as a primitive; give it a rule with ``defvjp``."""
    return Primitive(fun, name)


def effectful(prim):
    """Mark ``prim`` as a primitive whose call does more than compute its value from its operands (it draws
    random numbers, from numpy's global state or a generator it holds): ``autodiff.jit``'s passes then never
    merge two of its calls into one (common-subexpression elimination) nor compute one ahead, at trace time
    (constant folding).  A call given a random generator as an operand is left alone without the mark.
    Returns ``prim``.

    >>> import numpy as np, autodiff
    >>> jitter = effectful(primitive(lambda x: x + np.random.standard_normal(np.shape(x)), name="jitter"))
    >>> program = autodiff.jit(lambda x: jitter(x) - jitter(x)).lower(np.zeros(2))
    >>> [e.prim.__name__ for e in program.equations if e.prim is jitter]
    ['jitter', 'jitter']
    """
    _effects.add(prim)
    return prim


def defvjp(prim, *vjps, check=None, reads=None):
    """Register one pullback per positional argument of ``prim``.

    ``vjps[i](g, ans, *args, **kwargs)`` returns the cotangent of argument
    ``i`` given the output cotangent ``g`` and the forward output ``ans``.  It
    must be written with differentiable ops (``autodiff.numpy``) so that
    higher derivatives work, and may return ``ZeroTangent()`` or a ``Thunk``.
    ``None`` marks an argument that cannot be differentiated.  A primitive
    whose output is a tuple gets a tuple ``g``, with ``ZeroTangent()`` at an
    output nothing reached (the engine never fills in zeros), so the rule
    skips the parts where ``type(part) is ZeroTangent``.

    ``check=True`` gradchecks the rule at orders 1 and 2 at its first call
    (``False`` never; ``None`` when :func:`check_rules` is on).  A pullback
    that strips tracing from an argument it needs, so that the second
    derivative would silently be zero, warns with a :class:`RuleWarning`
    (see :mod:`autodiff._study.rule_checks`).

    A recorded entry keeps only what its pullbacks read (``ans``, arguments),
    read off their code: a parameter a pullback never names is not kept.
    ``reads`` (one string per pullback, naming its parameters from ``ans`` on)
    says what each reads in full, when it reads the others only for their shape
    and dtype (``shape_of(x)``, ``dtype_of(x)``, ``unbroadcast(g, x)``): those
    are kept as stand-ins carrying just that (:mod:`autodiff._residuals`).
    ``defvjp(multiply, lambda g, ans, x, y: unbroadcast(g * y, x), ..., reads=("y", "x"))``
    keeps ``2.0`` alone from ``x * 2.0``.  A rule defined outside autodiff
    keeps everything unless it declares ``reads`` with ``check=False`` (a
    gradcheck at its first call reads every value).

    >>> import numpy as np
    >>> import autodiff
    >>> wrong = primitive(np.sin, "wrong_sin")
    >>> defvjp(wrong, lambda g, ans, x: g * np.sin(x), check=True)  # should be cos
    >>> autodiff.grad(wrong)(0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    autodiff.GradcheckError: wrong_sin: its rule fails gradcheck at its first call ...(order 1, eps 1e-06)
    """
    rule = per_argument_rule(prim.__name__, vjps)
    _register(prim, rule, guarded(prim, rule, check, vjps, sys._getframe(1).f_globals.get("__name__", "")),
              lambda: Plan(vjps, reads, 1), reads is not None and check is False)


def _register(prim, rule, registered, plan, declared):
    """Register ``prim``'s rule, and what its pullbacks read: autodiff's own rules always, any other only when
    it declares ``reads=`` with ``check=False`` (a first-call gradcheck reads every value)."""
    _rules[prim] = registered
    if registered is rule or declared:
        _plans[prim] = plan()
    else:
        _plans.pop(prim, None)


def defvjp_joint(prim, pullback, check=None, reads=None):
    """Register one pullback for all arguments at once.

    ``pullback(g, ans, *args, **kwargs)`` returns a sequence with one
    cotangent per positional argument.  Only those of traced arguments are
    used: wrap costly ones in ``Thunk`` so that a constant's is never computed.
    ``check`` and ``reads`` (one string) are as for :func:`defvjp`.
    """
    rule = joint_rule(pullback)
    _register(prim, rule, guarded(prim, rule, check, pullback, sys._getframe(1).f_globals.get("__name__", "")),
              lambda: Plan(pullback, reads, 1, joint=True), reads is not None and check is False)


def defvjp_fwd_bwd(prim, fwd, bwd, reads=None):
    """Register a forward that hands residuals to its pullback, as JAX's ``custom_vjp`` does.

    ``fwd(*args, **kwargs)`` returns ``(value, residuals)``; when ``prim`` is
    recorded it runs in place of ``prim``'s own function, and the tape keeps
    the residuals beside the entry.  ``bwd(g, residuals, ans, *args, **kwargs)``
    returns one cotangent per positional argument (as for :func:`defvjp_joint`:
    only traced arguments' are used, so wrap costly ones in ``Thunk``).  Nothing
    is stored on ``prim``: two recordings keep two sets of residuals.  Under
    nesting ``fwd`` sees traced values of lower levels, and ``bwd`` runs on
    traced cotangents, so write both with differentiable ops.  Forward mode uses
    a JVP rule when one is registered, else pushes through ``bwd`` (running
    ``fwd`` again for the residuals).  The entry keeps the residuals, and of
    ``ans`` and the arguments what ``bwd`` reads (``reads`` as for
    :func:`defvjp_joint`).

    >>> import numpy as np
    >>> import autodiff
    >>> import autodiff.numpy as anp
    >>> softplus = primitive(lambda x: anp.log1p(anp.exp(x)), "softplus")
    >>> def fwd(x):
    ...     e = anp.exp(x)  # computed once, read again by the pullback
    ...     return anp.log1p(e), e
    >>> defvjp_fwd_bwd(softplus, fwd, lambda g, e, ans, x: (g * e / (1 + e),))
    >>> float(autodiff.grad(softplus)(0.0))
    0.5
    >>> float(autodiff.grad(autodiff.grad(softplus))(0.0))  # bwd is differentiable
    0.25
    >>> float(autodiff.jvp(softplus, 0.0, 1.0)[1])
    0.5
    """
    _forwards[prim] = fwd
    _rules[prim] = ResidualRule(bwd)
    _plans[prim] = Plan(bwd, reads, 2, joint=True)


def defjvp(prim, *jvps):
    """Register one pushforward (JVP) per positional argument of ``prim``.

    ``jvps[i](t, ans, *args, **kwargs)`` returns the output tangent caused by
    the tangent ``t`` of argument ``i`` (shaped like ``ans``), given the
    forward output ``ans``; the engine sums them over the arguments that carry
    a tangent and never calls one for a symbolic zero.  Write it with
    differentiable ops so that it nests; ``None`` marks an argument that cannot
    carry a tangent.  A primitive without a JVP is pushed forward through its
    pullback (two small reverse passes per call), so ``defjvp`` is for speed
    and memory, never for correctness.

    >>> import numpy as np
    >>> import autodiff
    >>> scale = primitive(lambda x, c: x * c, "scale")
    >>> defjvp(scale, lambda t, ans, x, c: scale(t, c), lambda t, ans, x, c: scale(x, t))
    >>> autodiff.jvp(lambda x, c: scale(x, c), (np.ones(2), 3.0), (np.ones(2), 1.0))[1]
    array([4., 4.])
    """
    rule = per_argument_jvp(prim.__name__, jvps)
    _jvp_rules[prim] = checked_jvp(prim, rule, sys._getframe(1).f_globals.get("__name__", ""))


def defjvp_joint(prim, jvp):
    """Register one pushforward for all arguments at once: ``jvp(tangents, ans, *args, **kwargs)``.

    ``tangents`` has one entry per positional argument, ``ZeroTangent()`` for
    those that carry none; it returns the output tangent.  Suits ops that are
    linear in all their arguments together (``concatenate``, ``stack``):

    >>> import numpy as np
    >>> import autodiff
    >>> join = primitive(lambda *xs: np.concatenate(xs), "join")
    >>> zeros = lambda t, x: np.zeros_like(x) if t is ZeroTangent() else t
    >>> defjvp_joint(join, lambda ts, ans, *xs: join(*[zeros(t, x) for t, x in zip(ts, xs)]))
    >>> autodiff.jvp(lambda a: join(a, np.ones(1)), np.ones(2), np.full(2, 3.0))[1]
    array([3., 3., 0.])
    """
    _jvp_rules[prim] = checked_jvp(prim, joint_jvp(jvp), sys._getframe(1).f_globals.get("__name__", ""))


def deflinear(prim):
    """Declare ``prim`` linear in each positional argument with the others held (``multiply``,
    ``matmul``, ``sum``, ``reshape``): its JVP in argument ``i`` is ``prim`` with the tangent in place
    of that argument.  Not for ops linear only in all arguments together (``add``, ``concatenate``).

    >>> import numpy as np
    >>> import autodiff
    >>> times = primitive(np.multiply, "times")
    >>> deflinear(times)
    >>> float(autodiff.jvp(lambda x: times(x, x), 3.0, 1.0)[1])
    6.0
    """
    _jvp_rules[prim] = checked_jvp(prim, linear_jvp(prim), sys._getframe(1).f_globals.get("__name__", ""))


def defbatch(prim, rule):
    """Register the batching rule of ``prim`` for ``vmap``: ``rule(level, args, bdims, kwargs) -> (out, 0)``.

    ``args`` are the arguments with this vmap's level unwrapped; ``bdims[i]`` is ``0`` where ``args[i]``
    carries the batch axis (first) and ``None`` where it is shared by every example; ``level.size`` is the
    batch size.  Return the output with its batch axis first, computed with primitives (never plain numpy),
    so that derivatives around the vmap see it.  Without a rule, vmap runs ``prim`` once per example.

    >>> import numpy as np
    >>> import autodiff
    >>> twice = primitive(lambda x: 2.0 * x, "twice")
    >>> defbatch(twice, lambda level, args, bdims, kwargs: (twice(args[0]), 0))  # elementwise: nothing to move
    >>> autodiff.vmap(twice)(np.arange(3.0))
    array([0., 2., 4.])
    """
    _batch_rules[prim] = rule


def batch_loop(prim, level, args, bdims, kwargs):
    """What ``vmap`` does for a primitive without a batching rule: ``prim`` once per example, the results
    stacked along a new axis 0 (``(out, 0)``, as a rule returns).  A rule calls it for the cases it does
    not fold into one call.

    >>> import numpy as np
    >>> import autodiff
    >>> first = primitive(lambda x: x[:1] * 1.0, "first")
    >>> defbatch(first, lambda level, args, bdims, kwargs: batch_loop(first, level, args, bdims, kwargs))
    >>> autodiff.vmap(first)(np.arange(6.0).reshape(3, 2))
    array([[0.],
           [2.],
           [4.]])
    """
    return loop(prim, level, args, bdims, kwargs)
