"""The checks behind ``grad``'s and ``vjp``'s clear errors: what they refuse to differentiate, and why.

Each raises before a wrong gradient could be returned, naming the transform, the place (an argument, a key
path, an output leaf), what was expected and what was given, and the fix.  The reference files call them by
name; a reader learning how a gradient is computed can skip this one.
"""

import numbers

import numpy as np

from ._batching import example_shape
from ._calls import describe
from ._paths import format_path
from ._tangents import ZERO, is_inexact
from ._traced import Traced, value_of
from ._trees import leaves


def check_cotangent(path, ct, value, name="vjp pullback"):
    """Refuse a cotangent for the output leaf ``value`` (at key ``path``) of another shape or dtype.

    >>> check_cotangent(("loss",), np.ones(2), np.ones(3))
    Traceback (most recent call last):
    ...
    ValueError: vjp pullback: cotangent at output['loss'] has shape (2,) and dtype float64, but the output has shape
    (3,) and dtype float64; pass a cotangent of the output's exact shape and dtype
    """
    if ct is None:
        return
    want_shape, got_shape = example_shape(value), example_shape(ct)
    value, ct = value_of(value), value_of(ct)
    want, got = np.result_type(value), np.result_type(ct)
    scalar_ok = isinstance(ct, (float, int)) and want_shape == () and is_inexact(want)
    if want_shape != got_shape or (want != got and not scalar_ok):
        where = f" at {at_output(path)}" if path else ""
        raise ValueError(
            f"{name}: cotangent{where} has shape {got_shape} and dtype {got}, "
            f"but the output has shape {want_shape} and dtype {want}; pass a "
            "cotangent of the output's exact shape and dtype"
        )


def check_tangent(prim, t, ans):
    """Refuse the tangent ``t`` a JVP rule of ``prim`` returned for its output ``ans``, if it has another shape or
    dtype (one example's shape under ``vmap``): the ops after it would broadcast it silently (a (1,) tangent
    for a (3,) output sums to a third of the truth).  A tuple output takes one tangent per part
    (``ZeroTangent()`` for a part that does not move); a Python scalar fits a 0-d output of a float kind, and a
    Python ``0`` or ``0.0`` ("no derivative through this argument") any output: it is returned as ``ZeroTangent()``,
    so that no scalar stands for a tangent of another shape.  Returns the tangent to use.

    >>> from autodiff.extend import primitive
    >>> check_tangent(primitive(np.negative, "neg"), np.ones(1), np.ones(3))
    Traceback (most recent call last):
    ...
    ValueError: neg: its JVP returned a tangent of shape (1,), but the output has shape (3,); a JVP must return a
    tangent of its output's exact shape and dtype (broadcast a smaller one up with autodiff.numpy.broadcast_to, cast
    with .astype), or ZeroTangent() where the output does not move
    """
    if type(ans) is tuple:
        parts = t if type(t) in (tuple, list) else None
        if parts is None or len(parts) != len(ans):
            raise ValueError(
                f"{prim.__name__}: its JVP returned {describe(value_of(t))} for an output of {len(ans)} parts; a JVP "
                "of a primitive with several outputs returns a tuple with one tangent per part (ZeroTangent() for "
                "a part that does not move)"
            )
        return tuple(_checked_part(prim, tk, ak, f" for output part {k}") for k, (tk, ak) in enumerate(zip(parts, ans)))
    return _checked_part(prim, t, ans, "")


_ARRAYS = (Traced, np.ndarray, float, int, complex)  # and numpy scalars (np.generic's subclasses)


def _is_value(x):
    return type(x) in _ARRAYS or isinstance(x, np.generic)


def _checked_part(prim, t, ans, which):
    if _nothing_to_compare(t, ans):
        return t
    if type(t) in (float, int) and t == 0:
        return ZERO
    wrong = _misfit(t, ans)
    if wrong:
        raise ValueError(f"{prim.__name__}: its JVP returned a tangent{which} {wrong}")
    return t


def _nothing_to_compare(t, ans):
    """The usual case (arrays of one shape and dtype), checked first; or a symbolic zero, a thunk."""
    if type(t) is np.ndarray and type(ans) is np.ndarray and t.shape == ans.shape and t.dtype == ans.dtype:
        return True
    return not (_is_value(t) and _is_value(ans))


def _misfit(t, ans):
    """How the tangent value ``t`` misfits the output ``ans`` (the end of the error's sentence), or ``""``."""
    got_shape, want_shape = example_shape(t), example_shape(ans)
    got, want = np.result_type(value_of(t)), np.result_type(value_of(ans))
    if not is_inexact(want):
        return (f"of dtype {got}, but the output has dtype {want}, which carries no tangent; return "
                "autodiff.extend.ZeroTangent() for it")
    if got_shape != want_shape:
        return f"of shape {got_shape}, but the output has shape {want_shape}; {_EXACT}"
    if got != want and not _scalar_fits(t, got, want, want_shape):
        return f"of dtype {got}, but the output has dtype {want}; {_EXACT}"
    return ""


def _scalar_fits(t, got, want, want_shape):
    """A Python scalar fits a 0-d output of a float kind (a complex one only a complex output)."""
    python_scalar = type(value_of(t)) in (float, int, complex)
    return python_scalar and want_shape == () and (want.kind == "c" or got.kind != "c")


_EXACT = ("a JVP must return a tangent of its output's exact shape and dtype (broadcast a smaller one up with "
          "autodiff.numpy.broadcast_to, cast with .astype), or ZeroTangent() where the output does not move")


def at_output(path):
    """An output leaf's key path as ``output['loss'][0]``."""
    return "output" + "".join(f"[{k!r}]" for k in path)


def refuse_argument(x, i, name=None):
    """Refuse argument ``i`` of ``grad``'s ``argnums``: neither a float or complex value nor a container.

    ``name``, when given, is the transform's, put first in the message.

    >>> refuse_argument(3, 0)
    Traceback (most recent call last):
    ...
    TypeError: argument 0 has dtype int64; only float and complex values can be differentiated. Pass a float (e.g.
    3.0) or leave it out of argnums
    """
    v, who = value_of(x), f"{name}: " if name else ""
    if isinstance(v, (np.ndarray, np.generic, numbers.Number)):
        raise TypeError(
            f"{who}argument {i} has dtype {np.result_type(v)}; only float and complex "
            f"values can be differentiated. Pass a float (e.g. {_as_float_hint(v)}) "
            "or leave it out of argnums"
        )
    raise TypeError(
        f"{who}argument {i} is a {type(v).__name__}, and autodiff cannot see inside it. "
        "Make it a dataclass, register it with autodiff.extend.register_container "
        "(or traversal.register), or leave it out of argnums"
    )


def refuse_complex_inputs(name, paths_and_leaves, instead):
    """Refuse a complex leaf where transform ``name`` needs real inputs: the derivative of a non-holomorphic
    ``f`` at a complex ``z`` moves with ``conj(v)`` too, so no complex matrix holds it (docs/complex.md).

    >>> refuse_complex_inputs("jacfwd", [((0,), np.ones(2, complex))], "Use autodiff.jacrev.")
    Traceback (most recent call last):
    ...
    TypeError: jacfwd: arg 0 has dtype complex128, but jacfwd needs real inputs: at a complex input the
    derivative of a non-holomorphic f is not a complex matrix, and the imaginary directions would be lost.
    Use autodiff.jacrev.
    """
    for path, leaf in paths_and_leaves:
        dtype = np.result_type(value_of(leaf))
        if dtype.kind == "c":
            raise TypeError(
                f"{name}: {format_path(path)} has dtype {dtype}, but {name} needs real inputs: at a complex "
                "input the derivative of a non-holomorphic f is not a complex matrix, and the imaginary "
                f"directions would be lost. {instead}"
            )


def refuse_real_inputs(name, paths_and_leaves):
    """Refuse a real leaf where ``name(..., holomorphic=True)`` needs complex inputs, as JAX does: the complex
    derivative ``f'(z)`` is defined at complex points only.

    >>> refuse_real_inputs("jacfwd", [((0,), np.ones(2))])
    Traceback (most recent call last):
    ...
    TypeError: jacfwd(..., holomorphic=True): arg 0 has dtype float64, but a holomorphic derivative needs complex
    inputs; pass it as complex (x.astype(complex), or x + 0j), or drop holomorphic=True for a real function
    """
    for path, leaf in paths_and_leaves:
        dtype = np.result_type(value_of(leaf))
        if dtype.kind != "c":
            raise TypeError(
                f"{name}(..., holomorphic=True): {format_path(path)} has dtype {dtype}, but a holomorphic "
                "derivative needs complex inputs; pass it as complex (x.astype(complex), or x + 0j), or drop "
                "holomorphic=True for a real function"
            )


def refuse_real_output(name, where, value):
    """Refuse the real output leaf ``value`` (``where`` names it) of ``name(..., holomorphic=True)``: a
    holomorphic function maps complex to complex, as JAX requires too.

    >>> refuse_real_output("jacobian", "output 0", np.ones(2))
    Traceback (most recent call last):
    ...
    TypeError: jacobian(..., holomorphic=True): output 0 has dtype float64, but a holomorphic function has complex
    outputs; drop holomorphic=True (a real function of complex inputs is differentiated under docs/complex.md's
    convention by grad and jacobian), or return a complex value
    """
    dtype = np.result_type(value_of(value))
    if dtype.kind != "c":
        raise TypeError(
            f"{name}(..., holomorphic=True): {where} has dtype {dtype}, but a holomorphic function has complex "
            "outputs; drop holomorphic=True (a real function of complex inputs is differentiated under "
            "docs/complex.md's convention by grad and jacobian), or return a complex value"
        )


def _as_float_hint(v):
    return "np.asarray(x, dtype=float)" if isinstance(v, np.ndarray) else f"{float(v)!r}"


def refuse_hidden_floats(arg, i, leaf):
    """Refuse a leaf of argument ``i``: an unregistered object visibly holding float arrays would lose its
    gradient."""
    if not type(leaf).__dictoffset__:  # ints, strings, None, ufuncs...: no attributes to hide arrays in
        return
    inner = getattr(leaf, "__dict__", None)
    if inner and not callable(leaf) and any(map(_holds_floats, inner.values())):
        path = next(p for p, x in leaves(arg, (i,)) if x is leaf)
        raise TypeError(
            f"{format_path(path)} is a {type(leaf).__name__} holding float arrays "
            "that autodiff cannot see inside; its gradient would be lost. Make it "
            "a dataclass or register it with autodiff.extend.register_container"
        )


def _holds_floats(v):
    return isinstance(v, np.ndarray) and is_inexact(v.dtype)


def leaked(prim, tape):
    """The error for a traced value of a finished differentiation (``tape``) reaching ``prim``."""
    return RuntimeError(
        f"{prim.__name__}: got a traced value from a differentiation (level "
        f"{tape.level}) that has already finished. A traced value escaped its "
        "grad/vjp call, e.g. through a global, a closure or `has_aux` misuse. "
        "Return it from the differentiated function instead of storing it."
    )
