"""explain: what one primitive's rule records, at first and second order, without writing a program around it.

``explain(prim, *args)`` traces the chain forward -> pullback -> pullback of
the pullback at ``args``: the primitive's pullback ``g -> cotangent of x`` and
the pullback of that, ``h -> cotangents of x and g``, are differentiated as
functions, so every op a rule calls is recorded on the tape of its level and
listed with the notes of :func:`autodiff.trace` (``# pullback of tape 3 %1``:
that op was recorded by the pullback of the primitive's entry).
"""


import numpy as np

from .._arguments import is_differentiable
from .._primitive import Primitive
from .._traced import Traced, value_of
from .._vjp import vjp
from .listing import tape_listing
from .rule_program import parameter_names, rule_program
from .trace import trace
from .trace_transforms import named, ones_like

_TITLES = {
    "forward": "forward: the primitive records one entry",
    "composite": "forward: {name} is not a primitive, so each op it calls records an entry",
    1: "order 1: its pullback, from the output cotangent {g} to the cotangent of {x}, records these ops",
    2: "order 2: the pullbacks of those ops, from {h} to the cotangents of {x} and {g}, record these",
}


def explain(prim, *args, order=2, values=False, rules=False, **kwargs):
    """The ops ``prim``'s rule records at ``args``: its forward, its pullback (order 1), and the pullbacks of
    that pullback's ops (order 2), each on the tape of its level, innermost first.

    ``args`` are example arguments: the float ones are differentiated, the
    others (and ``kwargs``) are held constant.  The output cotangent ``g``
    and, at order 2, the cotangents ``h`` of the first-order result are
    traced inputs (ones).  Works for built-in primitives and for those made
    with :func:`autodiff.extend.primitive` (any other function works too: its
    forward is then the ops it calls).  Returns an :class:`Explanation`, whose
    text is the listing (``str(e)``, or the REPL's display), like a jaxpr.
    Each pullback's ``out`` line names the cotangents in order; one the rule
    gave as a symbolic zero is said to be one.  ``values=True`` prints each
    row's value under it, and the cotangent the next order's pullbacks sent
    it (none on the outermost tape, whose would be one order more).
    ``rules=True`` ends with the rule as a program: every op the pullback
    calls, the ones that build a mask from its inputs included
    (:mod:`autodiff._study.rule_program`), where the order-1 listing shows
    such a mask as the constant it was at ``args``.

    >>> import autodiff.numpy as anp
    >>> explain(anp.sin, 0.5, order=1)
    explain sin at x = 0.5
    forward: the primitive records one entry
    tape 2 (level 2)
      in  %0 x (tape 1 %0) float64[] @level 1
      %1 = sin(%0:float64[] @level 1) -> float64[] @level 1  keeps %0
      out %1
    order 1: its pullback, from the output cotangent g to the cotangent of x, records these ops
    tape 1 (level 1)
      in  %0 x float64[]  used by %2, %3
      in  %1 g float64[]
      %2 = sin(%0:float64[]) -> float64[]  keeps %0  # dead; forward of tape 2 %1
      %3 = sin_backward(%1:float64[], %0:float64[]) -> float64[]  keeps %1, %0  # pullback of tape 2 %1
      out cotangent of x = %3
    """
    if order not in (1, 2):
        raise ValueError(f"explain: order must be 1 or 2, got {order!r}")
    wrt = [i for i, a in enumerate(args) if is_differentiable(a)]
    if not wrt:
        raise TypeError(
            f"explain({prim.__name__}, ...): no float argument to differentiate; pass example arguments "
            "such as explain(anp.sin, 0.5) or explain(anp.matmul, np.ones((2, 3)), np.ones((3, 2)))"
        )
    xs = [args[i] for i in wrt]
    x_names = parameter_names(prim, args, wrt)

    def forward(*values):
        full = list(args)
        for i, v in zip(wrt, values):
            full[i] = v
        return prim(*full, **kwargs)

    returned = {}  # level -> what the pullback traced at that level returned
    chain, inputs, names = _chain(forward, xs, x_names, order, returned)
    record = trace(named(chain, names), *inputs, values=values)
    record.silent.add(id(record.tapes[0]))  # its cotangents differentiate the chain once more than asked
    _name_inner_inputs(record)
    labels = {1: ["cotangent of " + n for n in x_names]}
    labels[2] = labels[1] + ["cotangent of g"]
    outputs = {level: list(zip(labels[order + 1 - level], out)) for level, out in returned.items()}
    explanation = Explanation(prim, args, wrt, x_names, record, order, outputs)
    explanation.rules = rules
    return explanation


def _chain(forward, xs, x_names, order, returned):
    """``forward`` and its pullbacks as functions of (primals, cotangents): the one to trace at ``order``.
    Each pullback notes in ``returned`` what it returned, under the level of its tape (the outermost, 1, is
    the one traced; the one it differentiates is at 2)."""
    g = ones_like(forward(*xs))
    first = _pullback_as_function(forward, len(xs), lambda ct: ct[0], returned, order)
    if order == 1:
        return first, xs + [g], x_names + ["g"]
    h = list(ones_like(first(*xs, g)))
    returned.clear()  # that call was only to shape h
    second = _pullback_as_function(first, len(xs) + 1, tuple, returned, 1)
    return second, xs + [g] + h, x_names + ["g"] + _h_names(x_names)


def _pullback_as_function(f, n, cotangent, returned, level):
    """``(*primals, *cotangents) -> cotangents of the primals``: ``f``'s pullback, differentiable in both;
    ``cotangent`` makes the trailing values into the cotangent of ``f``'s output.  What it returns is kept
    in ``returned[level]``."""

    def pullback(*values):
        _, pull = vjp(f, *values[:n])
        returned[level] = cts = tuple(pull(cotangent(values[n:])))
        return cts

    return pullback


def _h_names(x_names):
    return ["h"] if len(x_names) == 1 else ["h_" + n for n in x_names]


def _name_inner_inputs(record):
    """An inner tape's input stands for an outer value: name it after that value's input, if it is one."""
    for tape in record.tapes[1:]:
        for i, entry in enumerate(tape.entries):
            value = entry[3]
            if entry[0] is not None or type(value) is not Traced:
                continue
            outer = next((k for k, t in enumerate(record.tapes) if t is value.tape), None)
            name = record.input_names.get((id(value.tape), value.index)) if outer is not None else None
            if name is not None:
                record.input_names[(id(tape), i)] = f"{name.split(' (')[0]} (tape {outer + 1} %{value.index})"


class Explanation:
    """The text :func:`explain` produced, and the :class:`~autodiff.Trace` it was read from (``.trace``)."""

    def __init__(self, prim, args, wrt, x_names, record, order, outputs):
        self.prim, self.trace, self.order, self._outputs = prim, record, order, outputs
        record.label_outputs = self._labelled
        self._header = f"explain {prim.__name__} at " + ", ".join(
            f"{n} = {_value_text(args[i])}" for n, i in zip(x_names, wrt))
        self._names = {"x": " and ".join(x_names), "g": "g", "h": " and ".join(_h_names(x_names)),
                       "name": prim.__name__}
        self._forward = "forward" if isinstance(prim, Primitive) else "composite"
        self.rules = False

    def __str__(self):
        record = self.trace
        graphs = record.annotated_graphs()[len(record.pushforwards):]
        lines, titled = [self._header], set()
        for k in sorted(range(len(record.tapes)), key=lambda k: -record.tapes[k].level):  # the forward first
            level = record.tapes[k].level
            lines.append(self._title(level) if level not in titled else f"a tape the rule opened (level {level})")
            titled.add(level)
            lines.append(tape_listing(record, k, record.tapes[k], graphs[k]))
        if self.rules:
            lines.extend(str(program) for program in self._programs())
        return "\n".join(lines)

    def _programs(self):
        """The rule of each entry of the forward (one for a primitive) as a program, masks included."""
        forward = max(self.trace.tapes, key=lambda t: t.level)
        where = "" if self._forward == "forward" else "%{} "
        return [rule_program(entry, g, forward.residuals.get(i), where.format(i))
                for tape, i, entry, g, cts in self.trace.events if tape is forward and cts is not None]

    def _labelled(self, graphs):
        """Each pullback's tape gets its output rows, by name: ``cotangent of x = %3`` (or a symbolic zero)."""
        tapes = self.trace.tapes
        for level, outs in self._outputs.items():
            k = next(k for k, t in enumerate(tapes) if t.level == level)  # the pullback's own tape comes first
            graph = graphs[len(self.trace.pushforwards) + k]
            graph.labelled = [(label, graph.row_of(ct), ct) for label, ct in outs]
            graph.outputs = [row for _, row, _ in graph.labelled if row is not None]

    def _title(self, level):
        order = self.order + 1 - level
        return _TITLES[self._forward if order == 0 else order].format(**self._names)

    __repr__ = __str__


def _value_text(a):
    v = value_of(a)
    if np.ndim(v) == 0:
        return repr(v.item() if isinstance(v, np.generic) else v)
    return f"{np.result_type(v)}[{','.join(map(str, np.shape(v)))}]"

