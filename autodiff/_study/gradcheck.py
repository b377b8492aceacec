"""gradcheck: the VJP against central finite differences, at order 1 or 2."""

import numpy as np

from .._arguments import is_differentiable
from .._containers import node_of
from .._directions import Variables
from .._paths import format_path
from .._traced import value_of
from .._trees import leaves, rebuild_node, transform
from .._vjp import vjp

_TOLERANCE = {np.dtype(np.float32): (2e-3, 1e-4), np.dtype(np.float64): (1e-5, 1e-7)}
_TOLERANCE.update({np.dtype(np.complex64): _TOLERANCE[np.dtype(np.float32)],
                   np.dtype(np.complex128): _TOLERANCE[np.dtype(np.float64)]})
_WIDER = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}


class GradcheckError(AssertionError):
    """A derivative disagrees with finite differences."""

    __module__ = "autodiff"  # its public name, in tracebacks and doctests


def gradcheck(f, *args, order=1, eps=1e-6, rtol=None, atol=None, seed=0):
    """Check ``f``'s VJP against finite differences along random directions.

    For every distinct float leaf ``x`` of the arguments (structures too), a
    random direction ``v`` and a random output cotangent ``u``, compare
    ``<vjp(u), v>`` with ``(<u, f(x + eps v)> - <u, f(x - eps v)>) / 2 eps``.
    Finite differences run in float64 (complex128) even for float32 (complex64) inputs, so they are
    a trustworthy oracle; the gradient must also keep each leaf's dtype.
    ``order=2`` checks the VJP of the VJP the same way.  Tolerances default
    by dtype.  Raises :class:`GradcheckError` naming the key path of the
    worst leaf, both numbers and the order that failed; returns ``True`` otherwise.
    Integer arguments are constants, as in :func:`autodiff.grad`; with no float
    leaf at all there is nothing to check, so it raises ``ValueError`` rather
    than report success (as it does for ``eps <= 0``).

    Complex leaves follow the declared convention (JAX's, ``docs/complex.md``):
    a cotangent pairs with a tangent by ``Re(sum(u * v))``, unconjugated, so a
    rule written with torch's conjugated convention fails here.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> gradcheck(lambda x: anp.sin(x) * x, np.array([0.5, 1.0]), order=2)
    True
    >>> from autodiff.extend import primitive, defvjp, value_of
    >>> flat_sin = primitive(np.sin, "flat_sin")
    >>> defvjp(flat_sin, lambda g, ans, x: g * np.cos(value_of(x)))  # value_of: a constant to the outer level
    >>> gradcheck(flat_sin, 0.5)
    True
    >>> gradcheck(flat_sin, 0.5, order=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    autodiff.GradcheckError: gradcheck: derivative at arg 0 ... (order 2: the VJP of the VJP, eps 1e-06)
    >>> gradcheck(flat_sin, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: gradcheck: nothing to check: arg 0 has dtype int... pass floats, e.g. np.asarray(x, float)
    """
    _validate(args, order, eps)
    rng = np.random.default_rng(seed)
    f, args = _constants_closed_over(f, args)
    if order == 2:
        u = _random_like(f(*args), rng)
        rng = np.random.default_rng(seed + 1)
        return _check(_vjp_of(f, u), args, rng, "order 2: the VJP of the VJP", eps, rtol, atol)
    return _check(f, args, rng, "order 1", eps, rtol, atol)


def _validate(args, order, eps):
    """Refuse what would make the check meaningless: a bad ``order``, a step ``eps`` that is not
    positive and finite, or arguments without a single float leaf (nothing would be checked)."""
    if order not in (1, 2):
        raise ValueError(f"gradcheck: order must be 1 or 2, got {order!r}")
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"gradcheck: eps must be a positive finite step, got {eps!r}")
    _require_a_float_leaf(args)


def _require_a_float_leaf(args):
    """Raise unless some argument holds a float or complex leaf.

    Integer and bool arguments are constants (as in :func:`autodiff.grad`), so a
    check over them alone would compare nothing and report success; refuse instead,
    naming the first such argument and its dtype.
    """
    constant = None
    for path, leaf in leaves(tuple(args)):
        if is_differentiable(leaf):
            return
        v = value_of(leaf)
        if constant is None and isinstance(v, (np.ndarray, np.generic, int)):
            constant = (path, np.result_type(v))
    if constant is None:
        raise ValueError("gradcheck: no float or complex argument to check; pass float arrays or scalars")
    path, dtype = constant
    raise ValueError(
        f"gradcheck: nothing to check: {format_path(path)} has dtype {dtype}, and integer arguments "
        "are held constant (as in grad); pass floats, e.g. np.asarray(x, float)"
    )


def _check(f, args, rng, order, eps, rtol, atol):
    """Compare ``f``'s VJP with finite differences leaf by leaf; raise naming the worst leaf and ``order``."""
    out, pullback = vjp(f, *args)
    u = _random_like(out, rng)
    grads = pullback(u)
    worst = None
    for path, leaf, g in _distinct_leaves(args, grads):
        v = _random_like(leaf, rng)
        analytic = _dot(g, v) if g is not None else 0.0
        numeric = _numeric(f, args, path, leaf, v, u, eps)
        excess = _excess(analytic, numeric, leaf, rtol, atol)
        _check_dtype(path, leaf, g)
        if excess > 0 and (worst is None or excess > worst[0]):
            worst = (excess, path, analytic, numeric)
    if worst is not None:
        _, path, analytic, numeric = worst
        raise GradcheckError(
            f"gradcheck: derivative at {format_path(path)} disagrees with finite "
            f"differences: vjp gives {analytic:.10g}, finite differences give "
            f"{numeric:.10g} ({order}, eps {eps})"
        )
    return True


def _constants_closed_over(f, args):
    """Bare non-float arguments (ints, strings, callables) are held constant.

    Beside at least one float argument only (:func:`_validate` refuses a call with none).
    """
    keep = [i for i, a in enumerate(args) if is_differentiable(a) or node_of(a) is not None]
    if len(keep) == len(args):
        return f, args

    def f_of_kept(*kept):
        full = list(args)
        for i, a in zip(keep, kept):
            full[i] = a
        return f(*full)

    return f_of_kept, tuple(args[i] for i in keep)


def _vjp_of(f, u):
    def vjp_f(*xs):
        out, pullback = vjp(f, *xs)
        return pullback(_like(u, out))

    return vjp_f


def _like(u, out):
    """``u`` cast to ``out``'s dtypes (finite differences run ``f`` in float64)."""
    it = iter([leaf for _, leaf in leaves(out)])

    def leaf_fn(path, leaf):
        target = value_of(next(it))
        if leaf is None or isinstance(leaf, (float, complex)):
            return leaf
        return np.asarray(leaf, np.result_type(target))

    return transform(u, leaf_fn, rebuild_node)


def _distinct_leaves(args, grads):
    """``(path, leaf, gradient)`` per variable (:class:`~autodiff._directions.Variables`: each argument's
    distinct trainable arrays, a tie's gradient from whichever of its positions carries it (design.md
    section 3), and each float position; constants a node's ``trainable`` leaves out are not perturbed)."""
    variables = Variables(tuple(args))
    by_path = {}
    for i, g in enumerate(grads):
        by_path.update(leaves(g, (i,)) if g is not None else ())
    found = []
    for leaf, paths, home in zip(variables.leaves, variables.paths, variables.homes()):
        g = next((by_path[p] for p in paths if by_path.get(p) is not None), None)
        found.append((home, leaf, g))
    return found


def _random_like(tree, rng):
    def leaf_fn(path, leaf):
        if not is_differentiable(leaf):
            return None
        v = value_of(leaf)
        r = rng.standard_normal(np.shape(v))
        if np.result_type(v).kind == "c":
            r = r + 1j * rng.standard_normal(np.shape(v))
        return type(v)(r) if isinstance(v, (float, complex)) else np.asarray(r, np.result_type(v))

    return transform(tree, leaf_fn, rebuild_node)


def _numeric(f, args, path, leaf, v, u, eps):
    wide = _float64(args)
    base = np.asarray(value_of(leaf), dtype=np.result_type(value_of(leaf), np.float64))
    step = np.asarray(v, base.dtype) * eps
    plus = _dot(u, f(*_replace(wide, path, leaf, base + step)))
    minus = _dot(u, f(*_replace(wide, path, leaf, base - step)))
    return (plus - minus) / (2 * eps)


def _float64(args):
    def leaf_fn(path, x):
        v = value_of(x)
        if isinstance(v, (np.ndarray, np.generic)) and v.dtype in _WIDER:
            return _Widened(np.asarray(v, _WIDER[v.dtype]), x)
        return x

    return transform(list(args), leaf_fn, rebuild_node)


class _Widened:
    """A float64 copy standing in for a float32 leaf, remembering the original."""

    __slots__ = ("wide", "original")

    def __init__(self, wide, original):
        self.wide, self.original = wide, original


def _variable(path, leaf):
    """What identifies a variable inside one argument: an array by identity, a float by position."""
    return id(leaf) if isinstance(value_of(leaf), np.ndarray) else path


def _replace(args, where, leaf, new):
    """``args`` with the variable at ``where`` (its argument's every position of that array, or that one
    float position) replaced by ``new``."""
    key = _variable(where, leaf)

    def leaf_fn(path, x):
        original = x.original if type(x) is _Widened else x
        if path[0] == where[0] and original is leaf and _variable(path, original) == key:
            return _cast_like(new, x.wide if type(x) is _Widened else x)
        return x.wide if type(x) is _Widened else x

    return transform(args, leaf_fn, rebuild_node)


def _cast_like(new, old):
    v = value_of(old)
    return type(v)(new) if isinstance(v, (float, complex)) else np.asarray(new)


def _dot(a, b):
    """``Re(sum(a * b))``, unconjugated: with JAX's convention (docs/complex.md) a cotangent pairs with
    a tangent this way, so ``<u, J v> = <vjp(u), v>`` holds for complex leaves too."""
    total = 0.0
    for (_, x), (_, y) in zip(leaves(a), leaves(b)):
        if x is not None and y is not None and is_differentiable(x):
            x, y = np.asarray(value_of(x)).ravel(), np.asarray(value_of(y)).ravel()
            total += float(np.real(np.dot(x, y)))
    return total


def _excess(analytic, numeric, leaf, rtol, atol):
    if not (np.isfinite(analytic) and np.isfinite(numeric)):
        return np.inf  # a NaN or infinite derivative never passes (NaN compares false with every tolerance)
    dtype = np.result_type(value_of(leaf))
    default_rtol, default_atol = _TOLERANCE.get(dtype, _TOLERANCE[np.dtype(np.float64)])
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    return abs(analytic - numeric) - (atol + rtol * max(abs(analytic), abs(numeric)))


def _check_dtype(path, leaf, g):
    if g is None or isinstance(value_of(leaf), (float, complex)):
        return
    want, got = np.result_type(value_of(leaf)), np.result_type(value_of(g))
    if want != got:
        raise GradcheckError(
            f"gradcheck: gradient at {format_path(path)} has dtype {got}, but the "
            f"argument has dtype {want}; a pullback changed the dtype"
        )
