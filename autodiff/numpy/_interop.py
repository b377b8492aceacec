"""Plain numpy called on traced values: route to our rules, or refuse clearly.

``np.sin(traced)`` reaches ``__array_ufunc__`` and ``np.sum(traced)`` reaches
``__array_function__``; both find the op of the same name in
``autodiff.numpy``.  Anything else raises a ``TypeError`` naming the function,
never an object array or a silently detached value.  When the code that handed
the traced value to numpy is another library's (scipy's pure-Python functions
call ``np.asarray``), a module of ours for that library names its function in
the error, and the counterpart to use.
"""

import importlib
import sys

import numpy as np

from .._batching import batch_depth
from .._traced import (
    DetachError,  # noqa: F401  (raised here; defined in the core, which surfaces it)
    staging_of,
)
from .._traced import value_of as strip_all
from ..extend import Traced, value_of

_routes = {}  # numpy callable -> our op

# library -> our module whose refusal(frame, what, error) names that library's function (imported only then)
_CALLER_NAMERS = {"scipy": "autodiff.scipy._callers"}
# a module of ufuncs -> ours of the same names, imported on first use of one (it registers their routes)
_LAZY_ROUTES = {"scipy.special": "autodiff.scipy.special"}


def register_routes(namespace, module=np):
    """Route every function or ufunc of ``module`` whose name ``namespace`` defines too."""
    for name, ours in namespace.items():
        theirs = getattr(module, name, None)
        if callable(theirs) and not name.startswith("_") and theirs is not ours:
            _routes[theirs] = ours


def _refuse(name, why):
    return TypeError(
        f"{name} was called on a traced value, but {why}. Write it with "
        "the ops of autodiff.numpy (import autodiff.numpy as anp), or define a "
        "primitive and its pullback with autodiff.extend.defvjp"
    )


_BUILD = ("build a new array from traced pieces with anp.stack / anp.concatenate, or anp.where(mask, new, x) "
          "for a masked update")


def _home(ufunc):
    """The module users know ``ufunc`` from: ``numpy``, or one of ``_LAZY_ROUTES`` (scipy's carry no module)."""
    for module in _LAZY_ROUTES:
        if getattr(sys.modules.get(module), ufunc.__name__, None) is ufunc:
            return module
    return "numpy"


def _lazy_route(ufunc):
    """Our op for a ufunc of a ``_LAZY_ROUTES`` module, importing ours first (``None`` for any other)."""
    ours_module = _LAZY_ROUTES.get(_home(ufunc))
    if ours_module is None:
        return None
    importlib.import_module(ours_module)
    return _routes.get(ufunc)


def _caller_refusal(what, error=TypeError):
    """The error naming the library function that handed a traced value to numpy, or ``None`` if the caller
    is not a library we have a namer for (user code gets the plain refusal)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(("numpy.", __name__)):
        frame = frame.f_back
    top = frame.f_globals.get("__name__", "").partition(".")[0] if frame is not None else ""
    namer = _CALLER_NAMERS.get(top)
    return importlib.import_module(namer).refusal(frame, what, error) if namer else None


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    ours = _routes.get(ufunc) or _lazy_route(ufunc)
    if kwargs.get("out") is not None:
        raise DetachError(
            f"{_home(ufunc)}.{ufunc.__name__}(..., out=...) would write a traced value into an existing array in "
            "place (this is what `a += x` does to a plain array `a`), which cannot be differentiated. "
            f"Write `a = a + x` instead (the ops of autodiff.numpy return new arrays), or {_BUILD}"
        )
    if ufunc is np.add and method == "at":
        raise DetachError("numpy.add.at(a, indices, values) adds into `a` in place, which a traced value cannot take "
                          "part in; write `a = anp.add_at(a, indices, values)`, which returns the sum as a new array")
    if ours is None or method != "__call__":
        how = f"{_home(ufunc)}.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise _caller_refusal(f"calls {how}, which autodiff has no rule for") or _refuse(
            how, "autodiff has no rule for it in this form")
    return ours(*inputs, **kwargs)


def _array_function(self, func, types, args, kwargs):
    ours = _routes.get(func)
    if ours is None:
        raise _caller_refusal(f"calls numpy.{func.__name__}, which autodiff has no rule for") or _refuse(
            f"numpy.{func.__name__}", "autodiff has no rule for it")
    return ours(*args, **kwargs)


def _array(self, dtype=None, copy=None):
    staging = staging_of(self)
    if staging is not None and (self.tape is staging or (_to_int(dtype) and not batch_depth(self))):
        value = staging.concrete(self, "np.asarray()")  # jit's: the user's line raises, the library's is noted
        return value if dtype is None else value.astype(dtype)
    if dtype is not None and np.dtype(dtype).kind in "biu":  # np.int64(x): a step function, as x.astype(int)
        if value_of(self) is strip_all(self):
            return strip_all(self).astype(dtype)
        raise DetachError(
            f"numpy converted a value batched by vmap to a plain {np.dtype(dtype)} array (np.{np.dtype(dtype)}(x), "
            f"np.asarray(x, dtype=...)), which would mix every example into one array; write "
            f"x.astype(np.{np.dtype(dtype)}) or anp.astype(x, ...), which stays batched")
    what = "converts its arguments to plain numpy arrays, which would detach them from differentiation"
    raise _caller_refusal(what, DetachError) or DetachError(
        "numpy tried to convert a traced value to a plain array (np.asarray, np.array, or `a[...] = x` "
        "into a plain array), which would detach it from differentiation. Use the ops in autodiff.numpy "
        f"({_BUILD}), or autodiff.stop_gradient(x) if you want a constant" + _index_tricks_hint()
    )


def _to_int(dtype):
    return dtype is not None and np.dtype(dtype).kind in "biu"


def _index_tricks_hint():
    """A pointer to ``anp.r_`` / ``anp.c_`` when numpy's own ``np.r_[...]`` / ``np.c_[...]`` met the value."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("numpy"):
        if frame.f_globals["__name__"] == "numpy.lib._index_tricks_impl":
            return ". numpy's np.r_[...] and np.c_[...] cannot see traced values: write anp.r_[...] / anp.c_[...]"
        frame = frame.f_back
    return ""


def install():
    Traced.__array_ufunc__ = _array_ufunc
    Traced.__array_function__ = _array_function
    Traced.__array__ = _array
    Traced.__array_priority__ = 1000
