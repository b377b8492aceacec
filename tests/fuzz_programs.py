"""Random programs that run the same way through our ops and torch's: the differential fuzzer's machinery.

A program is a small DAG: 1-3 inputs (rank 0-3, few distinct sizes so shapes line up, values on a
grid of halves so that ties and exact zeros are common), 2-8 steps, each applying one ``Op`` to
earlier values, and a scalar output ``sum(w * v)`` over every step value no later step reads.
``run`` executes a program with our ops (``OURS``) or torch's (``THEIRS``).  The table of ops
lives in ``tests/rules/test_fuzz.py``; here are its parts: ``Guard`` (an argument's domain, written in
both libraries, so part of the program), ``Op``, the planners that pick an op's arguments from
the values so far, and adapters from numpy's calling conventions to torch's.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import hypothesis.strategies as st
import numpy as np
import torch
from hypothesis import assume

import autodiff.numpy as anp

OURS, THEIRS = "ours", "theirs"
MAX_SIZE, MAX_NDIM = 200, 4
GRID = [k * 0.5 for k in range(-4, 5)]  # -2.0 .. 2.0: sums, products and maxima tie and hit 0 exactly


@dataclass(frozen=True)
class Guard:
    """Maps any real value into an op's domain; applied inside the program, so both libraries see it."""

    name: str
    ours: Callable
    theirs: Callable

    def __call__(self, x, lib):
        return self.ours(x) if lib == OURS else self.theirs(x)


def _ramp(shape):
    """Distinct, irregular values of ``shape``: added to a value, no slice of it stays constant."""
    return (np.arange(int(np.prod(shape, dtype=int))) * 0.3183 + 0.1).reshape(shape)


ANY = Guard("any", lambda x: x, lambda x: x)
POSITIVE = Guard("positive", lambda x: x * x + 0.5, lambda x: x * x + 0.5)
ABOVE_ONE = Guard("above_one", lambda x: x * x + 1.5, lambda x: x * x + 1.5)
INSIDE_UNIT = Guard("inside_unit", lambda x: anp.tanh(x) * 0.9, lambda x: torch.tanh(x) * 0.9)
AWAY_FROM_ZERO = Guard("away_from_zero", lambda x: anp.where(x >= 0, x + 0.5, x - 0.5),
                       lambda x: torch.where(x >= 0, x + 0.5, x - 0.5))
SPREAD = Guard("spread", lambda x: x + _ramp(np.shape(x)).astype(anp.result_type(x)),
               lambda x: x + torch.as_tensor(_ramp(tuple(x.shape)), dtype=x.dtype))


@dataclass(frozen=True)
class Op:
    """One line of the table: our op, torch's, how to pick its arguments, each argument's domain, and
    ``note``: where we differ from torch by convention, and how the fuzzer handles it.

    ``plan(draw, shapes)`` picks argument positions among the values so far and keyword parameters,
    as ``(positions, params)``, or returns ``None`` when no value fits.
    """

    name: str
    kind: str
    ours: Callable
    theirs: Callable
    plan: Callable
    guards: tuple = ()
    note: str = ""

    def apply(self, lib, args, params):
        guarded = [g(a, lib) for g, a in zip(self.guards + (ANY,) * len(args), args)]
        return (self.ours if lib == OURS else self.theirs)(*guarded, **params)

    def __repr__(self):
        return self.name


# ---- planners ----

def _pick(draw, shapes, ok=lambda s: True):
    """A value position whose shape passes ``ok``: the latest value half the time (deep chains), else any."""
    fits = [i for i, s in enumerate(shapes) if ok(s)]
    if not fits:
        return None
    if fits[-1] == len(shapes) - 1 and draw(st.booleans()):
        return fits[-1]
    return draw(st.sampled_from(fits))


def ndim_at_least(n):
    return lambda s: len(s) >= n


def one(ok=lambda s: True, params=lambda draw, s: {}):
    """A planner for one argument whose shape passes ``ok``; ``params(draw, shape)`` (``None``: does not fit)."""
    def plan(draw, shapes):
        i = _pick(draw, shapes, ok)
        got = None if i is None else params(draw, shapes[i])
        return None if got is None else ((i,), got)
    return plan


def constant(values, ok=lambda s: True):
    return one(ok, lambda draw, s: {"c": draw(st.sampled_from(values))})


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def pair(fits=_broadcasts, ok=lambda s: True):
    """Two values, the second fitting the first (broadcasting by default); the same value twice is allowed
    (``maximum(x, x)`` ties everywhere)."""
    def plan(draw, shapes):
        i = _pick(draw, shapes, ok)
        j = None if i is None else _pick(draw, shapes, lambda s: ok(s) and fits(shapes[i], s))
        return None if j is None else ((i, j), {})
    return plan


def triple(draw, shapes):
    (i, j), _ = pair()(draw, shapes)
    k = _pick(draw, shapes, lambda s: _broadcasts(s, np.broadcast_shapes(shapes[i], shapes[j])))
    return (k, i, j), {}


def reduction(min_reduced=1, pairs=True, only_pairs=False):
    """Axis None, an int or a pair, and keepdims; every reduced axis at least ``min_reduced`` long."""
    def params(draw, s):
        n = len(s)
        two = [(0, n - 1), (n - 1, 0)] + ([(0, 1)] if n >= 3 else []) if n >= 2 and pairs else []
        if only_pairs and not two:
            return None
        axis = draw(st.sampled_from(two if only_pairs else [None, *range(-n, n), *two]))
        reduced = range(n) if axis is None else np.atleast_1d(axis)
        if any(s[a] < min_reduced for a in reduced) or (not s and min_reduced > 1):
            return None
        return {"axis": axis, "keepdims": draw(st.booleans())}
    return one(params=params)


def drawn(**strategies):
    """Planner params: each keyword drawn from its ``strategy(shape)``."""
    return lambda draw, s: {k: draw(f(s)) for k, f in strategies.items()}


def an_axis(s, none=False, extra=0):
    """An axis of shape ``s`` (``extra`` more, for ops that insert one), or None where allowed."""
    n = len(s) + extra
    return st.sampled_from(([None] if none else []) + list(range(-n, n)))


def along_axis(none=False):
    return one(ndim_at_least(1), drawn(axis=lambda s: an_axis(s, none)))


def reshape_params(draw, s):
    targets = [(-1,), tuple(reversed(s)), s + (1,), (1,) + s] + ([(s[0] * s[1],) + s[2:]] if len(s) >= 2 else [])
    return {"shape": draw(st.sampled_from(targets))}


def diagonal_params(draw, s):
    a1, a2 = draw(st.permutations(range(len(s))))[:2]
    limit = min(s[a1], s[a2]) - 1  # a non-empty diagonal
    return {"offset": draw(st.integers(-limit, limit)), "axis1": a1, "axis2": a2}


def norm_plan(ords, two_axes=False):
    """A vector norm over one axis, or (``two_axes``) a matrix norm over two."""
    def params(draw, s):
        axis = tuple(draw(st.permutations(range(len(s))))[:2]) if two_axes else draw(an_axis(s))
        return {"ord": draw(st.sampled_from(ords)), "axis": axis, "keepdims": draw(st.booleans())}
    return one(ndim_at_least(2 if two_axes else 1), params)


@st.composite
def _index(draw, s):
    """An index with repeated integers, an int, a slice, a mask, an ellipsis or a pair of integer arrays."""
    axis = draw(st.integers(0, len(s) - 1))
    n, lead = s[axis], (slice(None),) * axis
    integers = st.lists(st.integers(-n, n - 1), min_size=1, max_size=5).map(np.array)
    kind = draw(st.sampled_from(["repeat", "int", "slice", "mask", "ellipsis", "pair"]))
    if kind == "repeat":
        return lead + (draw(integers),)
    if kind == "int":
        return lead + (draw(st.integers(-n, n - 1)),)
    if kind == "slice":
        start = draw(st.integers(0, n - 1))
        return lead + (slice(start, draw(st.integers(start + 1, n)), draw(st.integers(1, 2))),)
    if kind == "mask":
        mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        mask[draw(st.integers(0, n - 1))] = True  # never empty: a max over nothing is an error in both
        return lead + (mask,)
    if kind == "ellipsis":
        return (Ellipsis, draw(st.lists(st.integers(-s[-1], s[-1] - 1), min_size=1, max_size=4).map(np.array)))
    length = draw(st.integers(1, 4))
    return tuple(draw(st.lists(st.integers(0, m - 1), min_size=length, max_size=length).map(np.array))
                 for m in s[:2])


def indexing():
    return one(ndim_at_least(1), lambda draw, s: {"index": draw(_index(s))})


def matmul_fits(a, b):
    try:
        np.matmul(np.zeros(a), np.zeros(b))
        return len(a) >= 1 and len(b) >= 1
    except ValueError:
        return False


def einsum_plan(draw, shapes):
    """One or two operands; each axis of the second gets a new letter or shares one of the first's (a
    contraction unless kept); the output keeps any subset of the letters, in any order (the rest are summed)."""
    i = _pick(draw, shapes)
    a = "abcd"[:len(shapes[i])]
    if draw(st.booleans()):
        return (i,), {"subscripts": f"{a}->" + _einsum_output(draw, a)}
    j = _pick(draw, shapes)
    b = ""
    for k, n in enumerate(shapes[j]):
        shared = [c for c, m in zip(a, shapes[i]) if m == n and c not in b]
        b += draw(st.sampled_from(shared + ["wxyz"[k]]))
    return (i, j), {"subscripts": f"{a},{b}->" + _einsum_output(draw, "".join(dict.fromkeys(a + b)))}


def _einsum_output(draw, letters):
    order = draw(st.permutations(letters)) if letters else []
    return "".join(order[:draw(st.integers(0, len(letters)))])


def concatenable(axis):
    return lambda a, b: len(a) == len(b) >= 1 and all(m == k for d, (m, k) in enumerate(zip(a, b))
                                                      if d != axis % len(a))


def joined(stack):
    """Two values for stack (equal shapes) or concatenate (equal shapes but along the axis)."""
    def plan(draw, shapes):
        i = _pick(draw, shapes, ndim_at_least(0 if stack else 1))
        axis = draw(an_axis(shapes[i], extra=int(stack))) if i is not None else None
        fits = (lambda s: s == shapes[i]) if stack else (lambda s: concatenable(axis)(shapes[i], s))
        return None if i is None else ((i, _pick(draw, shapes, fits)), {"axis": axis})
    return plan


# ---- torch in numpy's terms ----

def dims(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    return tuple(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def t_reduce(fn):
    """numpy's ``(axis=None|int|tuple, keepdims)`` for a torch reduction ``fn(x, dims, keepdim)``."""
    def apply(x, axis=None, keepdims=False):
        if x.ndim == 0:
            return fn(x.reshape(1), (0,), False).reshape(())
        return fn(x, dims(x, axis), keepdims)
    return apply


def t_prod(x, dims, keepdim):
    for d in sorted(dims, reverse=True):  # torch.prod takes one dim at a time
        x = torch.prod(x, d, keepdim=keepdim)
    return x


def t_flat(fn):
    """numpy's ``axis=None`` (flatten first) for a torch op along one dim."""
    return lambda x, axis=None: fn(x.reshape(-1), 0) if axis is None else fn(x, axis)


def t_index(index):
    return tuple(torch.as_tensor(i) if isinstance(i, np.ndarray) else i for i in index)


def t_norm(x, ord=None, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return torch.linalg.vector_norm(x)
    if ord == "fro":
        return torch.linalg.matrix_norm(x, "fro", dim=dims(x, axis), keepdim=keepdims)
    return torch.linalg.vector_norm(x, 2 if ord is None else ord, dim=dims(x, axis), keepdim=keepdims)


# ---- programs ----

@dataclass(frozen=True)
class Step:
    op: Op
    args: tuple
    params: dict = field(default_factory=dict)

    def __str__(self):
        guards = self.op.guards + (ANY,) * len(self.args)
        shown = [f"v{i}" if g is ANY else f"{g.name}(v{i})" for i, g in zip(self.args, guards)]
        return f"{self.op.name}({', '.join(shown + [f'{k}={_show(v)}' for k, v in self.params.items()])})"


def _show(v):
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()})"
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return "..." if v is Ellipsis else repr(v)


@dataclass(frozen=True)
class Program:
    """Inputs (with their values), steps, every value's shape, and the seed of the output weights and of
    the hvp/jvp directions.  ``str`` prints it as a reproducer."""

    dtype: type
    inputs: tuple  # numpy arrays, or Python floats for some scalar inputs
    steps: tuple
    shapes: tuple
    seed: int

    def outputs(self):
        """The step values no later step reads: the scalar output sums them, weighted."""
        read = {i for step in self.steps for i in step.args}
        n = len(self.inputs)
        return [n + k for k in range(len(self.steps)) if n + k not in read]

    def weights(self):
        rng = np.random.default_rng(self.seed)
        return {i: rng.standard_normal(self.shapes[i]).astype(self.dtype) for i in self.outputs()}

    def directions(self):
        """One hvp/jvp direction per input (a Python float where the input is one)."""
        rng = np.random.default_rng(self.seed + 1)
        out = [rng.standard_normal(np.shape(x)).astype(self.dtype) for x in self.inputs]
        return [float(d) if isinstance(x, float) else d for d, x in zip(out, self.inputs)]

    def __str__(self):
        n = len(self.inputs)
        lines = [f"dtype {np.dtype(self.dtype).name}, seed {self.seed}"]
        lines += [f"v{i} = {x!r}" if isinstance(x, float) else f"v{i} = np.array({x.tolist()})"
                  for i, x in enumerate(self.inputs)]
        lines += [f"v{n + k} = {s}    # shape {self.shapes[n + k]}" for k, s in enumerate(self.steps)]
        return "\n".join(lines + ["out = " + " + ".join(f"sum(w{i} * v{i})" for i in self.outputs())])

    __repr__ = __str__

    def _repr_pretty_(self, printer, cycle):  # hypothesis prints a failing program as its reproducer
        printer.text(str(self))


def run(program, xs, lib):
    """Every value of ``program`` on inputs ``xs``, with our ops (``OURS``) or torch's (``THEIRS``)."""
    values = list(xs)
    for step in program.steps:
        values.append(step.op.apply(lib, [values[i] for i in step.args], step.params))
    return values


def scalar_output(program, values, lib):
    total = 0.0
    for i, w in program.weights().items():
        total = total + (anp.sum(values[i] * w) if lib == OURS else (values[i] * torch.as_tensor(w)).sum())
    return total


def _out_shape(op, shapes, args, params):
    with np.errstate(all="ignore"):
        return np.shape(op.apply(OURS, [np.full(shapes[i], 0.5) for i in args], params))


def _planned(op, draw, shapes):
    """``op``'s step on the values so far and its output shape, or ``None`` if it does not fit or grows too big."""
    planned = op.plan(draw, shapes)
    if planned is None:
        return None
    shape = _out_shape(op, shapes, *planned)
    if int(np.prod(shape)) > MAX_SIZE or len(shape) > MAX_NDIM:
        return None
    return Step(op, tuple(planned[0]), planned[1]), shape


def _step(draw, shapes, ops):
    """An op of one kind (kinds equally likely) that fits the values so far."""
    kinds = sorted({op.kind for op in ops})
    while True:
        kind = draw(st.sampled_from(kinds))
        got = _planned(draw(st.sampled_from([op for op in ops if op.kind == kind])), draw, shapes)
        if got is not None:
            return got


@st.composite
def _input(draw, shape, dtype):
    size = int(np.prod(shape, dtype=int))
    values = np.array(draw(st.lists(st.sampled_from(GRID), min_size=size, max_size=size)), dtype).reshape(shape)
    if shape == () and dtype == np.float64 and draw(st.booleans()):
        return float(values)  # a bare Python float argument takes its own path through grad
    return values


@st.composite
def programs(draw, dtype, ops, focus=None, max_steps=8):
    """A random program over ``ops`` on ``dtype`` inputs; with ``focus``, one that applies that op at least once
    (from a drawn step on, as soon as it fits; programs where it never fits are rejected)."""
    sizes = draw(st.lists(st.integers(1, 3), min_size=3, max_size=3))
    shapes = [tuple(draw(st.lists(st.sampled_from(sizes), max_size=3))) for _ in range(draw(st.integers(1, 3)))]
    inputs = tuple(draw(_input(s, dtype)) for s in shapes)
    n = draw(st.integers(min(2, max_steps), max_steps))
    start = draw(st.integers(0, n - 1)) if focus else n
    steps = []
    for k in range(n):
        placed = any(step.op is focus for step in steps)
        step, shape = (k >= start and not placed and _planned(focus, draw, shapes)) or _step(draw, shapes, ops)
        steps.append(step)
        shapes.append(shape)
    assume(focus is None or any(step.op is focus for step in steps))
    return Program(dtype, inputs, tuple(steps), tuple(shapes), draw(st.integers(0, 2**16)))
