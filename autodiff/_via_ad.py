"""vjp_via_ad: differentiate a user function inside a rule, leanly.

Rules such as ``traversal.total`` call a user's ``f`` per leaf and need its
pullback.  This is ``vjp`` without the structure handling: arguments are
arrays or scalars, the pullback returns one cotangent per argument
(``ZeroTangent()`` where nothing flowed), and it is written with the same
tape, so it nests like everything else.
"""

from ._hooks import hooks
from ._protection import release
from ._tangents import ZERO, Thunk
from ._traced import Traced, new_inputs, open_tape


def vjp_via_ad(f, *xs):
    """``(f(*xs), pullback)`` for array or scalar ``xs``; ``pullback(g)`` gives a tuple of cotangents.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> value, pullback = vjp_via_ad(lambda x, y: anp.sum(x * y), np.ones(2), np.arange(2.0))
    >>> pullback(2.0)
    (array([0., 2.]), array([2., 2.]))
    """
    with open_tape() as tape:
        inputs = new_inputs(tape, xs)
        out = f(*inputs)
    if type(out) is not Traced or out.tape is not tape:
        release(tape)
        return out, _Constant(len(xs))
    return out.value, _LeafPullback(tape, out.index, inputs)


class _LeafPullback:
    __slots__ = ("tape", "index", "inputs")

    def __init__(self, tape, index, inputs):
        self.tape, self.index, self.inputs = tape, index, inputs

    def __call__(self, g):
        cts = hooks.backward(self.tape, {self.index: g})
        return tuple(_settle(cts[t.index]) for t in self.inputs)

    def __del__(self):
        release(self.tape)


def _settle(ct):
    if type(ct) is Thunk:
        ct = ct()
    return ZERO if ct is None else ct


class _Constant:
    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __call__(self, g):
        return (ZERO,) * self.n
