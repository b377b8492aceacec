"""Which scipy function handed a traced value to numpy: the error names it, and ours to use instead.

scipy's pure-Python functions (``scipy.special.logsumexp``, ``scipy.stats.norm.logpdf``,
``scipy.linalg.expm``, ...) convert their arguments with ``np.asarray`` or call numpy functions we have
no rule for.  ``autodiff.numpy._interop`` refuses both; when the code that did it is scipy's, it asks
:func:`refusal` here for an error naming the public scipy function the user called (the outermost
scipy frame of the innermost run of them, read from the stack) and its ``autodiff.scipy`` counterpart.
"""

import importlib
import sys

_OURS = ("special", "stats", "linalg", "signal", "integrate")  # autodiff.scipy's subpackages


def _subpackage(frame):
    """``special`` for a frame of ``scipy.special._logsumexp``; ``None`` for scipy's private ``scipy._lib``."""
    parts = frame.f_globals.get("__name__", "").split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "scipy" and not parts[1].startswith("_") else None


def _public(sub, name, obj=None):
    """``scipy.<sub>.<name>`` if scipy exports that name (and it is ``obj``, when given), else ``None``."""
    package = sys.modules.get(f"scipy.{sub}")
    found = getattr(package, name, None)
    return f"scipy.{sub}.{name}" if found is not None and (obj is None or found is obj) else None


def _method_name(sub, owner, method):
    """``scipy.stats.norm.logpdf`` from a distribution method (frozen ones too); ``None`` for private methods."""
    if method.startswith("_"):
        return None
    owner = getattr(owner, "dist", None) or getattr(owner, "_dist", None) or owner
    name = getattr(owner, "name", None)
    if not isinstance(name, str):
        name = type(owner).__name__.removesuffix("_gen").removesuffix("_frozen")
    family = _public(sub, name)
    return f"{family}.{method}" if family else None


def _wrapped_name(frame):
    """A decorator's wrapper names the scipy function it closes over (``scipy.linalg.cholesky``)."""
    for var in frame.f_code.co_freevars:
        fun = frame.f_locals.get(var)
        module = getattr(fun, "__module__", None) or ""
        parts = module.split(".")
        if callable(fun) and len(parts) > 1 and parts[0] == "scipy" and not parts[1].startswith("_"):
            name = _public(parts[1], getattr(fun, "__name__", ""))
            if name:
                return name
    return None


def _frame_name(frame):
    """The public name of the scipy function running in ``frame``, or ``None`` (a private helper)."""
    sub, code = _subpackage(frame), frame.f_code
    if sub is None:
        return _wrapped_name(frame)
    if "." in code.co_qualname and "self" in frame.f_locals:
        return _method_name(sub, frame.f_locals["self"], code.co_name)
    return _public(sub, code.co_name) or _wrapped_name(frame)


def scipy_name(frame):
    """The public scipy function the user called: the outermost named frame of the run of scipy frames
    starting at ``frame`` (scipy calls its own helpers; the user called the outermost)."""
    name = None
    while frame is not None and frame.f_globals.get("__name__", "").startswith("scipy."):
        name = _frame_name(frame) or name
        frame = frame.f_back
    return name


def counterpart(name):
    """``autodiff.scipy.special.logsumexp`` for ``scipy.special.logsumexp``, if we have it; else ``None``."""
    parts = name.split(".")
    if parts[1] not in _OURS:
        return None
    obj = importlib.import_module(f"autodiff.scipy.{parts[1]}")
    for attr in parts[2:]:
        obj = getattr(obj, attr, None)
    return "autodiff." + name if obj is not None else None


def refusal(frame, what, error=TypeError):
    """The error for a traced value that scipy code at ``frame`` ``what`` (e.g. "converts to a plain array").

    >>> import autodiff, numpy as np, scipy.special
    >>> autodiff.grad(lambda x: scipy.special.logsumexp(x))(np.zeros(2))
    Traceback (most recent call last):
    ...
    autodiff.DetachError: scipy.special.logsumexp was called on a traced value, but it converts \
its arguments to plain numpy arrays, which would detach them from differentiation. Use \
autodiff.scipy.special.logsumexp instead (import autodiff.scipy as asp): it is differentiable
    """
    name = scipy_name(frame)
    if name is None:
        module, qualname = frame.f_globals.get("__name__", "scipy"), frame.f_code.co_qualname
        return error(
            f"a scipy function ({module}.{qualname}) was called on a traced value, but it {what}. Use the "
            "functions of autodiff.scipy (import autodiff.scipy as asp), or write it with autodiff.numpy ops"
        )
    ours = counterpart(name)
    if ours is not None:
        return error(
            f"{name} was called on a traced value, but it {what}. Use {ours} instead (import autodiff.scipy as "
            "asp): it is differentiable"
        )
    return error(
        f"{name} was called on a traced value, but it {what}, and autodiff.scipy has no counterpart of it. "
        "Write it with the ops of autodiff.numpy and autodiff.scipy, or define a primitive with "
        "autodiff.extend.defvjp; autodiff.stop_gradient(x) passes a constant"
    )
