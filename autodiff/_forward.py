"""Forward mode: dual values at a level, and a primitive's call pushed forward.

A ``jvp`` opens a :class:`Pushforward` one level above the innermost open
level of this thread, from the same counter as tapes, so forward and reverse
mode nest in any order without perturbation confusion.  A *dual value* is a
``Traced`` whose ``tape`` is that Pushforward: its ``value`` is the primal and
its ``tangent`` the direction it moves in.  A primitive called with a dual of
the highest level computes its primal output (calling itself on the primals,
so lower levels record or push on their own) and its output tangent from its
JVP rule, in the same forward pass.  Nothing is recorded: a chain of any
length holds a few arrays at a time.
"""

from ._checks import leaked
from ._jvp_rules import jvp_rule_of
from ._tangents import ZERO, ZeroTangent
from ._traced import Traced, _state, close_level, current_level
from ._tuple_values import with_arrays

observers = []  # callables (pushforward, prim, args, kwargs, result dual); used by autodiff.trace


class Pushforward:
    """One ``jvp``'s level: what a primitive does when its highest-level argument is a dual value."""

    __slots__ = ("level", "active", "__weakref__")

    def __init__(self, level):
        self.level = level
        self.active = True  # false once the jvp returned: a dual that reaches a primitive then has leaked

    def push(self, prim, args, kwargs):
        """``prim(*args, **kwargs)`` as a dual: primal output and output tangent, in one pass."""
        return push(prim, self, args, kwargs)


class open_pushforward:
    """Context manager: open a forward-mode level above the innermost open level of this thread."""

    __slots__ = ("level",)

    def __enter__(self):
        self.level = Pushforward(current_level() + 1)
        _state.level = self.level.level
        tracer = _state.__dict__.get("tracer")
        if tracer is not None:
            tracer.pushforwards.append(self.level)
        return self.level

    def __exit__(self, kind, value, traceback):
        close_level(self.level, value)
        return False


def dual(primal, level, tangent):
    """The dual value ``primal + ε tangent`` at ``level`` (a :class:`Pushforward`).

    >>> with open_pushforward() as level:
    ...     x = dual(2.0, level, 1.0)
    ...     y = x * x
    >>> float(y.value), float(y.tangent), y.level
    (4.0, 4.0, 1)
    """
    d = Traced(primal, level, None, level.level)
    d.tangent = tangent
    return d


def push(prim, level, args, kwargs):
    """Call ``prim`` on the primals of ``level``'s duals and push their tangents through its JVP rule."""
    if not level.active:
        raise leaked(prim, level)
    arrays = with_arrays(prim, level, args)  # a tuple result read as one array: its parts stacked first
    if arrays is not None:
        return prim(*arrays, **kwargs)
    argvals = list(args)
    argnums, tangents = [], []
    lower = False  # do traced values of lower levels remain inside?
    for i, a in enumerate(args):
        if type(a) is Traced:
            if a.level == level.level:
                if a.tape is not level:
                    raise leaked(prim, a.tape)
                if type(a.tangent) is not ZeroTangent:
                    argnums.append(i)
                    tangents.append(a.tangent)
                argvals[i] = a = a.value
            lower = lower or type(a) is Traced
    ans = prim(*argvals, **kwargs) if lower else prim.fun(*argvals, **kwargs)
    out = jvp_rule_of(prim)(tangents, argnums, ans, argvals, kwargs) if argnums else ZERO
    result = dual(ans, level, out)
    for observe in observers:
        observe(level, prim, args, kwargs, result)
    return result


def jvp_via_ad(f, xs, ts):
    """``(f(*xs), its tangent)`` for array or scalar ``xs`` moving along ``ts`` (``ZeroTangent()`` for none).

    ``jvp`` without the structure handling, for rules that push a user's
    function forward (``traversal.total``); the tangent is ``ZeroTangent()``
    when none flowed.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> jvp_via_ad(lambda x, y: anp.sum(x * y), (np.ones(2), np.arange(2.0)), (np.ones(2), ZERO))
    (np.float64(1.0), np.float64(1.0))
    """
    with open_pushforward() as level:
        out = f(*[x if type(t) is ZeroTangent else dual(x, level, t) for x, t in zip(xs, ts)])
    if type(out) is Traced and out.tape is level:
        return out.value, out.tangent
    return out, ZERO
