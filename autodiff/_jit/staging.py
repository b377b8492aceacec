"""The staging level: ``autodiff.jit``'s trace, a level like a ``jvp``'s or a ``vmap``'s.

A jit opens a :class:`Staging` one level above the innermost open level of this thread.  A *staged value* is a
``Traced`` whose ``tape`` is that Staging: its ``value`` is the value of this call (it gives shapes, dtypes and
the first result) and its ``index`` its number in the program.  A primitive called with a staged value of the
highest level comes to :meth:`Staging.push`: the primitive runs on the unwrapped values (lower levels record
as usual) and one equation is appended to the program.  While the jit traces, a call on plain values only
comes too: it depends on no input, so it runs once, now, and the arrays it read are noted as captured (the
program depends on them: :mod:`autodiff._jit.jit` keeps them read-only).

Python must never see a staged value's data: the program would bake in what it saw.  The user's
``bool``/``float``/``item`` of one raises :class:`~autodiff._jit.errors.ConcretizationError`; a read by the
library (``plain_value``, a rule's fast path) is noted in ``reads``, and so is a constant that is a staged
value's own array (a strip that leaked it), and a value of an outer level the function closed over
(``outer``): the jit then keeps no program for that signature.
"""

import sys
from threading import get_ident

import numpy as np

from .._batching import example_shape
from .._checks import leaked
from .._protection import NESTED
from .._stop_gradient import stop_gradient, value_of
from .._tangents import NoTangent, ZeroTangent
from .._traced import Traced, _state, ambient, close_level, current_level, staging_kinds
from .._traced import value_of as strip_all
from .errors import LIBRARY, asking_frame, concretization_error, in_packages, module_of, who
from .program import Aval, Equation, Program, Var


class _Stop:
    """The program's stop-gradient: strips the differentiation levels below the staging level (``value_of`` of
    a staged value records it), on replay too; not a primitive, so no level records it."""

    __name__ = "stop_gradient"
    fun = staticmethod(stop_gradient)

    def __call__(self, x):
        return stop_gradient(x)

    def __repr__(self):
        return "<stop_gradient>"


STOP = _Stop()


class Staging:
    """One jit trace's level: what a primitive does when its highest-level argument is staged.

    >>> import autodiff.numpy as anp
    >>> with open_staging() as staging:
    ...     x = staging.input(np.ones(2))
    ...     y = anp.sin(x) * 2.0
    >>> [e.prim.__name__ for e in staging.equations], y.index, y.value
    (['sin', 'multiply'], 2, array([1.68294197, 1.68294197]))
    """

    __slots__ = ("level", "active", "equations", "avals", "reads", "outer", "alive", "captured", "opaque",
                 "__weakref__")

    def __init__(self, level):
        self.level = level
        self.active = True  # false once the trace returned: a staged value reaching a primitive has leaked
        self.equations, self.avals = [], []
        self.reads = []  # who read a staged value's data (the program would bake it in)
        self.outer = []  # the primitives that met a value of an outer level the function closed over
        self.alive = {}  # id(array) -> array, every staged value's own: one met as a constant has leaked
        self.captured = {}  # id(array) -> array, every constant the trace read: the program depends on them
        self.opaque = []  # the types of output leaves jit cannot see inside (not registered containers)

    def input(self, value):
        """A new input of the program, standing for ``value``."""
        self.avals.append(_aval(value))
        return self._staged(value, len(self.avals) - 1)

    def push(self, prim, args, kwargs):
        """``prim(*args, **kwargs)`` on the unwrapped values, appended to the program as one equation; a call
        on plain values only (no staged one: it depends on no input) runs now, its arrays noted as captured."""
        if not self.active:
            raise leaked(prim, self)
        if Traced not in map(type, args):
            self._check_constant(prim, (args, kwargs))
            return _inside(prim.fun, args, kwargs)
        argvals, operands, lower = list(args), [], False
        for i, a in enumerate(args):
            if type(a) is Traced and a.tape is self:
                argvals[i] = v = a.value
                operands.append(Var(a.index))
                lower = lower or type(v) is Traced
                continue
            if type(a) is Traced:
                self._met_other(prim, a)
                lower = True
            else:
                self._check_constant(prim, a)
            operands.append(a)
        if kwargs:
            self._check_constant(prim, kwargs)
        ans = _inside(prim if lower else prim.fun, argvals, kwargs)
        return self.record(prim, tuple(operands), kwargs, ans)

    def record(self, prim, operands, kwargs, ans):
        self.equations.append(Equation(prim, operands, kwargs, len(self.avals)))
        self.avals.append(_aval(ans))
        return self._staged(ans, len(self.avals) - 1)

    def kept(self, x):
        """``x`` (staged) with the differentiation levels below this one stripped (a vmap's kept), recorded as
        a stop-gradient; ``x`` itself when nothing is below."""
        inner = x.value
        if type(inner) is not Traced:
            return x
        stripped = value_of(inner)
        return x if stripped is inner else self.record(STOP, (Var(x.index),), {}, stripped)

    def read(self, frame):
        """Note that the code running in ``frame`` read a staged value's data (and who called it)."""
        self.reads.append(f"{who(frame)}, called from {who(frame.f_back)}")

    def concrete(self, x, what):
        """``x``'s data for ``what`` (``bool()``, ``float()``, ...): noted as a read when the library asks,
        a :class:`ConcretizationError` naming the line when the user's code does."""
        frame = asking_frame(sys._getframe(1))
        if frame is not None and in_packages(module_of(frame), LIBRARY):
            self.reads.append(f"{what} in {who(frame)}")
            return strip_all(x)
        raise concretization_error(what)

    def output(self, leaf):
        """An output leaf as the program holds it: a :class:`Var`, or a constant."""
        if type(leaf) is Traced and leaf.tape is self:
            return Var(leaf.index)
        if type(leaf) is Traced:
            self._met_other(None, leaf)
        elif type(leaf) not in PLAIN_OUTPUTS:  # an object jit cannot see inside: it may hold staged values
            self.opaque.append(type(leaf).__name__)
        else:
            self._check_constant(None, leaf)
        return leaf

    def _staged(self, value, ref):
        if type(value) is np.ndarray:
            self.alive[id(value)] = value
        return Traced(value, self, ref, self.level)

    def _met_other(self, prim, a):
        if type(a.tape) is Staging:  # another trace's staged value, kept past its jit
            raise leaked(prim or _OUTPUT, a.tape)
        self.outer.append(prim.__name__ if prim is not None else "the output")

    def _check_constant(self, prim, value):
        """Note a constant that is a staged value's own array, or holds a staged value inside a container."""
        stack = [value]
        while stack:
            x = stack.pop()
            if type(x) is np.ndarray:
                if id(x) in self.alive:
                    self.reads.append(f"a traced value's array reached {_name(prim)} as a constant")
                self.captured[id(x)] = x
            elif type(x) is Traced:
                self.reads.append(f"a traced value reached {_name(prim)} inside a container")
            elif type(x) in NESTED:
                stack.extend(x.values() if type(x) is dict else x)

    def program(self, name, outputs, out_tree):
        """The program traced: the inputs came first, so they are the values no equation defines."""
        n_inputs = len(self.avals) - len(self.equations)
        return Program(name, n_inputs, self.equations, self.avals, outputs, out_tree, list(self.captured.values()))


def _inside(fun, args, kwargs):
    """``fun(*args, **kwargs)``, a primitive's call, with this thread's staging level set aside: the primitive's
    own work (the functions its forward calls on plain values) is part of its equation, not equations of its own."""
    tid = get_ident()
    staging = ambient.pop(tid, None)  # None: a staged value met in a thread that is not tracing
    try:
        return fun(*args, **kwargs)
    finally:
        if staging is not None:
            ambient[tid] = staging


# Output leaves that hold nothing traced: a program may return them as constants.
PLAIN_OUTPUTS = frozenset((np.ndarray, int, float, complex, bool, str, bytes, type(None), slice, range, np.dtype,
                           ZeroTangent, NoTangent, *(t for t in np.sctypeDict.values())))


class _Output:
    __name__ = "the output"


_OUTPUT = _Output()


def _name(prim):
    return "the output" if prim is None else prim.__name__


def _aval(value):
    """``(shape, dtype)`` of a value as traced (one example's shape under a vmap); a tuple's parts' avals."""
    v = strip_all(value)
    if type(v) is tuple:
        return tuple(_aval(p) for p in v)
    if isinstance(v, (np.ndarray, np.generic, float, int, complex, bool)):
        shape = example_shape(value) if type(value) is Traced else np.shape(v)
        return Aval(tuple(shape), np.result_type(v))
    return Aval(None, type(v).__name__)


class open_staging:
    """Context manager: open a staging level above the innermost open level of this thread; while it is open,
    this thread's primitive calls on plain values are staged too."""

    __slots__ = ("level",)

    def __enter__(self):
        self.level = Staging(current_level() + 1)
        _state.level = self.level.level
        ambient[get_ident()] = self.level
        return self.level

    def __exit__(self, kind, value, traceback):
        ambient.pop(get_ident(), None)
        self.level.alive.clear()  # the trace's arrays go now, not with the last staged value someone kept
        close_level(self.level, value)
        return False


def staging_now():
    """The staging level tracing in this thread, or ``None``."""
    return ambient.get(get_ident()) if ambient else None


staging_kinds.add(Staging)
