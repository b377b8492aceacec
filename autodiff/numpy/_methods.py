"""Array behaviour of traced values: operators, properties and methods.

Installed on ``Traced`` by ``autodiff.numpy``, so the core engine knows
nothing about arrays.  Comparisons are not differentiable and return plain
boolean arrays, so Python control flow on traced values works.
"""

import operator

import numpy as np

from .._batching import Batch
from .._traced import staging_kinds
from .._traced import value_of as strip_all
from ..extend import Traced, value_of
from . import _binary as choose
from . import _broadcast, _complex, _construction, _indexing, _interop, _linalg, _remainder
from . import _elementwise as E
from . import _reductions as R
from . import _shape as S
from ._interop import DetachError


def _binary(f):
    return lambda self, other: f(self, other)


def _flip(f):
    return lambda self, other: f(other, self)


def _method(f):
    return lambda self, *args, **kwargs: f(self, *args, **kwargs)


def _compare(op, name):
    def compare(self, other):
        a, b = value_of(self), value_of(other)  # under vmap each example compares: the result stays batched
        if type(a) is Traced or type(b) is Traced:  # batched (vmap) or staged (jit): a primitive keeps it so
            from ._nondiff import NONDIFF

            return NONDIFF[name](a, b)
        return op(a, b)

    return compare


def _logical(name, flip=False):
    """``&``, ``|``, ``^`` of masks (plain results; batched under vmap, as comparisons are)."""

    def combine(self, other):
        from ._nondiff import NONDIFF

        a, b = (other, self) if flip else (self, other)
        return NONDIFF[name](a, b)

    return combine


def _nondiff(name):
    """The method of numpy's that is ``autodiff.numpy``'s function ``name`` of the array (``x.any(axis)`` is
    ``anp.any(x, axis)``): numpy's signature, a plain result (batched per example under vmap, as the function's)."""

    def method(self, *args, **kwargs):
        from ._nondiff import NONDIFF

        return NONDIFF[name](self, *args, **kwargs)

    return method


def _invert(self):
    from ._nondiff import NONDIFF

    return NONDIFF["invert"](self)


def _is_batch(x):
    return type(x) is Traced and type(x.tape) is Batch


def _one_value(name, convert):
    def method(self):
        v = value_of(self)
        if _is_batch(v):
            raise TypeError(
                f"{name}() of a value batched by vmap: it differs between examples, so Python cannot branch on it "
                "or read it as one number; use anp.where(condition, a, b) for a per-example choice, or compute "
                "it outside vmap"
            )
        if type(v) is Traced:  # staged by a jit: its level raises, naming the line, or notes the library's read
            return convert(v.tape.concrete(v, f"{name}()"))
        return convert(v)

    return method


def _staged(x):
    """The jit level ``x`` is staged at, when it is the highest level of ``x`` (else ``None``)."""
    return x.tape if type(x) is Traced and type(x.tape) in staging_kinds else None


def _len(self):
    v = strip_all(self)
    if type(v) is tuple:
        return len(v)
    shape = _broadcast.shape_of(self)
    if not shape:
        raise TypeError("len() of a 0-d traced value")
    return shape[0]


def _getitem(self, index):
    if isinstance(strip_all(self), tuple):
        return _indexing.tuple_item(self, index)
    return _indexing.getitem(self, _plain_index(index))


def _plain_index(index):
    if type(index) is tuple:
        return tuple(value_of(i) for i in index)
    return value_of(index)


def _iter(self):
    return (self[i] for i in range(len(self)))


def _float(self):
    if _staged(self) is not None:
        return float(self.tape.concrete(self, "float()"))
    raise DetachError(
        "float() of a traced value (also called by numpy for `a[i] = x` into a plain array) would "
        "detach it from differentiation. Keep it as an array (e.g. `x.sum()`) and "
        f"{_interop._BUILD}; or use autodiff.stop_gradient(x) if you really want a constant"
    )


def _to_complex(self):
    if _staged(self) is not None:
        return complex(self.tape.concrete(self, "complex()"))
    return _float(self)


def _detaching(name):
    def refuse(self, *args, **kwargs):
        if _staged(self) is not None:
            return getattr(self.tape.concrete(self, f"x.{name}()"), name)(*args, **kwargs)
        raise DetachError(
            f"x.{name}() on a traced value would give plain Python numbers, detached from "
            f"differentiation. Keep it as an array; call autodiff.stop_gradient(x).{name}() if you "
            "want constants (e.g. for logging)"
        )

    return refuse


def _setitem(self, index, value):
    raise TypeError(
        "x[...] = value: a traced value cannot be changed in place (the tape has already recorded it). "
        "Build a new array instead: anp.where(mask, value, x), anp.concatenate([x[:i], value, x[i + 1:]]), "
        "or anp.stack of the pieces"
    )


def _reshape(self, *shape, order="C"):
    return S.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)


def _transpose(self, *axes):
    return S.transpose(self, (axes[0] if len(axes) == 1 else axes) or None)


METHODS = {
    "__add__": _binary(E.add), "__radd__": _flip(E.add),
    "__sub__": _binary(E.subtract), "__rsub__": _flip(E.subtract),
    "__mul__": _binary(E.multiply), "__rmul__": _flip(E.multiply),
    "__truediv__": _binary(E.divide), "__rtruediv__": _flip(E.divide),
    "__pow__": _binary(E.power), "__rpow__": _flip(E.power),
    "__mod__": _binary(_remainder.remainder), "__rmod__": _flip(_remainder.remainder),
    "__matmul__": _binary(_linalg.matmul), "__rmatmul__": _flip(_linalg.matmul),
    "__neg__": _method(E.negative), "__abs__": _method(E.absolute), "__pos__": lambda self: self,
    "__lt__": _compare(operator.lt, "less"), "__le__": _compare(operator.le, "less_equal"),
    "__gt__": _compare(operator.gt, "greater"), "__ge__": _compare(operator.ge, "greater_equal"),
    "__eq__": _compare(np.equal, "equal"), "__ne__": _compare(np.not_equal, "not_equal"),
    "__and__": _logical("bitwise_and"), "__rand__": _logical("bitwise_and", True),
    "__or__": _logical("bitwise_or"), "__ror__": _logical("bitwise_or", True),
    "__xor__": _logical("bitwise_xor"), "__rxor__": _logical("bitwise_xor", True), "__invert__": _invert,
    "__getitem__": _getitem, "__setitem__": _setitem, "__iter__": _iter,
    "item": _detaching("item"), "tolist": _detaching("tolist"),
    "__len__": _len,
    "__bool__": _one_value("bool", bool),
    "__float__": _float, "__complex__": _to_complex,
    "__int__": _one_value("int", int),
    "__index__": _one_value("operator.index", operator.index),  # range(n), a[n], a shape: ints have no derivative
    "__hash__": None,
    "shape": property(_broadcast.shape_of),
    "dtype": property(_broadcast.dtype_of),
    "ndim": property(lambda self: len(_broadcast.shape_of(self))),
    "size": property(lambda self: int(np.prod(_broadcast.shape_of(self)))),
    "T": property(lambda self: S.transpose(self)),
    "sum": _method(R.sum), "mean": _method(R.mean), "dot": _method(_linalg.dot),
    "prod": _method(R.prod), "max": _method(R.max), "min": _method(R.min), "var": _method(R.var),
    "std": _method(R.std), "cumsum": _method(R.cumsum), "cumprod": _method(R.cumprod),
    "reshape": _reshape, "transpose": _transpose, "ravel": _method(S.ravel),
    "flatten": _method(S.ravel), "squeeze": _method(S.squeeze), "swapaxes": _method(S.swapaxes),
    "astype": lambda self, dtype, **kwargs: _construction.astype(self, dtype),  # to int: plain, no derivative
    "clip": lambda self, a_min=None, a_max=None: choose.clip(self, a_min, a_max),
    "any": _nondiff("any"), "all": _nondiff("all"),
    "conj": _method(_complex.conj), "conjugate": _method(_complex.conj),
    "real": property(_complex.real), "imag": property(_complex.imag),
    "diagonal": _method(_linalg.diagonal), "trace": _method(_linalg.trace),
}


def install():
    for name, value in METHODS.items():
        setattr(Traced, name, value)
