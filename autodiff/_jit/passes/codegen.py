"""The call-site form: a program written out as one Python function that calls each primitive's function itself.

The reference interpreter (:mod:`autodiff._jit.replay`) pays, for every equation of every call, for its loop:
unpacking the equation, looking its operands up, testing them for traced values.  The call-site form pays that
once: it writes the program out as the straight-line code a person would write (one line per equation, each
value a local variable ``v<k>``, each primitive's function and each constant bound by name), compiles it with
``exec`` on its first run and calls it after.  The pass itself only wraps the program, so a first call (trace
and passes) costs no compilation.

It keeps replay's semantics exactly, so its results are bitwise replay's: the same functions on the same values
in the same order; a value is deleted after its last use (:attr:`Program.frees`); a value whose shape is not
the traced one raises :class:`~autodiff._jit.replay.ShapeChanged` (jit then runs the function itself).  Only a
line whose value's shape may depend on more than its operands' shapes is checked: the inputs have their traced
shapes (the signature says so), so by induction every value does up to the first line that can change one
(``x[x > 0]``).  A numpy ufunc's value has its operands' broadcast shape, and so do the equations the
acceleration passes make, which say so (``shape_follows_operands``); their lines skip the check, which cost
MAML's meta-step a tenth of its time.  Inputs
traced by an outer transform (``grad(jit(f))``, ``vmap(jit(f))``) must reach the primitives themselves, so the
outer level records or batches them: such a run is replay's.  ``program.source`` shows the generated code.
"""

import functools
import itertools
import keyword
import linecache
import math
import re

import numpy as np

from ..._traced import Traced
from ..program import Program, Var
from ..replay import ShapeChanged, replay

_RESERVED = frozenset(("run", "inputs", "changed", "getattr"))  # names the generated code itself uses
_LITERALS = (int, bool, str, type(None))  # constants written into the code by their repr (floats: when finite)


def callsite(program):
    """``program`` as a :class:`CallSite`: it runs by a generated function (built on its first run).

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> program = autodiff.jit(lambda x: anp.sin(x[x > 0]) * 2.0, passes=()).lower(np.ones(3))
    >>> print(callsite(program).source)  # the mask's count may change: that line alone is checked
    def run(inputs):
        [v0] = inputs
        v1 = greater(v0, 0)
        v2 = getitem(v0, v1)
        if getattr(v2, 'shape', ()) != (3,): raise changed(1, v2)
        del v0, v1
        v3 = sin(v2)
        del v2
        v4 = multiply(v3, 2.0)
        del v3
        return [v4]
    >>> callsite(program).run([np.full(3, np.pi / 2)])
    [array([2., 2., 2.])]
    """
    return CallSite(program)


class CallSite(Program):
    """A program that runs by a generated function (``source`` shows its code) instead of the interpreter."""

    __slots__ = ("_source", "_namespace", "_function")

    def __init__(self, program):
        super().__init__(program.name, program.n_inputs, program.equations, program.avals, program.outputs,
                         program.out_tree, program.captured)
        self._source = self._namespace = self._function = None

    @property
    def source(self):
        """The generated function's code."""
        if self._source is None:
            self._source, self._namespace = generate(self)
        return self._source

    def run(self, inputs):
        """The output leaves for these inputs, as :func:`~autodiff._jit.replay.replay` gives them."""
        if Traced in map(type, inputs):  # an outer transform's values: through the primitives, as replay does
            return replay(self, inputs)
        function = self._function or self._build()
        return function(inputs)

    def _build(self):
        source = self.source
        filename = f"<autodiff.jit {self.name} #{next(_built)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show it
        exec(compile(source, filename, "exec"), self._namespace)  # noqa: S102 (our own generated code)
        self._function = self._namespace["run"]
        return self._function


_built = itertools.count(1)


def generate(program):
    """``(source, namespace)``: the code of ``run(inputs) -> output leaves`` and the names it reads."""
    names = _Names(changed=functools.partial(_changed, program.equations, program.shapes))
    inputs = ", ".join(f"v{k}" for k in range(program.n_inputs))
    lines = ["def run(inputs):", f"    [{inputs}] = inputs"]
    for k, ((prim, operands, kwargs, out), dead) in enumerate(zip(program.equations, program.frees)):
        prim, kwargs = _written_into(prim, operands, kwargs)
        lines.append(f"    v{out} = {names.function(prim)}({names.arguments(operands, kwargs)})")
        if program.shapes[out] is not None and not follows_operands(prim):  # getattr: a number's shape is ()
            shape = tuple(map(int, program.shapes[out]))  # plain ints: their repr is Python
            lines.append(f"    if getattr(v{out}, 'shape', ()) != {shape!r}: raise changed({k}, v{out})")
        if dead:
            lines.append(f"    del {', '.join(f'v{ref}' for ref in dead)}")
    lines.append(f"    return [{', '.join(map(names.operand, program.outputs))}]")
    return "\n".join(lines), names.namespace


def _written_into(prim, operands, kwargs):
    """``(primitive, keyword arguments)`` of a line: a ufunc that buffer planning made write into an operand
    (``prim.writes_into``, its position; ``prim.prim`` the ufunc's primitive) is called as itself with ``out=``
    that operand, so the line costs no wrapper's frame (on 400 values the wrapped add took 1.57 µs, the plain one
    0.75; AMD EPYC, Zen 3, 2026-12-07)."""
    position = getattr(prim, "writes_into", None)
    if position is None:
        return prim, kwargs
    return prim.prim, {**kwargs, "out": operands[position]}


def follows_operands(prim):
    """Does the shape of ``prim``'s value follow from its operands' shapes (and its constant arguments) alone: a
    numpy ufunc, or an equation that says so with ``shape_follows_operands``?"""
    return type(getattr(prim, "fun", None)) is np.ufunc or getattr(prim, "shape_follows_operands", False)


def _changed(equations, shapes, k, value):
    """The :class:`ShapeChanged` replay raises at equation ``k``."""
    return ShapeChanged(equations[k], shapes[equations[k].out], np.shape(value))


class _Names:
    """The names the generated code reads: each primitive's function by its name, each constant as ``c<n>``
    (or its literal, for a plain number or string), one name per distinct object."""

    def __init__(self, **namespace):
        self.namespace = namespace
        self._named = {}  # id(object) -> name

    def function(self, prim):
        base = re.sub(r"\W", "_", prim.__name__)
        if keyword.iskeyword(base) or base in _RESERVED or re.fullmatch(r"[vc]\d+|\d.*", base):
            base = f"{base}_"
        return self._bind(prim.fun, base)

    def operand(self, a):
        if type(a) is Var:
            return f"v{a.ref}"
        if type(a) in _LITERALS or type(a) is float and math.isfinite(a):
            return repr(a)  # exact: repr of a float reads back as the same float
        return self._bind(a, "c")

    def arguments(self, operands, kwargs):
        shown = [self.operand(a) for a in operands]
        if all(key.isidentifier() and not keyword.iskeyword(key) for key in kwargs):
            shown += [f"{key}={self.operand(value)}" for key, value in kwargs.items()]
        elif kwargs:
            shown.append(f"**{self._bind(kwargs, 'c')}")
        return ", ".join(shown)

    def _bind(self, obj, base):
        name = self._named.get(id(obj))
        if name is None:
            name = self._named[id(obj)] = self._fresh(base)
            self.namespace[name] = obj  # the code holds it from here: its id stays its own
        return name

    def _fresh(self, base):
        """A free name: ``c0``, ``c1``, ... for a constant; a function's own name, else ``name_2``, ..."""
        numbered = (f"{base}_{n}" for n in itertools.count(2))
        candidates = (f"c{n}" for n in itertools.count()) if base == "c" else itertools.chain([base], numbered)
        return next(name for name in candidates if name not in self.namespace)
