"""Plain numpy called on traced values: route to our rules, or refuse clearly.

``np.sin(traced)`` reaches ``__array_ufunc__`` and ``np.sum(traced)`` reaches
``__array_function__``; both find the op of the same name in
``autodiff.numpy``.  Anything else raises a ``TypeError`` naming the function,
never an object array or a silently detached value.
"""

import numpy as np

from ..extend import Traced

_routes = {}  # numpy callable -> our op


def register_routes(namespace, module=np):
    """Route every function or ufunc of ``module`` whose name ``namespace`` defines too."""
    for name, ours in namespace.items():
        theirs = getattr(module, name, None)
        if callable(theirs) and not name.startswith("_") and theirs is not ours:
            _routes[theirs] = ours


def _refuse(name, why):
    return TypeError(
        f"numpy.{name} was called on a traced value, but {why}. Write it with "
        "the ops of autodiff.numpy (import autodiff.numpy as anp), or define a "
        "primitive and its pullback with autodiff.extend.defvjp"
    )


class DetachError(TypeError):
    """A traced value would become a plain one (``float``, ``np.asarray``, ``a[i] = x``, ``.item()``).

    numpy reports ``a[i] = x`` into a plain array as its own ``ValueError`` ("setting an array element
    with a sequence"), raised from this error, so the traceback shows both.
    """


_BUILD = ("build a new array from traced pieces with anp.stack / anp.concatenate, or anp.where(mask, new, x) "
          "for a masked update")


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    ours = _routes.get(ufunc)
    if kwargs.get("out") is not None:
        raise DetachError(
            f"numpy.{ufunc.__name__}(..., out=...) would write a traced value into an existing array in "
            "place (this is what `a += x` does to a plain array `a`), which cannot be differentiated. "
            f"Write `a = a + x` instead (the ops of autodiff.numpy return new arrays), or {_BUILD}"
        )
    if ours is None or method != "__call__":
        how = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise _refuse(how, "autodiff has no rule for it in this form")
    return ours(*inputs, **kwargs)


def _array_function(self, func, types, args, kwargs):
    ours = _routes.get(func)
    if ours is None:
        raise _refuse(func.__name__, "autodiff has no rule for it")
    return ours(*args, **kwargs)


def _array(self, dtype=None, copy=None):
    raise DetachError(
        "numpy tried to convert a traced value to a plain array (np.asarray, np.array, or `a[...] = x` "
        "into a plain array), which would detach it from differentiation. Use the ops in autodiff.numpy "
        f"({_BUILD}), or autodiff.stop_gradient(x) if you want a constant"
    )


def install():
    Traced.__array_ufunc__ = _array_ufunc
    Traced.__array_function__ = _array_function
    Traced.__array__ = _array
    Traced.__array_priority__ = 1000
