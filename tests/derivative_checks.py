"""One check of an op's derivatives against oracles, shared by the issue-37 tests (gluing, namespace,
scatter-add): finite differences at orders 1 and 2 (``gradcheck``), forward mode against reverse mode on random
directions, and ``vmap`` against a Python loop over examples.
"""

import numpy as np

import autodiff


def _random_like(x, rng):
    x = np.asarray(x)
    return rng.standard_normal(x.shape).astype(x.dtype) if x.dtype.kind == "f" else np.zeros_like(x)


def _pair(u, t):
    return float(np.sum(np.real(np.asarray(u) * np.asarray(t))))


def check_derivatives(f, *args, argnums=None, order=2):
    """``f``'s VJP to ``order`` against finite differences, and its JVP against its VJP:
    ``<u, J t>`` pushed forward equals ``<J^T u, t>`` pulled back, for random ``u`` and ``t``."""
    argnums = tuple(range(len(args))) if argnums is None else argnums
    fixed = {k: a for k, a in enumerate(args) if k not in argnums}

    def g(*moving):
        full, it = [], iter(moving)
        for k in range(len(args)):
            full.append(fixed[k] if k in fixed else next(it))
        return f(*full)

    moving = tuple(args[k] for k in argnums)
    assert autodiff.gradcheck(g, *moving, order=order)
    rng = np.random.default_rng(1)
    tangents = tuple(_random_like(a, rng) for a in moving)
    out, pushed = autodiff.jvp(g, moving, tangents)
    u = _random_like(out, rng)
    _, pullback = autodiff.vjp(g, *moving)
    pulled = pullback(u)
    single = any(np.result_type(a) in (np.float32, np.complex64) for a in (out, *moving))
    np.testing.assert_allclose(_pair(u, pushed), sum(_pair(c, t) for c, t in zip(pulled, tangents)),
                               rtol=1e-5 if single else 1e-9, atol=1e-6 if single else 1e-12)


def check_vmap(f, *batched, in_axes=0):
    """``vmap(f)`` over the leading axis of the arguments (``None`` in ``in_axes``: shared) against a loop,
    for the value and for the gradient of ``sum(f)`` in the first float argument (batched or shared: one
    gradient per example either way)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(batched)
    n = next(len(a) for a, ax in zip(batched, axes) if ax is not None)
    examples = [[a if ax is None else a[i] for a, ax in zip(batched, axes)] for i in range(n)]
    np.testing.assert_allclose(autodiff.vmap(f, in_axes=axes)(*batched), np.stack([f(*e) for e in examples]),
                               rtol=1e-6, atol=1e-12)
    floats = [k for k, a in enumerate(batched) if np.asarray(a).dtype.kind in "fc"]
    if not floats:
        return
    first = floats[0]

    def total(*xs):
        return autodiff.numpy.real(autodiff.numpy.sum(f(*xs)))

    grads = autodiff.vmap(autodiff.grad(total, argnums=first), in_axes=axes)(*batched)
    np.testing.assert_allclose(grads, np.stack([autodiff.grad(total, argnums=first)(*e) for e in examples]),
                               rtol=1e-6, atol=1e-12)


def central_difference(f, t, eps=1e-6):
    """d f / d t at the real scalar ``t`` by central differences (``f`` may return a complex number).

    >>> round(central_difference(lambda t: t ** 3, 2.0), 6)
    12.0
    """
    return (f(t + eps) - f(t - eps)) / (2 * eps)
