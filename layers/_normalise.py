"""BatchNorm in training as the layer runs it: the batch's statistics, then the normalisation, as two primitives,
so that a tape keeps what torch saves (the input and the statistics), never the normalised output.

``batch_stats(x)`` is the ``(2, C)`` array of the per-channel mean and (biased) variance (one pass, float64
sums: :mod:`layers._batch_norm`).  ``normalise(x, gamma, beta, stats, eps)`` is
``y = (x - mean)·gamma/sqrt(var + eps) + beta``, and ``normalise_relu(x, gamma, beta, stats, eps, skip)`` is
``max(y + skip, 0)`` (``skip`` ``None`` for none: ``max(y, 0)``) in the same one pass, a ResNet block's
ending.  ``stats`` must be ``batch_stats(x)`` of the same ``x``: each normalisation's pullback is the whole
derivative through the statistics (the fused two-pass backward, ``normalise_vjp``), so it gives ``stats``
no cotangent of its own, and ``batch_stats``' pullback carries only what reaches the statistics from
elsewhere (second order, or a caller who reads them).

What an entry keeps (``reads=``, :mod:`autodiff._residuals`): ``normalise`` keeps ``x``, ``gamma`` and the
statistics; ``normalise_relu`` also keeps its output, for the ReLU's mask, as torch's ReLU saves its result
(in a ResNet the next convolution's input, kept there anyway), never the sum before it; ``batch_stats`` keeps
``x`` (the same array) and the statistics.

>>> x = np.arange(8.0).reshape(4, 2)
>>> stats = batch_stats(x)
>>> stats, normalise_relu(x, np.ones(2), np.zeros(2), stats, 0.0, None)[:, 0].round(3)
(array([[3., 4.],
       [5., 5.]]), array([0.   , 0.   , 0.447, 1.342]))
"""

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import ZeroTangent, add_tangents, defbatch, defjvp_joint, defvjp_joint, primitive, value_of

from ._batch_norm import _batch_stats, _moments_vjp, _normalise, normalise_jvp, normalise_vjp
from ._channel_folding import folding_rule
from ._layout import channel_axes, per_channel


def _normalise_only(x, gamma, beta, stats, eps):
    return _normalise(x, gamma, beta, stats, eps)


def _normalise_relu(x, gamma, beta, stats, eps, skip):
    return _normalise(x, gamma, beta, stats, eps, skip, relu=True)


batch_stats = primitive(_batch_stats, "batch_stats")
normalise = primitive(_normalise_only, "normalise")
normalise_relu = primitive(_normalise_relu, "normalise_relu")


def _stats_vjp(g, ans, x):
    return (_moments_vjp(g[0], g[1], x, ans[0]),)


def _stats_jvp(tangents, ans, x):
    (tx,) = tangents
    ndim = np.ndim(value_of(x))
    axes = channel_axes(ndim)
    centred = x - anp.reshape(ans[0], per_channel(ndim))
    return anp.stack([anp.mean(tx, axis=axes), 2.0 * anp.mean(tx * centred, axis=axes)])


def _normalise_vjp(g, ans, x, gamma, beta, stats, eps):
    dx, dgamma, dbeta, deps = normalise_vjp(g, x, gamma, stats[0], stats[1], eps)
    return dx, dgamma, dbeta, ZeroTangent(), deps  # stats: their part is in dx already


def _normalise_jvp(tangents, ans, x, gamma, beta, stats, eps):
    tx, tgamma, tbeta, _, teps = tangents  # the statistics' tangent is x's, already in tx's part
    return normalise_jvp((tx, tgamma, tbeta, teps), x, gamma, stats[0], stats[1], eps)[0]


def _passed(t, ans):
    """``t`` where the ReLU passed its input (its output above 0), exactly 0 elsewhere (as torch's ReLU)."""
    return anp.where(ans > 0, t, 0.0)  # a mask: a comparison, no derivative (ans is 0 wherever the ReLU cut)


def _normalise_relu_vjp(g, ans, x, gamma, beta, stats, eps, skip):
    g = _passed(g, ans)
    dx, dgamma, dbeta, deps = normalise_vjp(g, x, gamma, stats[0], stats[1], eps)
    return dx, dgamma, dbeta, ZeroTangent(), deps, g


def _normalise_relu_jvp(tangents, ans, x, gamma, beta, stats, eps, skip):
    tx, tgamma, tbeta, _, teps, tskip = tangents
    ty = add_tangents(normalise_jvp((tx, tgamma, tbeta, teps), x, gamma, stats[0], stats[1], eps)[0], tskip)
    return ty if type(ty) is ZeroTangent else _passed(ty, ans)


defvjp_joint(batch_stats, _stats_vjp, reads="ans x", check=False)
defvjp_joint(normalise, _normalise_vjp, reads="x gamma stats", check=False)
defvjp_joint(normalise_relu, _normalise_relu_vjp, reads="ans x gamma stats", check=False)
defjvp_joint(batch_stats, _stats_jvp)
defjvp_joint(normalise, _normalise_jvp)
defjvp_joint(normalise_relu, _normalise_relu_jvp)
defbatch(batch_stats, folding_rule(batch_stats, ("image",), "pair"))
defbatch(normalise, folding_rule(normalise, ("image", "vector", "vector", "pair", None), "image"))
defbatch(normalise_relu, folding_rule(normalise_relu, ("image", "vector", "vector", "pair", None, "image"), "image"))
