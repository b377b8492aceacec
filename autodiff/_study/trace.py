"""autodiff.trace: a record of one differentiation, printable like a jaxpr.

It shows what was recorded (per tape, with its nesting level), which
pullback ran with which kind of cotangent (dense, symbolic zero, thunk
evaluated or never evaluated), where cotangents of one value were added up
(a tied weight), and model leaves under their key paths.  Forward mode
(``jvp``) records nothing, so each pushforward level is listed from the
pushes observed while ``f`` ran: each op with its primal and its tangent,
and whether its own JVP rule or its pullback's linearisation made it.
"""

import inspect

import numpy as np

from .. import _backward, _forward
from .._arguments import is_differentiable
from .._higher import jvp
from .._paths import dotted
from .._tangents import Thunk, ZeroTangent
from .._traced import Traced, _state, value_of
from .._trees import leaves, rebuild_node, transform
from .._vjp import vjp
from .dot import render, to_dot
from .listing import describe, pushforward_listing, tape_listing
from .listing_values import value_text
from .provenance import annotate, pushforward_graph, pushforward_rows, seeded_rows, tape_graph


def trace(f, *args, tangents=None, cotangent=None, values=False):
    """Differentiate ``f`` at ``args`` and return a :class:`Trace` of it.

    Reverse mode pulls back ``cotangent`` (shaped like ``f``'s output; ones
    when not given).  With ``tangents`` (one per argument, as for ``jvp``) it
    pushes them forward instead, ``jvp(f, args, tangents)``, and lists the
    pushforward.  Constants with at most six elements print by value; what
    an inner level's backward pass recorded on an outer one, and which
    entries are dead, is noted after ``#`` (:mod:`autodiff._study.provenance`).
    With ``values=True`` each row's value, and the tangent or cotangent it
    got, print on a line under it (a long array by its first and last three
    elements), and the backward listing gives each cotangent's numbers.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> t = trace(lambda x: anp.sum(anp.sin(x) * 2.0), np.ones(3))
    >>> print(t)  # doctest: +NORMALIZE_WHITESPACE
    tape 1 (level 1)
      in  %0 x float64[3]
      %1 = sin(%0:float64[3]) -> float64[3]  keeps %0
      %2 = multiply(%1:float64[3], 2.0) -> float64[3]  keeps %1
      %3 = sum(%2:float64[3]) -> float64[]  keeps %2
      out %3
    >>> print(t.backward())  # doctest: +NORMALIZE_WHITESPACE
    backward of tape 1 (level 1)
      %3 sum: got dense float64[] -> %2 dense float64[3]
      %2 multiply: got dense float64[3] -> %1 dense float64[3]
      %1 sin: got dense float64[3] -> %0 x dense float64[3]
    >>> trace(lambda x: x * x, 3.0, cotangent=0.5).gradients
    (3.0,)
    """
    if tangents is not None and cotangent is not None:
        raise TypeError("trace: give tangents= (forward mode) or cotangent= (reverse mode), not both")
    record = Trace(_argument_names(f, len(args)))
    record.args, record.values = args, values
    _state.tracer = record
    _backward.observers.append(record.observe)
    _forward.observers.append(record.observe_push)
    try:
        if tangents is not None:
            record.output, record.tangent = jvp(f, tuple(args), tuple(tangents))
            return record
        out, pullback = vjp(f, *args)
        record.name_inputs(args)
        record.output = out
        record.gradients = pullback(_ones_like(out) if cotangent is None else cotangent)
    finally:
        _backward.observers.remove(record.observe)
        _forward.observers.remove(record.observe_push)
        _state.tracer = None
    return record


def _argument_names(f, n):
    """The names of ``f``'s first ``n`` positional parameters; ``arg{i}`` past them (or for ``*args``)."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        names.append(p.name)
    return (names + [f"arg{i}" for i in range(len(names), n)])[:n]


def _ones_like(out):
    def leaf_fn(path, leaf):
        v = leaf.value if type(leaf) is Traced else leaf
        if np.ndim(v):
            return np.ones_like(v)
        return 1.0 if isinstance(v, float) else np.result_type(v).type(1)

    return transform(out, leaf_fn, rebuild_node)


class Trace:
    """The record: every tape opened while ``f`` ran, and every pullback that ran."""

    def __init__(self, arg_names):
        self.arg_names = arg_names
        self.tapes = []
        self.events = []  # (tape, index, entry, g, parent cotangents or None when skipped as zero)
        self.marks = []  # per event: how far every level had got when its pullback returned
        self.input_names = {}  # (id(tape), index) -> key path of a model leaf
        self.output = None
        self.gradients = None
        self.pushforwards = []  # every jvp level opened while f ran
        self.pushes = []  # (pushforward, primitive, args, kwargs, result dual)
        self.args = ()
        self.tangent = None
        self.values = False  # print each row's value and its tangent or cotangent under it
        self.silent = set()  # ids of tapes whose cotangents are not shown (explain's outermost: an extra order)

    def observe(self, tape, index, entry, g, parent_cts):
        if any(t is tape for t in self.tapes):
            self.events.append((tape, index, entry, g, parent_cts))
            marks = {id(t): len(t.entries) for t in self.tapes}
            marks.update((id(p), len(self.pushes)) for p in self.pushforwards)
            self.marks.append(marks)

    def observe_push(self, level, prim, args, kwargs, result):
        if any(p is level for p in self.pushforwards):
            self.pushes.append((level, prim, args, kwargs, result))

    def name_inputs(self, args):
        """Name the first tape's inputs after the leaves they trace, by key path."""
        tape, position = self.tapes[0], 0
        inputs = [i for i, e in enumerate(tape.entries) if e[0] is None]
        for arg, name in zip(args, self.arg_names):
            first = {}  # id(array) -> its input, so a tie's later positions join the first's name (per argument)
            for path, leaf in leaves(arg, ()):
                if not is_differentiable(leaf):
                    continue
                key = first.get(id(leaf)) if isinstance(value_of(leaf), np.ndarray) else None
                if key is not None:
                    self.input_names[key] += " = " + name + dotted(path)
                    continue
                key = (id(tape), inputs[position])
                if not (is_differentiable(arg) and path == ()):
                    first[id(leaf)] = key
                self.input_names[key] = name + dotted(path)
                position += 1

    def __str__(self):
        pushed = [pushforward_rows(self.pushes, p) for p in self.pushforwards]
        graphs = self.annotated_graphs()
        listings = [(p.level, pushforward_listing(self, k, p, graphs[k], *pushed[k]))
                    for k, p in enumerate(self.pushforwards)]
        listings += [(tape.level, tape_listing(self, k, tape, graphs[len(pushed) + k]))
                     for k, tape in enumerate(self.tapes)]
        return "\n".join(text for _, text in sorted(listings, key=lambda item: item[0]))

    def annotated_graphs(self, outputs=None):
        """Every level as a graph (pushforwards first, then tapes) with its outputs, notes and dead rows;
        ``outputs(graphs)``, when given, sets outputs known to the caller (:func:`autodiff.explain`'s)."""
        graphs = self._graphs()
        if outputs is not None:
            outputs(graphs)
        annotate(self, graphs)
        return graphs

    def _graphs(self):
        """Every level as a graph (pushforwards first), each with its output rows where they are known."""
        graphs = [pushforward_graph(self.pushes, p, f"pushforward {k + 1}") for k, p in enumerate(self.pushforwards)]
        if graphs and self.tangent is not None:
            rows = pushforward_rows(self.pushes, self.pushforwards[0])[1]
            graphs[0].outputs = [rows[id(leaf)] for _, leaf in leaves(self.output, ()) if id(leaf) in rows]
        for k, tape in enumerate(self.tapes):
            graphs.append(tape_graph(tape, f"tape {k + 1}"))
            first = k == 0 and self.output is not None and self.tangent is None
            graphs[-1].outputs = _output_indices(self, tape) if first else seeded_rows(self, tape)
        return graphs

    def backward(self):
        """The backward listing: pullbacks that ran, cotangent kinds, accumulation points."""
        lines = []
        for k, tape in enumerate(self.tapes):
            events = [e for e in self.events if e[0] is tape]
            lines.append(f"backward of tape {k + 1} (level {tape.level})")
            received = {}
            names = {i: n for (t, i), n in self.input_names.items() if t == id(tape)}
            for _, i, entry, g, parent_cts in events:
                lines.append("  " + _event_line(i, entry, g, parent_cts, names, self.values))
                for p in entry[1]:
                    received[p] = received.get(p, 0) + 1
            for p, n in sorted(received.items()):
                if n > 1:
                    lines.append(f"  accumulated: %{p} received {n} cotangents and added them")
        return "\n".join(lines)

    def to_dot(self):
        """DOT text: one cluster per tape, nodes coloured by level, a tie is one node with several uses."""
        return to_dot(self)

    def render(self, path, format=None):
        """Write SVG or PNG (by ``path``'s suffix) with Graphviz's ``dot`` (apt-get install graphviz)."""
        return render(self, path, format)

    def thunks(self):
        """Every Thunk a pullback produced: ``(tape number, entry index, kept?, evaluated?)``."""
        out = []
        for tape, i, _, _, parent_cts in self.events:
            for c in parent_cts or ():
                if type(c) is Thunk:
                    out.append((self.tapes.index(tape) + 1, i, True, c.evaluated))
            for c in getattr(parent_cts, "dropped", ()):
                if type(c) is Thunk:
                    out.append((self.tapes.index(tape) + 1, i, False, c.evaluated))
        return out


def _output_indices(record, tape):
    out = []
    for _, leaf in leaves(record.output, ()):
        for j in range(len(tape.entries) - 1, -1, -1):
            if tape.entries[j][3] is leaf:
                out.append(j)
                break
    return out


def kind(ct):
    """The kind of a cotangent: 'none', 'zero', 'thunk (evaluated)', 'thunk (never evaluated)' or 'dense'."""
    if ct is None:
        return "none"
    if type(ct) is ZeroTangent:
        return "zero"
    if type(ct) is Thunk:
        return "thunk (evaluated)" if ct.evaluated else "thunk (never evaluated)"
    if isinstance(ct, tuple):
        return "(" + ", ".join(kind(c) for c in ct) + ")"
    return "dense"


def _event_line(i, entry, g, parent_cts, names, values):
    prim, parents = entry[0], entry[1]
    head = f"%{i} {prim.__name__}: got {_ct(g, values)}"
    if parent_cts is None:
        return head + " -> skipped, zero passed to " + ", ".join(f"%{p}" for p in parents)
    outs = [f"%{p}{' ' + names[p] if p in names else ''} {_ct(c, values)}" for p, c in zip(parents, parent_cts)]
    dropped = [c for c in getattr(parent_cts, "dropped", ()) if type(c) is Thunk]
    tail = f"; {len(dropped)} thunk(s) for constants dropped" if dropped else ""
    return head + " -> " + ", ".join(outs) + tail


def _ct(c, values=False):
    k = kind(c)
    if k == "dense" or k == "thunk (evaluated)":
        v = c() if type(c) is Thunk else c
        return f"{k} {describe(v)}" + (f" {value_text(v)}" if values else "")
    return k

