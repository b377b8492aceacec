"""``logsumexp(a, axis, b, keepdims, return_sign)``: ``log |sum(b * exp(a))|``, stably.

The value comes from scipy.  Its rule is the softmax weight ``sign * b * exp(a - ans)``: an entry at
``-inf`` has weight 0, and a slice that is all ``-inf`` (value ``-inf``) gets gradient 0, not NaN.  The
sign is scipy's too, read from the values without their derivatives (it is piecewise constant) by a
primitive of its own, so that under ``vmap`` it is still one sign per example.
"""

import numpy as np
import scipy.special as sc

from ...extend import ZeroTangent, defbatch, defjvp, defvjp, primitive, value_of
from ...numpy import NONDIFF, broadcast_to, cast, exp, multiply, subtract, sum, where
from ...numpy._batch_helpers import example_shape, shift
from ...numpy._broadcast import dtype_of, shape_of, unbroadcast
from ...numpy._reductions import expand_reduced
from .._real import refuse_complex


def _lse(a, b, axis, keepdims):
    out = sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)[0]
    return np.asarray(out, dtype=np.result_type(dtype_of(a), dtype_of(b)))[()]


def _lse_sign(a, b, axis, keepdims):
    return sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)[1]


_lse_p = primitive(_lse, "logsumexp")
_lse_sign_p = primitive(_lse_sign, "logsumexp_sign")


def _constant(*args, **kwargs):
    return ZeroTangent()


# the sign of ``sum(b * exp(a))`` is piecewise constant: derivative 0 (``_sign`` reads it without derivatives)
defvjp(_lse_sign_p, _constant, _constant)
defjvp(_lse_sign_p, _constant, _constant)


def _sign(a, b, axis, keepdims):
    """The sign of ``sum(b * exp(a))``, a constant (still batched under ``vmap``: one per example)."""
    return _lse_sign_p(value_of(a), value_of(b), axis, keepdims)


def _batch_rule(prim):
    """One call for the whole batch: ``a`` and ``b`` (one example shape, as ``logsumexp`` broadcasts them)
    both get the batch axis, and ``axis`` moves past it (``None``, every axis of an example)."""

    def rule(level, args, bdims, kwargs):
        a, b, axis, keepdims = args
        a, b = (x if d is not None else broadcast_to(x, (level.size,) + shape_of(x)) for x, d in zip((a, b), bdims))
        return prim(a, b, shift(axis, len(example_shape(a, 0))), keepdims), 0

    return rule


def _weights(ans, a, b, axis, keepdims):
    """``d ans / d (b e^a)`` spread back over ``a``: ``sign * exp(a - ans)``; 0 where ``ans`` is ``-inf``."""
    sign = cast(_sign(a, b, axis, keepdims), dtype_of(a))
    empty = NONDIFF["equal"](ans, -np.inf)
    safe = expand_reduced(where(empty, 0.0, ans), a, axis, keepdims)
    w = exp(subtract(a, safe))
    return multiply(where(expand_reduced(empty, a, axis, keepdims), 0.0, w), expand_reduced(sign, a, axis, keepdims))


def _lse_vjp_a(g, ans, a, b, axis, keepdims):
    w = _weights(ans, a, b, axis, keepdims)
    return unbroadcast(multiply(multiply(expand_reduced(g, a, axis, keepdims), w), b), a)


def _lse_vjp_b(g, ans, a, b, axis, keepdims):
    return unbroadcast(multiply(expand_reduced(g, a, axis, keepdims), _weights(ans, a, b, axis, keepdims)), b)


defvjp(_lse_p, _lse_vjp_a, _lse_vjp_b)


def _lse_jvp_a(t, ans, a, b, axis, keepdims):
    return sum(multiply(multiply(t, _weights(ans, a, b, axis, keepdims)), b), axis=axis, keepdims=keepdims)


def _lse_jvp_b(t, ans, a, b, axis, keepdims):
    return sum(multiply(t, _weights(ans, a, b, axis, keepdims)), axis=axis, keepdims=keepdims)


defjvp(_lse_p, _lse_jvp_a, _lse_jvp_b)
defbatch(_lse_p, _batch_rule(_lse_p))
defbatch(_lse_sign_p, _batch_rule(_lse_sign_p))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a), axis))`` as scipy computes it; with ``return_sign``, ``(log|s|, sign(s))``.

    Differentiable in ``a`` and ``b``; ``-inf`` entries of ``a`` get gradient 0.  The sign is a
    constant (piecewise constant, so its derivative is 0 where it exists).

    >>> import numpy as np
    >>> import autodiff
    >>> autodiff.grad(lambda a: logsumexp(a))(np.array([0.0, -np.inf]))
    array([1., 0.])
    >>> logsumexp(np.zeros(2), b=np.array([1.0, -3.0]), return_sign=True)  # log |1 - 3|, and its sign
    (np.float64(0.6931471805599453), np.float64(-1.0))
    """
    refuse_complex("autodiff.scipy.special.logsumexp", a, b)
    if b is None:
        b = np.ones((), dtype=dtype_of(a) if dtype_of(a).kind == "f" else np.float64)
    if len(shape_of(a)) == 0 and axis is not None:
        raise ValueError(f"autodiff.scipy.special.logsumexp: axis={axis!r} given for a 0-d array")
    shape = np.broadcast_shapes(shape_of(a), shape_of(b))
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)  # the rules then reduce over one shape
    out = _lse_p(a, b, axis, keepdims)
    return (out, _sign(a, b, axis, keepdims)) if return_sign else out


__all__ = ["logsumexp"]
