"""``autodiff.scipy.integrate.odeint``: scipy's ODE solver, differentiated by the adjoint method.

The forward is ``scipy.integrate.odeint``.  The pullback integrates the adjoint system backwards,
one output interval at a time (Pontryagin; Chen et al., *Neural ODEs*, 2018, alg. 1):

    dy/dt = f(y, t, *args),   da/dt = -a^T df/dy,   da_args/dt = -a^T df/dargs,

starting each interval from the stored output (not a re-integrated state, which would drift) and adding
the output cotangent at every output time.  The augmented dynamics are written with ``autodiff.vjp``
and integrated by this same ``odeint``, so the pullback is itself differentiable (order 2 costs a
second, larger adjoint solve).

>>> import numpy as np
>>> import autodiff
>>> decay = lambda y, t, k: -k * y
>>> g = autodiff.grad(lambda k: odeint(decay, np.ones(1), np.array([0.0, 1.0]), (k,), rtol=1e-10, atol=1e-10)[-1, 0])
>>> bool(abs(g(0.5) + np.exp(-0.5)) < 1e-8)  # y(1) = exp(-k), so dy/dk = -exp(-k)
True
"""

import numpy as np
import scipy.integrate as si

import autodiff

from ..extend import Thunk, defvjp_joint, primitive
from ..numpy import astype, concatenate, multiply, negative, reshape, stack, sum
from ..numpy._broadcast import dtype_of, shape_of
from ._plain import plain

__all__ = ["odeint"]


def _odeint(func, y0, t, *args, rtol=None, atol=None):
    dtype = np.result_type(y0, *args, np.float32) if np.result_type(y0).kind == "f" else np.float64

    def rate(y, s):
        return np.asarray(func(y, s, *args), dtype=np.float64)

    ys = si.odeint(rate, np.asarray(y0, dtype=np.float64), t, rtol=rtol, atol=atol)
    return ys.astype(dtype, copy=False)


_odeint_p = primitive(_odeint, "odeint")


def _augmented(func, n):
    """The adjoint system on the flat state ``[y, a, a_args]`` (``a_args`` only accumulates)."""

    def dynamics(state, s, *args):
        y, a = state[:n], state[n:2 * n]
        # in float64 throughout: float32 cotangents would make the adjoint rates jump at rounding
        # level, and the solver's error control would never settle
        args = [astype(x, np.float64) for x in args]
        out, pullback = autodiff.vjp(lambda y, *args: func(y, s, *args), y, *args)
        cts = pullback(a)
        flat = [reshape(_zero_if_none(c, x), (-1,)) for c, x in zip(cts[1:], args)]
        return concatenate([out, negative(_zero_if_none(cts[0], y))] + [negative(c) for c in flat])

    return dynamics


def _zero_if_none(c, like):
    return np.zeros(shape_of(like), dtype=dtype_of(like)) if c is None else c


def _interval_back(func, ys_i, a, adj, t_from, t_to, args, rtol, atol):
    """One backward interval of the adjoint system: ``(a, adj)`` at ``t_to`` from their values at ``t_from``."""
    n = shape_of(ys_i)[0]
    state = concatenate([ys_i, a, adj])
    times = np.array([t_from, t_to], dtype=np.float64)
    end = _odeint_p(_augmented(func, n), state, times, *args, rtol=rtol, atol=atol)[1]
    return end[n:2 * n], end[2 * n:]


def _odeint_vjp(g, ys, func, y0, t, *args, rtol=None, atol=None):
    """One cotangent each for ``func`` (none), ``y0``, ``t`` and every argument."""
    t_primal, t = t, np.asarray(plain(t), dtype=np.float64)
    sizes = [int(np.prod(shape_of(x))) for x in args]
    a = g[-1]
    adj = np.zeros(_total(sizes))
    for i in range(len(t) - 1, 0, -1):
        a, adj = _interval_back(func, ys[i], a, adj, t[i], t[i - 1], args, rtol, atol)
        if i > 1:
            a = a + g[i - 1]
    g_t = Thunk(lambda: astype(_time_cotangents(func, g, ys, t, args, a), dtype_of(t_primal)))  # t is usually data
    g_args = [astype(c, dtype_of(x)) for c, x in zip(_unflatten(adj, args, sizes), args)]
    return [None, astype(a + g[0], dtype_of(y0)), g_t] + g_args


def _total(sizes):
    return int(np.sum(sizes)) if sizes else 0


def _time_cotangents(func, g, ys, t, args, a0):
    """``g_i . f(y_i, t_i)`` at every output time; at ``t_0``, ``-a(t_0) . f(y_0, t_0)`` (``y_0`` is given)."""
    rates = [func(ys[i], t[i], *args) for i in range(len(t))]
    later = [sum(multiply(g[i], rates[i])) for i in range(1, len(t))]
    return stack([negative(sum(multiply(a0, rates[0])))] + later)


def _unflatten(flat, args, sizes):
    out, start = [], 0
    for x, k in zip(args, sizes):
        out.append(reshape(flat[start:start + k], shape_of(x)))
        start += k
    return out


defvjp_joint(_odeint_p, _odeint_vjp)


def odeint(func, y0, t, args=(), rtol=None, atol=None):
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y0`` over the times ``t`` (as scipy's ``odeint``).

    Differentiable in ``y0``, ``t`` and each float array or float in ``args``; ``func`` must be
    written with ``autodiff.numpy`` ops (its vector-Jacobian products drive the adjoint solve).
    ``y0`` is a 1-d array; the result has shape ``(len(t), len(y0))``.
    """
    if len(shape_of(y0)) != 1:
        raise ValueError(f"autodiff.scipy.integrate.odeint: y0 must be 1-d, got shape {shape_of(y0)}")
    if not isinstance(args, tuple):
        raise TypeError(f"autodiff.scipy.integrate.odeint: args must be a tuple, got {type(args).__name__}")
    return _odeint_p(func, y0, t, *args, rtol=rtol, atol=atol)
