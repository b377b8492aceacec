"""Structured arguments: trace their distinct float leaves, and mirror gradients back.

Ties are decided by identity: a tied array gets one traced value, and its
accumulated gradient appears at its first occurrence, ``None`` at later ones.
"""

import numbers

import numpy as np

from ._containers import node_of
from ._tangents import NoTangent, Thunk, ZeroTangent
from ._traced import Traced, new_input, value_of
from ._trees import format_path, rebuild_node, tangent_node, transform


def is_differentiable(x):
    """Float or complex arrays and scalars (traced or not); not ints, bools or objects."""
    v = value_of(x)
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.kind in "fc"
    return isinstance(v, (float, complex))


def trace_arguments(tape, args, argnums):
    """Replace the differentiable leaves of ``args[argnums]`` by traced inputs.

    Returns the new argument list and ``seen``: ``{id(leaf): (leaf, traced)}``.
    """
    seen = {}

    def leaf_fn(path, leaf):
        if not is_differentiable(leaf):
            _refuse_hidden_floats(path, leaf)
            return leaf
        hit = seen.get(id(leaf))
        if hit is None:
            hit = seen[id(leaf)] = (leaf, new_input(tape, leaf))
        return hit[1]

    new = list(args)
    for i in argnums:
        arg = args[i]
        if is_differentiable(arg):  # a bare array or float: no walk needed
            new[i] = leaf_fn((i,), arg)
            continue
        _check_argument(arg, i)
        new[i] = transform(arg, leaf_fn, rebuild_node, (i,))
    return new, seen


def _check_argument(x, i):
    if is_differentiable(x) or node_of(x) is not None:
        return
    v = value_of(x)
    if isinstance(v, (np.ndarray, np.generic, numbers.Number)):
        raise TypeError(
            f"argument {i} has dtype {np.result_type(v)}; only float and complex "
            f"values can be differentiated. Pass a float (e.g. {_as_float_hint(v)}) "
            "or leave it out of argnums"
        )
    raise TypeError(
        f"argument {i} is a {type(v).__name__}, and autodiff cannot see inside it. "
        "Make it a dataclass, register it with autodiff.extend.register_container "
        "(or traversal.register), or leave it out of argnums"
    )


def _as_float_hint(v):
    return "np.asarray(x, dtype=float)" if isinstance(v, np.ndarray) else f"{float(v)!r}"


def _refuse_hidden_floats(path, leaf):
    """An unregistered object visibly holding float arrays would lose its gradient."""
    inner = getattr(leaf, "__dict__", None)
    if inner and not callable(leaf) and any(map(_holds_floats, inner.values())):
        raise TypeError(
            f"{format_path(path)} is a {type(leaf).__name__} holding float arrays "
            "that autodiff cannot see inside; its gradient would be lost. Make it "
            "a dataclass or register it with autodiff.extend.register_container"
        )


def _holds_floats(v):
    return isinstance(v, np.ndarray) and v.dtype.kind in "fc"


def gradient_of(arg, i, seen, cts):
    """The gradient mirroring argument ``arg`` (number ``i``), given the tape's cotangents."""
    if is_differentiable(arg):
        hit = seen[id(arg)]
        return _materialise(cts[hit[1].index], arg, bare=True)
    emitted = set()

    def leaf_fn(path, leaf):
        hit = seen.get(id(leaf)) if is_differentiable(leaf) else None
        if hit is None or id(leaf) in emitted:
            return None
        emitted.add(id(leaf))
        return _materialise(cts[hit[1].index], leaf, bare=False)

    return transform(arg, leaf_fn, tangent_node, (i,))


def _materialise(ct, primal, bare):
    if type(ct) is Thunk:
        ct = ct()
    if ct is None or type(ct) is NoTangent:
        if not bare:
            return None
        ct = ZeroTangent()
    if type(ct) is ZeroTangent:
        return zeros_like_primal(primal)
    return _match_primal(ct, primal)


def zeros_like_primal(primal):
    v = value_of(primal)
    if isinstance(v, (float, complex)):
        return type(v)(0)
    return np.zeros(np.shape(v), np.result_type(v))


def _match_primal(ct, primal):
    if type(ct) is Traced:
        return ct
    v = value_of(primal)
    if isinstance(v, (float, complex)):
        return type(v)(ct)
    if isinstance(v, np.generic):
        return v.dtype.type(ct)
    ct = np.asarray(ct)
    return ct if ct.dtype == v.dtype else ct.astype(v.dtype)
