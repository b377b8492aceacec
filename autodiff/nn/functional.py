"""Numerically stable building blocks, each a primitive with a hand-written, stable pullback and pushforward.

>>> import numpy as np
>>> from autodiff.nn.functional import logsumexp, softmax
>>> float(logsumexp(np.array([1000.0, 1000.0])))  # no overflow
1000.6931471805599
>>> softmax(np.array([-1000.0, 0.0, 1000.0]))
array([0., 0., 1.])
"""

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive, value_of
from ..numpy import add, exp, matmul, multiply, subtract, sum, transpose, where
from ..numpy._batch_helpers import along, elementwise, reduction
from ..numpy._broadcast import shape_of
from ..numpy._linalg import matmul_nt
from ..numpy._reductions import expand_reduced

__all__ = ["linear", "logsumexp", "softmax", "log_softmax", "sigmoid", "relu", "softplus"]


def linear(x, weight, bias=None):
    """``x @ weight.T + bias``, with ``weight`` laid out ``(out, in)`` as in ``torch.nn.functional.linear``.

    The product is one ``matmul_nt`` (``a bᵀ``, BLAS reading ``weight`` transposed in place): no transpose is
    recorded, at the first order or any higher one, since the pullbacks of the three GEMM forms are GEMMs of
    those forms.

    >>> x, w = np.ones((4, 3)), np.arange(6.0).reshape(2, 3)
    >>> bool(np.array_equal(linear(x, w, np.ones(2)), x @ w.T + 1))
    True
    """
    xs = shape_of(x)
    _check_linear(xs, shape_of(weight), None if bias is None else shape_of(bias))
    y = matmul_nt(x, weight) if len(xs) >= 2 else matmul(x, transpose(weight))  # one example: a GEMV
    return y if bias is None else add(y, bias)


def _check_linear(xs, ws, bs):
    """Refuse what torch's ``linear`` refuses, naming the shapes: a weight not ``(out, in)``, an ``x`` whose last
    axis is not ``in``, a bias not ``(out,)``."""
    if len(ws) != 2:
        raise ValueError(f"linear: the weight must be laid out (out, in), as torch.nn.Linear's, got shape {ws}; "
                         "pass a 2-D weight")
    if len(xs) < 1 or xs[-1] != ws[1]:
        other = f", or a weight of shape ({ws[0]}, {xs[-1]})" if xs else ""
        raise ValueError(f"linear: x of shape {xs} for a weight of shape {ws}: x must have shape (..., {ws[1]}); "
                         f"pass x with {ws[1]} features in its last axis{other}")
    if bs is not None and bs not in ((ws[0],), ()):
        raise ValueError(f"linear: a bias of shape {bs} for a weight of shape {ws}: the bias must have shape "
                         f"({ws[0]},), one entry per output (or be a scalar, as torch allows)")


def _logsumexp(x, axis=None, keepdims=False):
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


_logsumexp_p = primitive(_logsumexp, "logsumexp")
defvjp(_logsumexp_p, lambda g, ans, x, axis=None, keepdims=False: multiply(
    expand_reduced(g, x, axis, keepdims), exp(subtract(x, expand_reduced(ans, x, axis, keepdims)))))
defjvp(_logsumexp_p, lambda t, ans, x, axis=None, keepdims=False: sum(  # the softmax-weighted mean of t
    multiply(t, exp(subtract(x, expand_reduced(ans, x, axis, keepdims)))), axis=axis, keepdims=keepdims))
defbatch(_logsumexp_p, reduction(_logsumexp_p))


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))``, shifted by the maximum so large inputs do not overflow."""
    return _logsumexp_p(x, axis=axis, keepdims=keepdims)


def _softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


softmax_p = primitive(_softmax, "softmax")
def _softmax_vjp(g, s, x, axis=-1):
    return multiply(s, subtract(g, sum(multiply(g, s), axis=axis, keepdims=True)))


defvjp(softmax_p, _softmax_vjp)
defjvp(softmax_p, _softmax_vjp)  # the Jacobian diag(s) - s s^T is symmetric: the pushforward is the pullback
defbatch(softmax_p, along(softmax_p))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably."""
    return softmax_p(x, axis=axis)


def _log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


log_softmax_p = primitive(_log_softmax, "log_softmax")
def _log_softmax_vjp(g, ls, x, axis=-1):
    return subtract(g, multiply(exp(ls), sum(g, axis=axis, keepdims=True)))


defvjp(log_softmax_p, _log_softmax_vjp)
defjvp(log_softmax_p, lambda t, ls, x, axis=-1: subtract(t, sum(multiply(exp(ls), t), axis=axis, keepdims=True)))
defbatch(log_softmax_p, along(log_softmax_p))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``, computed stably."""
    return log_softmax_p(x, axis=axis)


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x)).astype(np.result_type(x), copy=False)


sigmoid_p = primitive(_sigmoid, "sigmoid")
defvjp(sigmoid_p, lambda g, s, x: multiply(g, multiply(s, subtract(1.0, s))))
defjvp(sigmoid_p, lambda t, s, x: multiply(t, multiply(s, subtract(1.0, s))))
defbatch(sigmoid_p, elementwise(sigmoid_p))


def sigmoid(x):
    """``1 / (1 + exp(-x))`` without overflow for large ``|x|``."""
    return sigmoid_p(x)


relu_p = primitive(lambda x: np.maximum(x, 0), "relu")


def _relu_passed(g, ans):
    """``g`` where the unit is on (``relu(x) > 0`` exactly where ``x > 0``), exactly 0 elsewhere: ``where``, so a
    NaN from a kink further on (a norm's second derivative at 0, design.md section 11) stays off a unit that is
    off, whose true derivative is 0 (as torch).  It reads the output, not the input: the next layer keeps the
    output anyway (a matmul's or a convolution's input), so the tape holds one array per ReLU, not two."""
    return where(value_of(ans) > 0, g, 0.0)


defvjp(relu_p, lambda g, ans, x: _relu_passed(g, ans))
defjvp(relu_p, lambda t, ans, x: _relu_passed(t, ans))
defbatch(relu_p, elementwise(relu_p))


def relu(x):
    """``max(x, 0)``; the gradient at 0 is 0 (as in PyTorch)."""
    return relu_p(x)


def _softplus(x):
    return np.logaddexp(0, x).astype(np.result_type(x), copy=False)


softplus_p = primitive(_softplus, "softplus")
defvjp(softplus_p, lambda g, ans, x: multiply(g, sigmoid(x)))
defjvp(softplus_p, lambda t, ans, x: multiply(t, sigmoid(x)))
defbatch(softplus_p, elementwise(softplus_p))


def softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return softplus_p(x)
