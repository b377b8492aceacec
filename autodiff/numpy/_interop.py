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


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    ours = _routes.get(ufunc)
    if ours is None or method != "__call__" or kwargs.get("out") is not None:
        how = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise _refuse(how, "autodiff has no rule for it in this form")
    return ours(*inputs, **kwargs)


def _array_function(self, func, types, args, kwargs):
    ours = _routes.get(func)
    if ours is None:
        raise _refuse(func.__name__, "autodiff has no rule for it")
    return ours(*args, **kwargs)


def _array(self, dtype=None, copy=None):
    raise TypeError(
        "numpy tried to convert a traced value to a plain array (np.asarray / "
        "np.array), which would detach it from differentiation. Use the ops in "
        "autodiff.numpy, or autodiff.stop_gradient(x) for a constant copy"
    )


def install():
    Traced.__array_ufunc__ = _array_ufunc
    Traced.__array_function__ = _array_function
    Traced.__array__ = _array
    Traced.__array_priority__ = 1000
