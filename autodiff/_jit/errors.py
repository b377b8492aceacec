"""What a jit says when Python asks for a staged value's data: the user's line, or a read by the library.

While ``autodiff.jit`` traces, a value stands for data that differs per call, so Python may see its shape and
dtype but never its data.  ``bool(x)``, ``float(x)``, ``int(x)``, ``x.item()``, ``np.asarray(x)`` in the user's
code raise :class:`ConcretizationError` naming the line (JAX's ``ConcretizationTypeError``).  The same read in
the library's code (a rule's fast path taken when no entry is 0) is noted on the staging level instead: the
program would bake the branch taken in, so that signature runs without jit (:mod:`autodiff._jit.jit`).
"""

import os
import sys

LIBRARY = ("autodiff", "traversal", "layers", "optimisers")  # packages whose reads are the library's, not the user's
_PASSING = ("autodiff._jit", "autodiff.numpy._methods", "autodiff.numpy._interop", "autodiff.extend", "numpy")


class ConcretizationError(TypeError):
    """Python asked for the data of a value ``autodiff.jit`` is tracing (``if x > 0``, ``float(x)``).

    Raised when the asking code is the user's (its module is outside the library); docs/jit.md section 2 shows
    it, run as a user's script (a docstring example here would run in the library's own namespace).
    """


ConcretizationError.__module__ = "autodiff"  # where a user catches it


def module_of(frame):
    return frame.f_globals.get("__name__", "")


def in_packages(name, packages):
    return any(name == p or name.startswith(p + ".") for p in packages)


def asking_frame(frame):
    """The frame that asked for the data: the first past the methods and numpy functions that pass it on."""
    while frame is not None and in_packages(module_of(frame), _PASSING):
        frame = frame.f_back
    return frame


def user_frame(frame):
    """The first frame outside the library (the user's line), or ``None``."""
    while frame is not None and in_packages(module_of(frame), LIBRARY + ("numpy",)):
        frame = frame.f_back
    return frame


def where(frame):
    """``file.py:12 (in f)`` for a frame."""
    if frame is None:
        return "an unknown line"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno} (in {frame.f_code.co_name})"


def who(frame):
    """``autodiff.numpy._elementwise.power_vjp``: the library function a frame runs."""
    return f"{module_of(frame)}.{frame.f_code.co_name}" if frame is not None else "an unknown function"


def concretization_error(what):
    """The error for ``what`` (``bool()``, ``float()``, ``x.item()``) of a staged value in the user's code."""
    line = where(user_frame(sys._getframe(1)))
    return ConcretizationError(
        f"jit: {what} of a traced value at {line}: while jit traces, a value stands for every call's data, so "
        "Python sees its shape and dtype, not its data, and cannot branch on it or turn it into a number. "
        "Choose per element with anp.where(condition, a, b); if the value is a setting (a flag, a count), mark "
        "its argument static with jit(f, static_argnums=...) or static_argnames=...; or call the function "
        "without jit"
    )
