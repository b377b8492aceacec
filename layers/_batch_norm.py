"""Training-mode batch normalisation: fused numba kernels forward and backward, rules in differentiable ops.

``batch_norm(x, gamma, beta, eps)`` returns ``(y, mean, var)``: the batch's
per-channel mean and (biased) variance in one pass over ``x`` (shifted sums
in float64, so float32 input loses nothing to cancellation), then
``y = (x - mean)·gamma/sqrt(var + eps) + beta`` in a second.  Its pullback
makes the two sums ``Σ g`` and ``Σ g·x̂`` in one pass (``bn_grad_sums``) and
``dx = gamma/σ·(g - Σg/M - x̂·Σgx̂/M)`` in another (``bn_grad_input``); it
saves ``x``, ``gamma`` and the outputs, as torch saves its input and
statistics.  Those two are primitives too, whose own rules differentiate
their numpy twins (written in ``autodiff.numpy``), so second derivatives
(gradient penalties) flow through them; a cotangent reaching ``mean`` or
``var`` themselves is handled in differentiable ops.  Each kernel works on
``(M, C)`` rows (channels-last memory, :mod:`layers._layout`).

>>> x = np.arange(8.0).reshape(4, 2)
>>> y, mean, var = batch_norm(x, np.ones(2), np.zeros(2), 0.0)
>>> mean, var, y[:, 0].round(3)
(array([3., 4.]), array([5., 5.]), array([-1.342, -0.447,  0.447,  1.342]))
"""

import math

import numpy as np

import autodiff.numpy as anp
from autodiff._accel.numba_jit import Kernel, readonly, writable
from autodiff.extend import (
    Thunk,
    ZeroTangent,
    add_tangents,
    defbatch,
    defjvp_joint,
    defvjp_joint,
    jvp_via_ad,
    primitive,
    value_of,
    vjp_via_ad,
)

from . import _pieces
from ._channel_folding import folding_rule
from ._layout import channel_axes, from_rows, per_channel, rows


def _channel_sums_loop(u, ushift, v, vshift, out):
    """``out[0] = Σ_m (u - ushift)`` and ``out[1] = Σ_m (u - ushift)(v - vshift)`` per channel, in float64."""
    m_, c_ = u.shape
    out[:] = 0
    for m in range(m_):
        for c in range(c_):
            a = np.float64(u[m, c]) - ushift[c]
            out[0, c] += a
            out[1, c] += a * (np.float64(v[m, c]) - vshift[c])


def _channel_affine_loop(u, a, v, mu, b, d, relu, out):
    """``out = u·a + (v - mu)·b + d``, per channel ``c`` (the last axis); with ``relu``, ``max(out, 0)`` (a NaN
    stays, as ``np.maximum`` keeps it)."""
    m_, c_ = u.shape
    for m in range(m_):
        for c in range(c_):
            r = u[m, c] * a[c] + (v[m, c] - mu[c]) * b[c] + d[c]
            out[m, c] = r if not relu or r > 0 or r != r else 0


CHANNEL_SUMS = Kernel(_channel_sums_loop, lambda t, d: t.void(
    readonly(t, d, 2, "C"), readonly(t, t.float64, 1, "C"), readonly(t, d, 2, "C"), readonly(t, t.float64, 1, "C"),
    writable(t, t.float64, 2)))
CHANNEL_AFFINE = Kernel(_channel_affine_loop, lambda t, d: t.void(
    readonly(t, d, 2, "C"), readonly(t, d, 1, "C"), readonly(t, d, 2, "C"), readonly(t, d, 1, "C"),
    readonly(t, d, 1, "C"), readonly(t, d, 1, "C"), t.boolean, writable(t, d, 2)))


def channel_sums_reference(u, ushift, v, vshift):
    """The numpy twin of the sums kernel (float64 throughout)."""
    a = u.astype(np.float64) - ushift
    return np.stack([a.sum(axis=0), (a * (v.astype(np.float64) - vshift)).sum(axis=0)])


def channel_affine_reference(u, a, v, mu, b, d, relu=False):
    """The numpy twin of the affine kernel."""
    out = u * a + (v - mu) * b + d
    return np.maximum(out, 0) if relu else out


def _channel_sums(u, ushift, v, vshift):
    """``(2, C)`` float64 sums over the rows of ``u`` and ``v`` (``(M, C)`` C-ordered), in pieces for two threads."""
    k = CHANNEL_SUMS.compiled(u.dtype) if u.dtype == v.dtype else None
    if k is None:
        return channel_sums_reference(u, ushift, v, vshift)
    pieces = _pieces.ranges(len(u), u.nbytes)
    partial = np.empty((len(pieces), 2, u.shape[1]))
    slot = {a: i for i, (a, _) in enumerate(pieces)}
    try:
        _pieces.run(pieces, lambda a, b: k(u[a:b], ushift, v[a:b], vshift, partial[slot[a]]))
    except Exception:  # never a wrong answer: the twin
        return channel_sums_reference(u, ushift, v, vshift)
    return partial.sum(axis=0)  # the same pieces whatever the threads: the same answer


def _channel_affine(u, a, v, mu, b, d, relu=False):
    """``u·a + (v - mu)·b + d`` over ``(M, C)`` rows, then ``max(·, 0)`` with ``relu``; the per-channel vectors
    are cast to the rows' dtype."""
    dtype = np.result_type(u, v)
    a, mu, b, d = (np.ascontiguousarray(p, dtype) for p in (a, mu, b, d))
    k = CHANNEL_AFFINE.compiled(dtype) if u.dtype == v.dtype else None
    if k is None:
        return channel_affine_reference(u, a, v, mu, b, d, relu)
    out = np.empty(u.shape, dtype)
    try:
        _pieces.run(_pieces.ranges(len(u), out.nbytes), lambda s, e: k(u[s:e], a, v[s:e], mu, b, d, relu, out[s:e]))
    except Exception:  # never a wrong answer: the twin
        return channel_affine_reference(u, a, v, mu, b, d, relu)
    return out


def _inverse_std(var, eps):
    return 1.0 / np.sqrt(np.asarray(var, np.float64) + eps)


def _moments(r):
    """Per-channel mean and (biased) variance of the rows ``r`` in one pass: sums of the values less the first
    row, in float64, so that a mean large against the spread cancels nothing."""
    shift = r[0].astype(np.float64) if len(r) else np.zeros(r.shape[1])
    centre, spread = _channel_sums(r, shift, r, shift) / max(len(r), 1)
    return shift + centre, np.maximum(spread - centre ** 2, 0)


def _check_count(x):
    """Refuse one value per channel, as torch does: its statistics are that value, so ``y = beta`` and the running
    variance decays towards 0.  Under vmap the examples are folded into the channels (:func:`_fold_channels`),
    so this counts one example's values."""
    if _count_and_shape(x)[0] == 1:
        raise ValueError(f"BatchNorm: expected more than 1 value per channel when training, got input of shape "
                         f"{np.shape(x)}: 1 value per channel (per example under autodiff.vmap); train with a larger "
                         f"batch (or larger images), or use eval mode (train=False)")


def _batch_stats(x):
    """The ``(2, C)`` array of the per-channel mean and (biased) variance of ``x``, in ``x``'s dtype."""
    _check_count(x)
    return np.stack(_moments(rows(x))).astype(x.dtype)


def _normalise(x, gamma, beta, stats, eps, skip=None, relu=False):
    """``(x - mean)·gamma/sqrt(var + eps) + beta``, plus ``skip`` when given, then ``max(·, 0)`` with ``relu``:
    one pass, channels-last out."""
    r, mean, var = rows(x), stats[0], stats[1]
    u, a = (r, np.zeros(len(mean))) if skip is None else (rows(skip), np.ones(len(mean)))
    y = _channel_affine(u, a, r, mean, gamma * _inverse_std(var, eps), beta, relu)
    return from_rows(y, np.shape(x))


def _batch_norm(x, gamma, beta, eps):
    stats = _batch_stats(x)
    return _normalise(x, gamma, beta, stats, eps), stats[0], stats[1]


def _bn_grad_sums(g, x, mean, var, eps):
    sums = _channel_sums(rows(g), np.zeros(len(mean)), rows(x), np.asarray(mean, np.float64))
    return np.stack([sums[0], sums[1] * _inverse_std(var, eps)]).astype(np.result_type(g, x))


def _bn_grad_input(g, x, gamma, mean, var, sums, eps):
    count = np.size(x) // max(len(mean), 1)
    r, s = _inverse_std(var, eps), np.asarray(sums, np.float64)
    scale = np.asarray(gamma, np.float64) * r
    dx = _channel_affine(rows(g), scale, rows(x), mean, -scale * r * s[1] / count, -scale * s[0] / count)
    return from_rows(dx, np.shape(x))


batch_norm = primitive(_batch_norm, "batch_norm")
bn_grad_sums = primitive(_bn_grad_sums, "bn_grad_sums")
bn_grad_input = primitive(_bn_grad_input, "bn_grad_input")


def _count_and_shape(x):
    shape = np.shape(value_of(x))
    return math.prod(shape[:1] + shape[2:]), per_channel(len(shape))  # values per channel (no channels: still N·H·W)


def _normalised(x, mean, var, eps):
    """``x̂ = (x - mean)/sqrt(var + eps)``, in differentiable ops."""
    _, shape = _count_and_shape(x)
    return (x - anp.reshape(mean, shape)) * anp.reshape((var + eps) ** -0.5, shape)


def bn_grad_sums_reference(g, x, mean, var, eps):
    """The twin of ``bn_grad_sums`` in differentiable ops: ``[Σ g, Σ g·x̂]`` per channel."""
    axes = channel_axes(np.ndim(value_of(x)))
    return anp.stack([anp.sum(g, axis=axes), anp.sum(g * _normalised(x, mean, var, eps), axis=axes)])


def bn_grad_input_reference(g, x, gamma, mean, var, sums, eps):
    """The twin of ``bn_grad_input`` in differentiable ops: ``gamma/σ·(g - Σg/M - x̂·Σgx̂/M)``."""
    count, shape = _count_and_shape(x)
    centred = g - anp.reshape(sums[0] / count, shape) - _normalised(x, mean, var, eps) * anp.reshape(
        sums[1] / count, shape)
    return anp.reshape(gamma * (var + eps) ** -0.5, shape) * centred


def _rules_from_twin(prim, twin):
    """``prim``'s pullback and pushforward: those of its twin, traced when (and only when) they are needed."""
    defvjp_joint(prim, lambda g, ans, *args: vjp_via_ad(twin, *args)[1](g))
    defjvp_joint(prim, lambda tangents, ans, *args: jvp_via_ad(twin, args, tangents)[1])


_rules_from_twin(bn_grad_sums, bn_grad_sums_reference)
_rules_from_twin(bn_grad_input, bn_grad_input_reference)


def _is_zero(t):
    return type(t) is ZeroTangent


def _moments_vjp(gmean, gvar, x, mean):
    """What cotangents of the batch's mean and variance add to ``x``'s (second order and beyond)."""
    count, shape = _count_and_shape(x)
    out = ZeroTangent()
    if not _is_zero(gmean):
        out = anp.broadcast_to(anp.reshape(gmean / count, shape), np.shape(value_of(x)))
    if not _is_zero(gvar):
        out = add_tangents(out, anp.reshape(gvar * (2.0 / count), shape) * (x - anp.reshape(mean, shape)))
    return out


def normalise_vjp(gy, x, gamma, mean, var, eps):
    """The cotangents of ``x`` (through the batch's statistics too: the fused two-pass backward), ``gamma``,
    ``beta`` and ``eps`` of ``y = (x - mean)·gamma/sqrt(var + eps) + beta``, given ``y``'s cotangent ``gy``."""
    sums = bn_grad_sums(gy, x, mean, var, eps)
    dx = bn_grad_input(gy, x, gamma, mean, var, sums, eps)
    deps = Thunk(lambda: -0.5 * anp.sum(gamma * sums[1] / (var + eps)))  # eps is a float leaf of the layer
    return dx, sums[1], sums[0], deps


def _batch_norm_vjp(g, ans, x, gamma, beta, eps):
    gy, gmean, gvar = g
    dx = dgamma = dbeta = deps = ZeroTangent()
    if not _is_zero(gy):
        dx, dgamma, dbeta, deps = normalise_vjp(gy, x, gamma, ans[1], ans[2], eps)
    return add_tangents(dx, _moments_vjp(gmean, gvar, x, ans[1])), dgamma, dbeta, deps


def _batch_norm_jvp(tangents, ans, x, gamma, beta, eps):
    return normalise_jvp(tangents, x, gamma, ans[1], ans[2], eps)


def normalise_jvp(tangents, x, gamma, mean, var, eps):
    """The tangents ``(y, mean, var)`` of the normalisation by the batch's statistics, given those of
    ``(x, gamma, beta, eps)``."""
    tx, tgamma, tbeta, teps = tangents
    count, shape = _count_and_shape(x)
    axes = channel_axes(len(np.shape(value_of(x))))
    x_hat = _normalised(x, mean, var, eps)
    ty = tmean = tvar = ZeroTangent()
    if not _is_zero(tx):
        tmean, projection = anp.mean(tx, axis=axes), anp.mean(tx * x_hat, axis=axes)
        tvar = 2.0 * projection * (var + eps) ** 0.5
        ty = anp.reshape(gamma * (var + eps) ** -0.5, shape) * (
            tx - anp.reshape(tmean, shape) - x_hat * anp.reshape(projection, shape))
    if not _is_zero(tgamma):
        ty = add_tangents(ty, x_hat * anp.reshape(tgamma, shape))
    if not _is_zero(tbeta):
        ty = add_tangents(ty, anp.broadcast_to(anp.reshape(tbeta, shape), np.shape(value_of(x))))
    if not _is_zero(teps):
        ty = add_tangents(ty, x_hat * anp.reshape(gamma * (-0.5 * teps) / (var + eps), shape))
    return ty, tmean, tvar


defvjp_joint(batch_norm, _batch_norm_vjp)
defjvp_joint(batch_norm, _batch_norm_jvp)


defbatch(batch_norm, folding_rule(batch_norm, ("image", "vector", "vector", None), ("image", "vector", "vector")))
defbatch(bn_grad_sums, folding_rule(bn_grad_sums, ("image", "image", "vector", "vector", None), "pair"))
defbatch(bn_grad_input, folding_rule(bn_grad_input, ("image", "image", "vector", "vector", "vector", "pair", None),
                                     "image"))


def batch_norm_reference(x, gamma, beta, eps):
    """The numpy twin of :func:`batch_norm`: the statistics in float64 by two passes, as numpy computes them."""
    x = np.asarray(x)
    axes, shape = channel_axes(x.ndim), per_channel(x.ndim)
    wide = x.astype(np.float64)
    mean, var = wide.mean(axis=axes), wide.var(axis=axes)
    y = (wide - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * np.reshape(gamma, shape) + np.reshape(
        beta, shape)
    return y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)
