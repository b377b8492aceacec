"""What ``grad`` and the transforms built on it accept as the function's output: one real scalar (a complex one
for ``holomorphic_grad``), the first of an ``(out, aux)`` pair with ``has_aux``.  Anything else raises before a
wrong gradient could be returned, naming the transform and saying what to do; the other checks behind the
transforms' errors are in :mod:`autodiff._checks`.
"""

import numpy as np

from ._batching import example_shape
from ._calls import describe
from ._checks import refuse_real_output
from ._traced import value_of


def check_scalar_output(value, name="grad", has_aux=False, holomorphic=False):
    """Refuse a ``grad`` output that is not a real scalar (under ``vmap``, one example's shape is read).

    ``name`` is the transform's, for the message; ``has_aux`` says whether ``value`` is the first of a pair;
    ``holomorphic`` asks for a complex scalar instead (a holomorphic function maps complex to complex).

    >>> check_scalar_output(np.ones(3))
    Traceback (most recent call last):
    ...
    TypeError: grad: the function must return a scalar, but it returned an array of shape (3,). Reduce it to a
    scalar (e.g. `.sum()`), or use autodiff.jacobian / autodiff.vjp for non-scalar outputs
    >>> check_scalar_output((1.0, "note"), "hvp")
    Traceback (most recent call last):
    ...
    TypeError: hvp: f returned a tuple of 2; the function must return a scalar (did you mean has_aux=True,
    returning (loss, aux)?)
    """
    refuse_sequence_output(value, name, has_aux)
    plain = value_of(value)
    scalar = isinstance(plain, (float, int, np.generic)) or (type(plain) is np.ndarray and not example_shape(value))
    if not scalar:
        raise TypeError(
            f"{name}: the function must return a scalar, but it returned "
            f"{describe(plain, example_shape(value))}. Reduce it to a scalar (e.g. `.sum()`), or use "
            "autodiff.jacobian / autodiff.vjp for non-scalar outputs"
        )
    if holomorphic:
        refuse_real_output(name, "the output", plain)
    elif type(plain) is not float and _dtype(plain).kind == "c":
        raise TypeError(
            f"{name}: the function returned a complex scalar; {name} needs a real one. "
            "Take `.real` or abs(...) of it, or use autodiff.vjp with a complex cotangent"
        )


def refuse_sequence_output(value, name, has_aux=False):
    """Refuse a tuple or list where a scalar loss belongs: most often an ``(loss, aux)`` pair without
    ``has_aux`` (reading it as an array would fail later, far from the cause)."""
    if isinstance(value, (tuple, list)):
        hint = "" if has_aux else " (did you mean has_aux=True, returning (loss, aux)?)"
        raise TypeError(
            f"{name}: f returned a {type(value).__name__} of {len(value)}; the function must return a scalar{hint}"
        )


def scalar_valued(f, has_aux, name, holomorphic=False):
    """``f``, checked to return a real scalar (the first of its ``(out, aux)`` pair with ``has_aux``; a complex
    one with ``holomorphic``); a bad return raises naming the transform ``name`` (``grad`` inside it would name
    itself).

    >>> scalar_valued(lambda x: (x, 1), False, "hessian")(2.0)
    Traceback (most recent call last):
    ...
    TypeError: hessian: f returned a tuple of 2; the function must return a scalar (did you mean has_aux=True,
    returning (loss, aux)?)
    """

    def f_scalar(*args, **kwargs):
        result = f(*args, **kwargs)
        check_scalar_output(result[0] if has_aux else result, name, has_aux, holomorphic)
        return result

    return f_scalar


def _dtype(value):
    """The dtype of a scalar output: read off numpy scalars and 0-d arrays, worked out for the rest."""
    dtype = getattr(value, "dtype", None)
    return dtype if dtype is not None else np.result_type(value)
