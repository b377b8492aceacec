"""``linspace``: evenly spaced samples, differentiable in both endpoints.

Sample ``i`` is ``start + (i / div) * (stop - start)``, so it pulls back
``1 - i/div`` of its cotangent to ``start`` and ``i/div`` to ``stop``.  The
forward is numpy's own, so values match numpy's exactly.
"""

import numpy as np

from ..extend import Traced, ZeroTangent, defbatch, defjvp_joint, defvjp, primitive
from ._batch_helpers import align, example_shape, shift
from ._broadcast import dtype_of, shape_of, unbroadcast
from ._elementwise import divide, multiply, subtract
from ._reductions import sum as _sum
from ._shape import moveaxis


def _linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)


_linspace_p = primitive(_linspace, "linspace")


def _fractions(g, num, endpoint):
    """``i / div`` for each sample, shaped to run along axis 0 of ``g``, in ``g``'s real precision."""
    div = num - 1 if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    return t.astype(np.finfo(dtype_of(g)).dtype).reshape((num,) + (1,) * (len(shape_of(g)) - 1))


def _endpoint_vjp(weight, position):
    def vjp(g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        if np.dtype(dtype_of(ans)).kind in "biu":
            return ZeroTangent()  # integer samples are floored: a step function
        g = moveaxis(g, axis, 0)
        share = _sum(multiply(g, weight(_fractions(g, num, endpoint))), axis=0)
        return unbroadcast(share, (start, stop)[position])

    return vjp


def _to_start(t):
    return 1 - t


def _to_stop(t):
    return t


defvjp(_linspace_p, _endpoint_vjp(_to_start, 0), _endpoint_vjp(_to_stop, 1))


def _linspace_jvp(tangents, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """The samples are linear in both endpoints together: the samples between their tangents."""
    if np.dtype(dtype_of(ans)).kind in "biu":
        return ZeroTangent()  # integer samples are floored: a step function
    ends = [np.zeros(shape_of(e), dtype_of(ans)) if type(t) is ZeroTangent else t
            for t, e in zip(tangents, (start, stop))]
    return _linspace_p(*ends, num, endpoint=endpoint, dtype=dtype, axis=axis)


defjvp_joint(_linspace_p, _linspace_jvp)


def _linspace_batch(level, args, bdims, kwargs):
    """One ``linspace`` for the whole batch: array endpoints already give one sequence per element, so the
    batched endpoints are aligned to the widest example (the batch axis leading) and ``axis`` moves past it."""
    start, stop, *rest = args
    named = dict(zip(("num", "endpoint", "dtype", "axis"), rest), **kwargs)
    rank = max(len(example_shape(e, b)) for e, b in zip((start, stop), bdims[:2]))
    start, stop = (e if b is None else align(e, rank) for e, b in zip((start, stop), bdims[:2]))
    named["axis"] = shift(named.get("axis", 0), rank + 1)
    return _linspace_p(start, stop, **named), 0


defbatch(_linspace_p, _linspace_batch)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (``stop`` excluded unless
    ``endpoint``); array endpoints give one sequence per element, along ``axis``.  With
    ``retstep``, also the spacing.

    >>> import autodiff
    >>> autodiff.grad(lambda b: linspace(0.0, b, 5).sum())(1.0)  # 0 + 1/4 + 2/4 + 3/4 + 1
    2.5
    """
    samples = _linspace_p(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)
    if not retstep:
        return samples
    div = num - 1 if endpoint else num
    if type(start) is not Traced and type(stop) is not Traced:
        return samples, np.linspace(start, stop, num, endpoint=endpoint, retstep=True)[1]
    return samples, divide(subtract(stop, start), div) if div > 0 else np.nan
