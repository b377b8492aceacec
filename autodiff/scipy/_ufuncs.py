"""Primitives from scipy's ufuncs (which carry no ``__module__``), named for pickling and reading, and
their rules from one partial derivative per argument.

scipy's ufuncs do not always follow numpy's promotion (``gammainc(1.7, float32)`` is float64), so the
result is cast to the floating dtype numpy's rules give the arguments: float32 stays float32.
"""

import numpy as np

from ..extend import defbatch, defjvp, defvjp, primitive
from ..numpy import multiply
from ..numpy._batch_helpers import elementwise
from ..numpy._broadcast import broadcast_as, unbroadcast
from ._real import refuse_complex


def _promoted(out, args):
    dtype = np.result_type(*args)
    if dtype.kind != "f" or np.result_type(out) == dtype:
        return out
    return np.asarray(out).astype(dtype)[()]


def ufunc_primitive(ufunc, name, module="autodiff.scipy.special"):
    """A primitive calling ``ufunc``; ``module.name`` is where users find it (and pickle finds it).

    Complex arguments are refused, naming the function (scipy's forwards accept some, but the rules here
    are derivatives along the real line).
    """
    qualified = f"{module}.{name}"

    def fun(*args, **kwargs):
        refuse_complex(qualified, *args)
        return _promoted(ufunc(*args, **kwargs), args)

    fun.__name__ = fun.__qualname__ = name
    fun.__module__ = module
    fun.__doc__ = (ufunc.__doc__ or "").strip().split("\n\n")[0]
    prim = primitive(fun, name)
    defbatch(prim, elementwise(prim))  # a ufunc broadcasts: the batch axis is one more leading axis
    return prim


def defpartials(prim, *partials):
    """Register ``prim``'s VJP and JVP from its partial derivatives ``partials[i](ans, *args)``.

    ``prim`` is elementwise and broadcasts its arguments: the pullback of argument ``i`` is
    ``g * partials[i]`` summed back to the argument's shape, its pushforward ``t * partials[i]`` broadcast
    to the output's.  Written with differentiable ops, each partial serves every order in both modes.
    ``None`` marks an argument that is never differentiated (an integer order).
    """
    defvjp(prim, *[None if d is None else _pullback(d, i) for i, d in enumerate(partials)])
    defjvp(prim, *[None if d is None else _pushforward(d) for d in partials])


def _pullback(partial, i):
    return lambda g, ans, *args: unbroadcast(multiply(g, partial(ans, *args)), args[i])


def _pushforward(partial):
    return lambda t, ans, *args: broadcast_as(multiply(t, partial(ans, *args)), ans)
