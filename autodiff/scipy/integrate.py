"""``autodiff.scipy.integrate.odeint``: scipy's ODE solver, differentiated by the adjoint method.

The forward is ``scipy.integrate.odeint``, in float64 (LSODA has no float32 mode); the result is cast
to the inputs' floating dtype, so float32 stays float32.  The pullback integrates the adjoint system
backwards, one output interval at a time (Pontryagin; Chen et al., *Neural ODEs*, 2018, alg. 1):

    dy/dt = f(y, t, *args),   da/dt = -a^T df/dy,   da_args/dt = -a^T df/dargs,

starting each interval from the stored output (not a re-integrated state, which would drift) and adding
the output cotangent at every output time.  The pushforward integrates the forward sensitivities
``dv/dt = df/dy v + df/dargs t_args`` beside ``y``.  Both augmented dynamics are written with
autodiff's own transforms and integrated by this same ``odeint``, so each rule is itself differentiable
(order 2 costs a second, larger solve).  Gradients are as accurate as the solves: pass tight ``rtol``
and ``atol`` when you check them against finite differences.

>>> import numpy as np
>>> import autodiff
>>> decay = lambda y, t, k: -k * y
>>> g = autodiff.grad(lambda k: odeint(decay, np.ones(1), np.array([0.0, 1.0]), (k,), rtol=1e-10, atol=1e-10)[-1, 0])
>>> bool(abs(g(0.5) + np.exp(-0.5)) < 1e-8)  # y(1) = exp(-k), so dy/dk = -exp(-k)
True
"""

import numpy as np
import scipy.integrate as si

from .._trees import walk_flatten
from .._vmap import vmap
from ..extend import (
    Thunk,
    ZeroTangent,
    batch_loop,
    defbatch,
    defjvp_joint,
    defvjp_joint,
    jvp_via_ad,
    plain_value,
    primitive,
    vjp_via_ad,
)
from ..numpy import add, astype, broadcast_to, concatenate, moveaxis, multiply, negative, reshape, stack, subtract, sum
from ..numpy._batch_helpers import example_shape
from ..numpy._broadcast import dtype_of, shape_of
from ._real import refuse_complex

__all__ = ["odeint"]


def _odeint(func, y0, t, *args, rtol=None, atol=None):
    dtype = np.result_type(y0, *args, np.float32) if np.result_type(y0).kind == "f" else np.float64

    def rate(y, s):
        # a copy: scipy's state buffer cannot be made writeable again once a tape has protected it
        return np.asarray(func(np.array(y), s, *args), dtype=np.float64)

    ys = si.odeint(rate, np.asarray(y0, dtype=np.float64), t, rtol=rtol, atol=atol)
    return ys.astype(dtype, copy=False)


_odeint_p = primitive(_odeint, "odeint")


def _wide(x):
    """In float64: float32 rates would jump at rounding level, and the solver's error control never settle."""
    return astype(x, np.float64)


def _zero_if_none(c, like):
    return np.zeros(shape_of(like), dtype=dtype_of(like)) if c is None or type(c) is ZeroTangent else c


# --- the pullback: the adjoint system, backwards -------------------------------------------------------

def _augmented(func, n):
    """The adjoint system on the flat state ``[y, a, a_args]`` (``a_args`` only accumulates)."""

    def dynamics(state, s, *args):
        y, a = state[:n], state[n:2 * n]
        args = [_wide(x) for x in args]
        out, pullback = vjp_via_ad(lambda y, *args: func(y, s, *args), y, *args)
        cts = pullback(a)
        flat = [reshape(_zero_if_none(c, x), (-1,)) for c, x in zip(cts[1:], args)]
        return concatenate([out, negative(_zero_if_none(cts[0], y))] + [negative(c) for c in flat])

    return dynamics


def _interval_back(func, ys_i, a, adj, times, args, rtol, atol):
    """One backward interval of the adjoint system: ``(a, adj)`` at ``times[1]`` from their values at ``times[0]``."""
    n = shape_of(ys_i)[0]
    state = concatenate([ys_i, a, adj])
    end = _odeint_p(_augmented(func, n), state, times, *args, rtol=rtol, atol=atol)[1]
    return end[n:2 * n], end[2 * n:]


def _odeint_vjp(g, ys, func, y0, t, *args, rtol=None, atol=None):
    """One cotangent each for ``func`` (none), ``y0``, ``t`` and every argument.

    The times stay as given (traced when an outer derivative moves them): the interval ends and the time
    cotangents are differentiable in them, so second derivatives through the times are right too.
    """
    t64 = _wide(t)
    sizes = [int(np.prod(shape_of(x))) for x in args]
    a = g[-1]
    adj = np.zeros(_total(sizes))
    for i in range(shape_of(t)[0] - 1, 0, -1):
        a, adj = _interval_back(func, ys[i], a, adj, stack([t64[i], t64[i - 1]]), args, rtol, atol)
        if i > 1:
            a = a + g[i - 1]
    g_t = Thunk(lambda: astype(_time_cotangents(func, g, ys, t, args, a), dtype_of(t)))  # t is usually data
    g_args = [astype(c, dtype_of(x)) for c, x in zip(_unflatten(adj, args, sizes), args)]
    return [None, astype(a + g[0], dtype_of(y0)), g_t] + g_args


def _total(sizes):
    return int(np.sum(sizes)) if sizes else 0


def _rates(func, ys, t, args):
    """``f(y_i, t_i)`` at every output time, one row each."""
    return stack([func(ys[i], t[i], *args) for i in range(shape_of(t)[0])])


def _time_cotangents(func, g, ys, t, args, a0):
    """``g_i . f(y_i, t_i)`` at every output time; at ``t_0``, ``-a(t_0) . f(y_0, t_0)`` (``y_0`` is given)."""
    rates = _rates(func, ys, t, args)
    later = sum(multiply(g[1:], rates[1:]), axis=1)
    return concatenate([reshape(negative(sum(multiply(a0, rates[0]))), (1,)), later])


def _unflatten(flat, args, sizes):
    out, start = [], 0
    for x, k in zip(args, sizes):
        out.append(reshape(flat[start:start + k], shape_of(x)))
        start += k
    return out


defvjp_joint(_odeint_p, _odeint_vjp)


# --- the pushforward: the forward sensitivities, beside y ------------------------------------------------

def _tangent_system(func, n, count, moving):
    """``[y, v]`` with ``dv/dt = df/dy v + df/dargs t_args``; the tangents of the ``moving`` arguments follow
    the ``count`` arguments themselves."""

    def dynamics(state, s, *rest):
        args, targs = [_wide(x) for x in rest[:count]], list(rest[count:])
        tangents = [ZeroTangent()] * count
        for i, ta in zip(moving, targs):
            tangents[i] = _wide(ta)
        y, v = state[:n], state[n:]
        out, tangent = jvp_via_ad(lambda y, *a: func(y, s, *a), (y, *args), (v, *tangents))
        return concatenate([out, _zero_if_none(tangent, y)])

    return dynamics


def _odeint_jvp(tangents, ys, func, y0, t, *args, rtol=None, atol=None):
    """``v(t_i) + t_i' f(y_i, t_i)``, where ``v`` starts at ``y0' - t_0' f(y_0, t_0)`` (moving ``t_0`` moves
    the start of the solve) and follows the sensitivity equation."""
    _, ty0, tt, *targs = tangents
    n = shape_of(y0)[0]
    moving = [i for i, ta in enumerate(targs) if type(ta) is not ZeroTangent]
    v0 = _wide(_zero_if_none(ty0, y0))
    if type(tt) is not ZeroTangent:
        v0 = subtract(v0, multiply(_wide(tt[0]), func(y0, t[0], *args)))
    state = concatenate([_wide(y0), v0])
    system = _tangent_system(func, n, len(args), moving)
    v = _odeint_p(system, state, t, *args, *[targs[i] for i in moving], rtol=rtol, atol=atol)[:, n:]
    if type(tt) is not ZeroTangent:
        v = add(v, multiply(reshape(_wide(tt), (-1, 1)), _rates(func, ys, t, args)))
    return astype(v, dtype_of(ys))


defjvp_joint(_odeint_p, _odeint_jvp)


# --- under vmap: the batch as one larger system ------------------------------------------------------------

def _odeint_batch(level, args, bdims, kwargs):
    """The examples' states stacked into one state of ``B * n`` entries and integrated as one system, whose
    vector field is ``func`` itself under ``vmap`` (as JAX does): one solve for the whole batch.  The solver's
    steps are then shared, and its error control covers every example at once, so each example's solution
    agrees with its own solve to the tolerances given."""
    func, y0, t, *rest = args
    if bdims[2] is not None:
        # each example has its own output times, where one solve of the stacked system cannot stop for all
        # of them: this runs once per example
        return batch_loop(_odeint_p, level, args, bdims, kwargs)
    size, n = level.size, example_shape(y0, bdims[1])[0]
    start = y0 if bdims[1] is not None else broadcast_to(y0, (size, n))
    field = _batched_field(func, size, n, tuple(bdims[3:]))
    ys = _odeint_p(field, reshape(start, (size * n,)), t, *rest, **kwargs)
    return moveaxis(reshape(ys, (shape_of(ys)[0], size, n)), 1, 0), 0  # size may be 0: never -1


def _batched_field(func, size, n, arg_axes):
    """The vector field of the stacked state: ``func`` on every example's state (and arguments) at once."""

    def field(y, s, *args):
        rates = vmap(lambda y, *a: func(y, s, *a), in_axes=(0,) + arg_axes)(reshape(y, (size, n)), *args)
        return reshape(rates, (size * n,))

    return field


defbatch(_odeint_p, _odeint_batch)


def _numeric(x):
    return isinstance(plain_value(x), (np.ndarray, np.generic, int, float, complex)) and not isinstance(x, bool)


def _leaves_of(args):
    """The numeric leaves of the ``args`` structure (the primitive's arguments, each differentiated on its own),
    and ``rebuild(values)``: the structure with those leaves replaced; other leaves (strings, callables,
    ``None``) stay as they are.  The gradient of a structured argument then mirrors it (design.md 2)."""
    leaves, treedef = walk_flatten(args)
    where = [i for i, x in enumerate(leaves) if _numeric(x)]

    def rebuild(values):
        full = list(leaves)
        for i, v in zip(where, values):
            full[i] = v
        return treedef.unflatten(full)

    return [leaves[i] for i in where], rebuild


def odeint(func, y0, t, args=(), rtol=None, atol=None):
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y0`` over the times ``t`` (as scipy's ``odeint``).

    Differentiable in ``y0``, ``t`` and every float array or float in ``args``, which is a tuple of
    any structures of arrays (a network's list of ``(W, b)`` pairs, a dict): each leaf is differentiated
    on its own, and a gradient with respect to a structure mirrors it.  ``func`` must be
    written with ``autodiff.numpy`` ops (its vector-Jacobian and Jacobian-vector products drive the
    adjoint and sensitivity solves).  ``y0`` is a real 1-d array; the result has shape
    ``(len(t), len(y0))`` and the inputs' floating dtype.  scipy's LSODA solves in float64 only, so
    float32 inputs are solved in float64 and the result (and each gradient) is cast back to float32.

    >>> import numpy as np
    >>> import autodiff
    >>> times = np.array([0.0, 1.0])
    >>> y = lambda y0: odeint(lambda y, t: -y, y0, times, rtol=1e-10, atol=1e-10)
    >>> bool(np.allclose(y(np.array([2.0]))[-1], 2.0 * np.exp(-1.0)))
    True
    >>> bool(np.isclose(autodiff.jvp(y, np.array([2.0]), np.array([1.0]))[1][-1, 0], np.exp(-1.0)))
    True
    >>> rate = lambda y, t, p: -p["k"] * y  # a structure in args: its gradient is the same structure
    >>> g = autodiff.grad(lambda p: odeint(rate, np.ones(1), times, (p,), rtol=1e-10, atol=1e-10)[-1, 0])({"k": 0.5})
    >>> bool(abs(g["k"] + np.exp(-0.5)) < 1e-8)  # d/dk exp(-k)
    True
    """
    if len(shape_of(y0)) != 1:
        raise ValueError(f"autodiff.scipy.integrate.odeint: y0 must be 1-d, got shape {shape_of(y0)}")
    if not isinstance(args, tuple):
        raise TypeError(
            f"autodiff.scipy.integrate.odeint: args must be a tuple, got {type(args).__name__}; wrap a single "
            "argument as args=(x,)"
        )
    leaves, rebuild = _leaves_of(args)
    refuse_complex("autodiff.scipy.integrate.odeint", y0, t, *leaves)
    if all(_numeric(x) for x in args):
        return _odeint_p(func, y0, t, *args, rtol=rtol, atol=atol)  # flat already: func sees its own arguments
    return _odeint_p(_Structured(func, rebuild), y0, t, *leaves, rtol=rtol, atol=atol)


class _Structured:
    """``func`` on the flat leaves: it rebuilds the structure of ``args`` before calling ``func``."""

    def __init__(self, func, rebuild):
        self.func, self.rebuild = func, rebuild

    def __call__(self, y, t, *leaves):
        return self.func(y, t, *self.rebuild(leaves))
