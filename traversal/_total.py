"""total(f, model): the differentiable sum of ``f`` over a model's distinct trainable arrays.

Under differentiation ``total`` records **one** tape entry whose parents are the distinct parameters
(each tied array once), as Optimisers.jl's ``total`` does with one ``rrule``.  Its forward
differentiates ``f`` at each parameter with our own engine (``vjp_via_ad``) and hands those pullbacks
to the entry's pullback as residuals (``defvjp_fwd_bwd``), which returns per parameter a lazy
cotangent ``g * f'(p)``.  The engine zips these back onto the model: a tie's first occurrence gets the
total, later occurrences and non-trainable fields ``None``.  If ``f`` holds a traced value (a closure,
a default, a bound ``self``), the one entry could not see it, so ``total`` takes the generic path
(every op recorded).  A known reduction (``sumsq``, ``norm`` ...) may take a fused path instead
(``autodiff._accel.reductions``, off under ``AUTODIFF_REFERENCE=1``), with the same numbers.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff._for_traversal import is_known
from autodiff._hooks import hooks
from autodiff.extend import (
    Thunk,
    Traced,
    ZeroTangent,
    add_tangents,
    batch_through,
    defbatch,
    defjvp_joint,
    defvjp_fwd_bwd,
    jvp_via_ad,
    primitive,
    value_of,
    vjp_via_ad,
)

from ._holders import holds_traced
from ._total_checks import apply, check_shape, predicate

__all__ = ["total"]


def total(f, model, grads=None, *, init=0.0, only=None):
    """``init + Σ f(p)`` over the distinct trainable arrays ``p`` of ``model`` (ties once).

    With ``grads`` (a structural gradient of ``model``), ``init + Σ f(x, dx)``,
    ``dx`` taken from the same position; a tied ``x`` gets the sum of its
    ``dx`` before ``f`` is called, and ``None`` entries are skipped.  A known
    reduction such as ``autodiff.sumsq`` is applied to ``dx`` alone there:
    ``total(sumsq, model, grads)`` is the squared global gradient norm.
    ``only`` (a type, a tuple of types or a predicate) keeps a parameter when
    it, or any node on its path from the root, matches: ``only=Dense``,
    ``only=np.ndarray``, ``only=lambda n: getattr(n, "ndim", 0) == 2``.  The
    predicate sees containers as well as arrays (plain values, also under
    ``grad``).  Differentiable with respect to the model, ``grads`` and
    whatever ``f`` closes over, to any order.  With ``init`` zero, the sum is
    an int when every term is (``total(np.size, model)``, a parameter count),
    as Python's ``sum`` is; a model without parameters gives ``init``.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> m = {"x": np.array([3.0, 4.0]), "y": (np.sin, np.array([5.0])), "z": (6, 7)}
    >>> [float(total(f, m)) for f in (anp.sum, anp.linalg.norm, len)]
    [12.0, 10.0, 3.0]
    >>> import autodiff
    >>> autodiff.grad(lambda m: total(anp.linalg.norm, m))(m)
    {'x': array([0.6, 0.8]), 'y': (None, array([1.])), 'z': None}
    >>> total(np.size, m), total(np.size, m, only=lambda n: getattr(n, "size", 0) > 1)
    (3, 2)
    """
    match = predicate(only, model)
    args, arity = _arguments(f, model, grads, match)
    fast = hooks.known_total(f, args, init) if arity == 1 else None
    if fast is not None:
        return fast
    if not any(type(a) is Traced for a in args) or holds_traced(f):
        return _generic(f, args, arity, init, model, match)
    return _total(_Spec(f, arity, model, match), init, *args)


def _arguments(f, model, grads, match):
    """The flat arguments of ``f`` (parameters, or (x, dx) pairs, or a known reduction's dx alone)."""
    if grads is None:
        return hooks.parameters(model, match), 1
    pairs = hooks.parameter_pairs(model, grads, match)
    if is_known(f):
        return [dx for _, dx in pairs], 1
    return [v for pair in pairs for v in pair], 2


def _generic(f, args, arity, init, model, match):
    """The plain sum, every op recorded as usual; an int when every term is and ``init`` is zero."""
    acc, first, ints = init, None, bool(args) and type(init) is float and init == 0
    for k in range(0, len(args), arity):
        value = apply(f, args[k:k + arity], model, match)
        first = check_shape(value, first, args[k], model, match)
        acc = acc + value
        ints = ints and isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    return int(acc) if ints else acc


class _Spec:
    """What total's tape entry knows besides its parents (read-only): f, its arity, and the model for errors."""

    __slots__ = ("f", "arity", "model", "match")

    def __init__(self, f, arity, model, match):
        self.f, self.arity, self.model, self.match = f, arity, model, match

    def __repr__(self):
        return f"<f={getattr(self.f, '__name__', type(self.f).__name__)}>"


def _value(spec, init, *args):
    return _generic(spec.f, args, spec.arity, init, spec.model, spec.match)


def _forward(spec, init, *args):
    """The sum, and per group of arguments the pullback of ``f`` there (the residuals)."""
    acc, first, residuals = init, None, []
    for k in range(0, len(args), spec.arity):
        group = args[k:k + spec.arity]
        value, pullback = apply(lambda *xs: vjp_via_ad(spec.f, *xs), group, spec.model, spec.match)
        first = check_shape(value, first, group[0], spec.model, spec.match)
        acc = acc + value
        residuals.append((pullback, np.result_type(value_of(value))))
    return acc, residuals


def _backward(g, residuals, ans, spec, init, *args):
    """One lazy cotangent per argument: ``g * f'(p)`` from the pullbacks the forward handed over."""
    cts = [None, g]
    for pullback, dtype in residuals:
        shared = Thunk(lambda pullback=pullback, dtype=dtype: pullback(_as(g, dtype)))
        cts.extend(Thunk(lambda shared=shared, m=m: shared()[m]) for m in range(spec.arity))
    return cts


def _as(g, dtype):
    return g if np.result_type(value_of(g)) == dtype else anp.astype(g, dtype)


def _pushforward(tangents, ans, spec, init, *args):
    """``f`` pushed forward at each group of arguments along their tangents, summed."""
    out = tangents[1]
    for k in range(0, len(args), spec.arity):
        ts = tangents[2 + k:2 + k + spec.arity]
        if any(type(t) is not ZeroTangent for t in ts):
            out = add_tangents(out, jvp_via_ad(spec.f, args[k:k + spec.arity], ts)[1])
    return out


_total = primitive(_value, "total")
defvjp_fwd_bwd(_total, _forward, _backward)
defjvp_joint(_total, _pushforward)
defbatch(_total, batch_through(_value))  # under vmap: the plain sum, each op of f batched by its own rule
