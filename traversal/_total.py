"""total(f, model): the differentiable sum of ``f`` over a model's distinct trainable arrays.

Under differentiation ``total`` records **one** tape entry whose parents are
the distinct parameters (each tied array once).  Its hand-written pullback
returns, per parameter, a lazy cotangent ``g * f'(p)`` from our own engine
(``vjp_via_ad``); the engine then zips these back onto the model, first
occurrence of a tie gets the total, later occurrences and non-trainable
fields get ``None``.  If ``f`` closes over values being differentiated, the
single entry could not see them, so ``total`` falls back to the generic sum
(every op recorded), which is correct for both.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import (
    Thunk,
    Traced,
    ZeroTangent,
    add_tangents,
    defjvp_joint,
    defvjp_joint,
    jvp_via_ad,
    known_reduction,
    primitive,
    value_of,
    vjp_via_ad,
)

from ._collect import parameter_pairs, parameters, path_of
from ._walks import ExcludeWalk, FlattenWalk, execute

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
    whatever ``f`` closes over, to any order.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> m = {"x": np.array([3.0, 4.0]), "y": (np.sin, np.array([5.0])), "z": (6, 7)}
    >>> [float(total(f, m)) for f in (anp.sum, anp.linalg.norm, len)]
    [12.0, 10.0, 3.0]
    >>> import autodiff
    >>> autodiff.grad(lambda m: total(anp.linalg.norm, m))(m)
    {'x': array([0.6, 0.8]), 'y': (None, array([1.])), 'z': None}
    >>> float(total(np.size, m, only=lambda n: getattr(n, "size", 0) > 1))
    2.0
    """
    match = _predicate(only, model)
    known = known_reduction(f)
    if known is not None and grads is None:
        return _known_total(known, parameters(model, match), init)
    if known is not None:  # total(sumsq, model, grads): a known reduction of each (tie-summed) dx
        return _known_total(known, [dx for _, dx in parameter_pairs(model, grads, match)], init)
    if grads is None:
        args, arity = parameters(model, match), 1
    else:
        args, arity = [v for pair in parameter_pairs(model, grads, match) for v in pair], 2
    if not any(type(a) is Traced for a in args):
        return _generic(f, args, arity, init, model, match)
    try:
        return _total(_Spec(f, arity, model, match), init, *args)
    except _ClosesOverTraced:
        return _generic(f, args, arity, init, model, match)


def _predicate(only, model):
    """``only`` as a test of one node: the containers on a parameter's path and the parameter itself.

    A parameter is tested by its plain value (never a traced one), so the
    choice is the same under ``grad`` as outside it.
    """
    if only is None:
        return None
    if isinstance(only, type) or (isinstance(only, tuple) and all(isinstance(t, type) for t in only)):
        return lambda node: isinstance(value_of(node), only)
    if callable(only):
        return lambda node: _ask(only, node, model)
    raise TypeError(
        f"total: only= must be a type, a tuple of types or a predicate on nodes, but got "
        f"{only!r}; e.g. only=Dense, only=(Dense, Conv2d) or only=lambda node: ..."
    )


def _ask(only, node, model):
    try:
        return bool(only(value_of(node)))
    except Exception as e:
        raise TypeError(
            f"total: the only= predicate raised {type(e).__name__} on the {type(node).__name__} at "
            f"{_path_to(model, node)}: {e}; it sees every container on the way to a parameter as well as "
            "the parameter, so test attributes with getattr, e.g. only=lambda n: getattr(n, 'ndim', 0) == 2"
        ) from e


def _path_to(model, node):
    """The key path of ``node``'s first occurrence in ``model`` (for error messages)."""
    found = []
    execute(ExcludeWalk(FlattenWalk(), lambda path, x: found.append(path), lambda x: x is node), model)
    return str(found[0]) if found else "(unknown position)"


def _generic(f, args, arity, init, model, match):
    """The plain sum, every op recorded as usual (also the fallback for closures)."""
    acc, first = init, None
    for k in range(0, len(args), arity):
        value = _apply(f, args[k:k + arity], model, match)
        first = _check_shape(value, first, args[k], model, match)
        acc = acc + value
    return acc


def _apply(f, group, model, match):
    try:
        return f(*group)
    except _ClosesOverTraced:
        raise
    except Exception as e:
        leaf = value_of(group[0])
        raise RuntimeError(
            f"total: f failed on the parameter at {path_of(model, group[0], match)} "
            f"(shape {np.shape(leaf)}, dtype {np.result_type(leaf)}): {type(e).__name__}: {e}"
        ) from e


def _check_shape(value, first, leaf, model, match):
    shape = np.shape(value_of(value))
    if first is None:
        return (shape, leaf)
    if shape != first[0]:
        raise ValueError(
            f"total: f returned shape {shape} at {path_of(model, leaf, match)} but shape "
            f"{first[0]} at {path_of(model, first[1], match)}; f must return values of one "
            "shape (usually scalars) so they can be summed"
        )
    return first


class _ClosesOverTraced(Exception):
    """f's value depends on a traced value it closes over: the single entry cannot carry it."""


class _Spec:
    """What total's tape entry knows besides its parents: f, its arity, and the forward's pullbacks."""

    __slots__ = ("f", "arity", "model", "match", "pullbacks", "dtypes")

    def __init__(self, f, arity, model, match):
        self.f, self.arity, self.model, self.match = f, arity, model, match
        self.pullbacks, self.dtypes = None, None

    def __repr__(self):
        return f"<f={getattr(self.f, '__name__', type(self.f).__name__)}>"


def _forward(spec, init, *args):
    acc, first, pullbacks, dtypes = init, None, [], []
    for k in range(0, len(args), spec.arity):
        group = args[k:k + spec.arity]
        value, pullback = _apply(lambda *xs: vjp_via_ad(spec.f, *xs), group, spec.model, spec.match)
        if type(value) is Traced:
            raise _ClosesOverTraced()
        first = _check_shape(value, first, group[0], spec.model, spec.match)
        acc = acc + value
        pullbacks.append(pullback)
        dtypes.append(np.result_type(value))
    spec.pullbacks, spec.dtypes = pullbacks, dtypes
    return acc


_total = primitive(_forward, "total")


def _pullback(g, ans, spec, init, *args):
    """One lazy cotangent per argument: ``g * f'(p)``, from the forward's tapes when they apply."""
    cts = [None, g]
    reuse = spec.pullbacks is not None and not any(type(a) is Traced for a in args)
    for j, k in enumerate(range(0, len(args), spec.arity)):
        group = args[k:k + spec.arity]
        pullback = spec.pullbacks[j] if reuse else None
        shared = Thunk(lambda group=group, pullback=pullback, j=j: _group_cts(spec, g, group, pullback, j))
        cts.extend(Thunk(lambda shared=shared, m=m: shared()[m]) for m in range(spec.arity))
    return cts


def _group_cts(spec, g, group, pullback, j):
    if pullback is None:  # the arguments are traced at a lower level: differentiate f there, again
        _, pullback = vjp_via_ad(spec.f, *group)
    if np.result_type(value_of(g)) != spec.dtypes[j]:
        g = anp.astype(g, spec.dtypes[j])
    return pullback(g)


defvjp_joint(_total, _pullback)


# Known reductions (sum, norm, sumsq, abssum, maxabs): no per-leaf tracing at all.
# The forward runs the plain value per array; the pullback is the reduction's
# own differentiable vjp per array, so second order still works.


def _known_total(known, params, init):
    if Traced in map(type, params):
        return _total_known(_KnownSpec(known), init, *params)
    return known.total(params, init)


class _KnownSpec:
    """The known reduction, and the gradients at g = 1 its fused forward already wrote (if any)."""

    __slots__ = ("known", "unit_grads")

    def __init__(self, known):
        self.known, self.unit_grads = known, None

    def __repr__(self):
        return repr(self.known)


def _known_forward(spec, init, *params):
    value, spec.unit_grads = spec.known.total_and_unit_grads(params, init)
    return value


def _known_pullback(g, ans, spec, init, *params):
    if type(g) is not Traced and Traced not in map(type, params):
        unit, spec.unit_grads = spec.unit_grads, None  # handed out once; a second call recomputes
        return [None, g, *spec.known.plain_vjps(g, params, unit)]
    return [None, g, *(Thunk(lambda p=p: spec.known.pullback(g, p)) for p in params)]


_total_known = primitive(_known_forward, "total")
defvjp_joint(_total_known, _known_pullback)


# Forward mode: the tangent of total is Σ f'(p)·v_p over the parameters that carry a tangent.


def _total_jvp(tangents, ans, spec, init, *args):
    """``f`` pushed forward at each parameter (with its ``dx``) along that parameter's tangent."""
    out = tangents[1]
    for k in range(0, len(args), spec.arity):
        ts = tangents[2 + k:2 + k + spec.arity]
        if any(type(t) is not ZeroTangent for t in ts):
            out = add_tangents(out, jvp_via_ad(spec.f, args[k:k + spec.arity], ts)[1])
    return out


defjvp_joint(_total, _total_jvp)


def _known_jvp(tangents, ans, spec, init, *params):
    """``<f'(p), v_p>`` summed: the gradients at g = 1 of the fused forward, when it wrote them, dotted with v."""
    units, spec.unit_grads = spec.unit_grads, None
    plain = Traced not in map(type, params) and Traced not in map(type, tangents)
    out = tangents[1]
    for i, (p, t) in enumerate(zip(params, tangents[2:])):
        if type(t) is ZeroTangent:
            continue
        if plain:
            unit = units[i] if units is not None else spec.known.plain_vjp(1.0, p)
            term = np.result_type(ans).type(np.real(np.vdot(unit, t)))
        else:
            unit = spec.known.vjp(1.0, p)
            term = anp.sum(anp.real(anp.conj(unit) * t) if np.result_type(value_of(p)).kind == "c" else unit * t)
        out = add_tangents(out, term)
    return out


defjvp_joint(_total_known, _known_jvp)
