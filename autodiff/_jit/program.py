"""A program: what one trace of ``autodiff.jit`` recorded, as data.

Values are numbered: the inputs first (``%0``, ``%1``, ...: one per distinct array of the arguments), then one
per equation.  An equation ``(prim, operands, kwargs, out)`` applies a primitive to operands, each a
:class:`Var` (a numbered value) or a constant (an array or number the function captured), and defines value
``out``.  ``outputs`` lists the output tree's leaves, each a :class:`Var` or a constant; ``out_tree`` rebuilds
the tree.  ``avals`` gives each value's shape and dtype as traced.  ``print(program)`` shows the listing
(:mod:`autodiff._jit.listing`); :func:`autodiff._jit.replay.replay` runs it.
"""

from typing import NamedTuple


class Var:
    """An operand that is a numbered value of the program (``%ref``), not a constant."""

    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def __repr__(self):
        return f"%{self.ref}"


class Aval(NamedTuple):
    """A value's shape and dtype as traced (``shape`` ``None`` and ``dtype`` a type's name for a non-array)."""

    shape: tuple
    dtype: object

    def __str__(self):
        return str(self.dtype) if self.shape is None else f"{self.dtype}[{','.join(map(str, self.shape))}]"


class Equation(NamedTuple):
    prim: object  # a Primitive, or the program's own stop-gradient (autodiff._jit.staging.STOP)
    operands: tuple  # Var or constant, one per positional argument
    kwargs: dict
    out: int


class Program:
    """A traced function: numbered inputs, equations in order, outputs and the tree they fold into.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> program = autodiff.jit(lambda x: {"y": anp.exp(x)}).lower(np.zeros(2))
    >>> program.n_inputs, program.equations[0].prim.__name__, program.outputs, program.avals[1]
    (1, 'exp', [%1], Aval(shape=(2,), dtype=dtype('float64')))
    """

    __slots__ = ("name", "n_inputs", "equations", "avals", "outputs", "out_tree", "captured", "size", "_frees",
                 "_shapes", "constant_outputs")

    def __init__(self, name, n_inputs, equations, avals, outputs, out_tree, captured=()):
        self.name, self.n_inputs, self.equations = name, n_inputs, equations
        self.avals, self.outputs, self.out_tree = avals, outputs, out_tree
        self.captured = captured  # the arrays the trace read as constants (equations' operands, plain calls')
        self.size = len(avals)  # values are numbered below this (a pass may drop equations, never renumber)
        self._frees = self._shapes = None  # worked out when first read: most programs a pass makes never run
        self.constant_outputs = [i for i, out in enumerate(outputs) if type(out) is not Var]  # leaves not computed

    @property
    def frees(self):
        """Per equation, the values read (or made) there for the last time: a run drops them after it."""
        if self._frees is None:
            self._frees = _last_uses(self.equations, self.outputs)
        return self._frees

    @property
    def shapes(self):
        """Per value, the shape a run's value must have (``None`` for a non-array)."""
        if self._shapes is None:
            self._shapes = [a.shape if type(a) is Aval else None for a in self.avals]
        return self._shapes

    def run(self, inputs):
        """The output leaves for these input values, by the reference interpreter (:mod:`.replay`); the
        call-site pass (:mod:`.passes.codegen`) gives a program a generated function instead."""
        return replay(self, inputs)

    def replace(self, equations, outputs=None, captured=None):
        """The same program with other equations (a pass's result), and other output leaves or captured arrays
        when given."""
        return Program(self.name, self.n_inputs, equations, self.avals, self.outputs if outputs is None else outputs,
                       self.out_tree, self.captured if captured is None else captured)

    def __str__(self):
        from .listing import listing

        return listing(self)

    def __repr__(self):
        return f"<program {self.name}: {self.n_inputs} inputs, {len(self.equations)} equations>"


def last_reads(program):
    """value -> the index of the last equation reading it (``len(program.equations)`` for an output leaf)."""
    last = {a.ref: k for k, eq in enumerate(program.equations) for a in eq.operands if type(a) is Var}
    last.update((o.ref, len(program.equations)) for o in program.outputs if type(o) is Var)
    return last


def renamed(a, names):
    """Operand ``a`` read under ``names`` (value -> the value that stands for it): a pass that drops an equation
    renames its readers so."""
    return Var(names[a.ref]) if type(a) is Var and a.ref in names else a


def _last_uses(equations, outputs):
    """Per equation, the values read (or made) there for the last time: the replay drops them after it, so a
    long program holds what eager code would, not every value it made."""
    kept = {o.ref for o in outputs if type(o) is Var}
    seen, frees = set(kept), []
    for eq in reversed(equations):
        dead = [a.ref for a in eq.operands if type(a) is Var and a.ref not in seen]
        seen.update(dead)
        if eq.out not in seen:  # made and never read
            dead.append(eq.out)
            seen.add(eq.out)
        frees.append(tuple(dict.fromkeys(dead)))
    frees.reverse()
    return frees


from .replay import replay  # noqa: E402  (here, not on top: replay.py reads Var from this module)
