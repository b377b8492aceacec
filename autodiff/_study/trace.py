"""autodiff.trace: a record of one transform of ``f``, printable like a jaxpr.

It shows what was recorded (per tape, with its nesting level), which
pullback ran with which kind of cotangent (dense, symbolic zero, thunk
evaluated or never evaluated), where cotangents of one value were added up
(a tied weight), and model leaves under their key paths.  Forward mode
(``jvp``) records nothing, so each pushforward level is listed from the
pushes observed while ``f`` ran: each op with its primal and its tangent,
and whether its own JVP rule or its pullback's linearisation made it.  A
``vmap``'s batch level is listed the same way, from the pushes
:mod:`autodiff._study.batch_watch` observes, with the batching rule each
op took.  ``linearize`` is listed by :mod:`autodiff._study.linear_trace`.
"""

import inspect

import numpy as np

from .. import _backward, _forward
from .._arguments import is_differentiable
from .._paths import dotted
from .._tangents import Thunk
from .._traced import _state, current_level, value_of
from .._trees import leaves
from .backward_listing import backward_listing
from .batch_listing import batch_listing, batch_outputs
from .batch_watch import watching_batches
from .dot import render, to_dot
from .listing import pushforward_listing, tape_listing
from .provenance import annotate, pushforward_graph, pushforward_rows, seeded_rows, tape_graph
from .rule_program import rule_program
from .trace_transforms import RUNS, chosen


def trace(f, *args, tangents=None, cotangent=None, values=False, rules=False, transform=None):
    """Run ``f`` at ``args`` under ``transform`` and return a :class:`Trace` of every level it opened.

    ``transform`` is ``"vjp"`` (the default): reverse mode, pulling back
    ``cotangent`` (shaped like ``f``'s output; ones when not given);
    ``"jvp"`` (the default when ``tangents`` are given, one per argument):
    forward mode, ``jvp(f, args, tangents)``, listing the pushforward;
    ``"vmap"``: ``vmap(f)(*args)``, listing the batched program (each op's
    batching rule and batch axes in and out); ``"linearize"``: the primal
    program ``linearize`` records, the linear program ``f_jvp`` and its
    transpose (:func:`autodiff._study.linear_trace.linearization`); ``"call"``:
    ``f(*args)`` as it is, listing every level ``f`` opens itself, so
    ``trace(vmap(grad(g)), xs, transform="call")`` lists that composition (and
    the default, ``"vjp"``, differentiates it once more).

    Constants with at most six elements print by value; what an inner
    level's backward pass recorded on an outer one, which batching rule
    recorded a row, and which entries are dead, is noted after ``#``
    (:mod:`autodiff._study.provenance`).  With ``values=True`` each row's
    value, and the tangent or cotangent it got, print on a line under it (a
    long array by its first and last three elements), and the backward
    listing gives each cotangent's numbers.  With ``rules=True`` every
    pullback that ran is listed after the levels as a program of its own,
    the ops that build its masks included (:mod:`autodiff._study.rule_program`).

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
    >>> print(trace(lambda x: anp.sum(anp.sin(x)), np.ones((4, 2)), transform="vmap"))
    batch 1 (level 1, 4 examples)
      in  %0 x float64[2]  batched float64[4,2]
      %1 = sin(%0) -> float64[2]  batch axes (0) -> 0  (rule elementwise)
      %2 = sum(%1) -> float64[]  batch axes (0) -> 0  (rule first_only(reduction))
      out %2
    """
    transform = chosen(transform, tangents, cotangent)
    if transform == "linearize":
        from .linear_trace import linearization  # it traces with this module's trace

        return linearization(f, args, tangents, cotangent, values)
    record = Trace(_argument_names(f, len(args)))
    record.args, record.values, record.transform, record.rules = args, values, transform, rules
    with recording(record):
        RUNS[transform](record, f, args, tangents, cotangent)
    return record


class recording:
    """Context manager: ``record`` observes every tape, pullback, push and batch push of this thread."""

    def __init__(self, record):
        self.record = record
        self.watch = watching_batches()

    def __enter__(self):
        self.record.base_level = current_level()
        self.outer = _state.__dict__.get("tracer")  # a rule's program is traced while printing another trace
        _state.tracer = self.record
        _backward.observers.append(self.record.observe)
        _forward.observers.append(self.record.observe_push)
        self.watch.__enter__()
        return self.record

    def __exit__(self, *exc):
        self.watch.__exit__(*exc)
        _backward.observers.remove(self.record.observe)
        _forward.observers.remove(self.record.observe_push)
        _state.tracer = self.outer
        return False




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
        self.batches = []  # every vmap level opened while f ran
        self.batch_pushes = {}  # serial in pushes -> BatchPush (its rule, batch axes, marks before and after)
        self.transform = "vjp"
        self.base_level = 0  # the level open when the trace began: levels above it are f's
        self.title = None  # a program's own heading (a rule's), which replaces its one level's
        self.label_outputs = None  # graphs -> None: names the outputs a caller knows (explain's, a rule's)
        self.rules = False  # list each pullback that ran as a program after the levels
        self._programs = None

    def observe(self, tape, index, entry, g, parent_cts):
        if any(t is tape for t in self.tapes):
            self.events.append((tape, index, entry, g, parent_cts))
            self.marks.append(self.marks_now())

    def marks_now(self):
        """How far every level has got: entries per tape, pushes (of pushforwards and batches) so far."""
        marks = {id(t): len(t.entries) for t in self.tapes}
        marks.update((id(p), len(self.pushes)) for p in self.pushforwards + self.batches)
        return marks

    def observe_batch(self, level, prim, args, kwargs, result, how):
        """A primitive ran under a vmap level: one row of that level's listing (``how``: its rule, axes)."""
        if level.level <= self.base_level:
            return
        if not any(b is level for b in self.batches):
            self.batches.append(level)
        how.after = self.marks_now()
        self.batch_pushes[len(self.pushes)] = how
        self.pushes.append((level, prim, args, kwargs, result))

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
        first = len(pushed) + len(self.tapes)
        listings += [(b.level, batch_listing(self, k, b, graphs[first + k], *pushforward_rows(self.pushes, b)))
                     for k, b in enumerate(self.batches)]
        text = "\n".join(text for _, text in sorted(listings, key=lambda item: item[0]))
        if self.rules:
            text = "\n".join([text] + [str(p) for p in self.rule_programs()])
        if not text and self.title is not None:
            return self.title + "\n  calls no op on its inputs (it returns them rearranged, or constants)"
        return text or "(nothing traced: f opened no level; give transform='vjp', 'jvp', 'vmap' or 'linearize')"

    def rule_programs(self):
        """Every pullback that ran (in the order it ran) as a :class:`Trace` of its own: the ops its rule calls,
        the masks it builds from its inputs included (:func:`autodiff._study.rule_program.rule_program`)."""
        if self._programs is None:
            self._programs = [rule_program(entry, g, tape.residuals.get(i),
                                           f"tape {self.tapes.index(tape) + 1} %{i} ")
                              for tape, i, entry, g, cts in self.events if cts is not None]
        return self._programs

    def annotated_graphs(self):
        """Every level as a graph (pushforwards, tapes, batches) with its outputs, notes and dead rows; the
        outputs a caller knows by name (:func:`autodiff.explain`'s) set by ``label_outputs``."""
        graphs = self._graphs()
        if self.label_outputs is not None:
            self.label_outputs(graphs)
        annotate(self, graphs)
        return graphs

    def _graphs(self):
        """Every level as a graph (pushforwards, then tapes, then batches), each with its output rows where
        they are known."""
        graphs = [pushforward_graph(self.pushes, p, f"pushforward {k + 1}") for k, p in enumerate(self.pushforwards)]
        if graphs and self.transform == "jvp":
            rows = pushforward_rows(self.pushes, self.pushforwards[0])[1]
            graphs[0].outputs = [rows[id(leaf)] for _, leaf in leaves(self.output, ()) if id(leaf) in rows]
        for k, tape in enumerate(self.tapes):
            graphs.append(tape_graph(tape, f"tape {k + 1}"))
            first = k == 0 and self.output is not None and self.transform == "vjp"
            graphs[-1].outputs = _output_indices(self, tape) if first else seeded_rows(self, tape)
        for k, level in enumerate(self.batches):
            graphs.append(pushforward_graph(self.pushes, level, f"batch {k + 1}"))
            graphs[-1].outputs = batch_outputs(self.pushes, level, self.output)
        return graphs

    def backward(self):
        """The backward listing: pullbacks that ran, cotangent kinds, accumulation points."""
        return backward_listing(self)

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
