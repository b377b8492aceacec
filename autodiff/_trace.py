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

from . import _backward, _forward
from ._arguments import is_differentiable
from ._higher import jvp
from ._jvp_rules import _jvp_rules
from ._tangents import Thunk, ZeroTangent
from ._traced import Traced, _state, value_of
from ._transforms import vjp
from ._trees import dotted, leaves


def trace(f, *args, tangents=None):
    """Differentiate ``f`` at ``args`` (pulling back ones) and return a :class:`Trace` of it.

    With ``tangents`` (one per argument, as for ``jvp``) it pushes them forward
    instead, ``jvp(f, args, tangents)``, and lists the pushforward.

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
    """
    record = Trace(_argument_names(f, len(args)))
    record.args = args
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
        record.gradients = pullback(_ones_like(out))
    finally:
        _backward.observers.remove(record.observe)
        _forward.observers.remove(record.observe_push)
        _state.tracer = None
    return record


def _argument_names(f, n):
    try:
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        names = []
    return (names + [f"arg{i}" for i in range(len(names), n)])[:n]


def _ones_like(out):
    from ._trees import rebuild_node, transform

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
        self.input_names = {}  # (id(tape), index) -> key path of a model leaf
        self.output = None
        self.gradients = None
        self.pushforwards = []  # every jvp level opened while f ran
        self.pushes = []  # (pushforward, primitive, args, kwargs, result dual)
        self.args = ()
        self.tangent = None

    def observe(self, tape, index, entry, g, parent_cts):
        if any(t is tape for t in self.tapes):
            self.events.append((tape, index, entry, g, parent_cts))

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
        listings = [(p.level, self._pushforward_listing(k, p)) for k, p in enumerate(self.pushforwards)]
        listings += [(tape.level, self._tape_listing(k, tape)) for k, tape in enumerate(self.tapes)]
        return "\n".join(text for _, text in sorted(listings, key=lambda item: item[0]))

    def _pushforward_listing(self, k, level):
        """Each push at ``level``: ``%n = op(...) -> primal  tangent ...``, inputs first seen as ``in``."""
        lines, numbers, count = [f"pushforward {k + 1} (level {level.level})"], {}, 0
        names = {id(leaf): name + dotted(path) for arg, name in zip(self.args, self.arg_names)
                 for path, leaf in leaves(arg, ())}
        for lvl, prim, args, kwargs, result in self.pushes:
            if lvl is not level:
                continue
            for a in args:
                if type(a) is Traced and a.tape is level and id(a) not in numbers:
                    numbers[id(a)], count = count, count + 1
                    name = names.get(id(a.value)) or self._value_name(a.value)
                    lines.append(f"  in  %{numbers[id(a)]} {name} {_describe(a.value)}  tangent {_tangent(a)}")
            shown = ", ".join(f"%{numbers[id(a)]}" if id(a) in numbers else _short(a) for a in args)
            extra = "".join(f", {k}={v!r}" for k, v in kwargs.items() if k != "dtype" or v is not None)
            numbers[id(result)] = numbers[id(result.value)] = count
            count += 1
            lines.append(f"  %{numbers[id(result)]} = {prim.__name__}({shown}{extra}) -> "
                         f"{_describe(result.value)}  tangent {_tangent(result)}{_how(prim, args, level)}")
        if k == 0 and self.tangent is not None:
            outs = [f"%{numbers[id(leaf)]}" for _, leaf in leaves(self.output, ()) if id(leaf) in numbers]
            lines.append("  out " + (", ".join(outs) or "(a constant: it does not depend on the direction)"))
        return "\n".join(lines)

    def _value_name(self, value):
        if type(value) is Traced and any(t is value.tape for t in self.tapes):
            return f"(tape {[id(t) for t in self.tapes].index(id(value.tape)) + 1} %{value.index})"
        return "input"

    def _tape_listing(self, k, tape):
        lines = [f"tape {k + 1} (level {tape.level})"]
        uses = _uses(tape)
        for i, entry in enumerate(tape.entries):
            lines.append("  " + self._entry_line(tape, i, entry, uses))
        if k == 0 and self.output is not None and self.tangent is None:
            outs = ", ".join(f"%{i}" for i in _output_indices(self, tape))
            lines.append("  out " + (outs or "(a constant: it does not depend on the inputs)"))
        return "\n".join(lines)

    def _entry_line(self, tape, i, entry, uses):
        prim, parents, argnums, ans, args, kwargs = entry
        if prim is None:
            name = self.input_names.get((id(tape), i), self._outer_name(tape, i))
            used = uses.get(i, [])
            tie = f"  used by {', '.join(f'%{u}' for u in used)}" if len(used) > 1 else ""
            return f"in  %{i} {name} {_describe(_input_value(tape, i))}{tie}"
        shown = _arguments(args, argnums, parents)
        consts = [_describe(a, "const ") for k, a in enumerate(args) if k not in argnums and _is_array(a)]
        saved = [f"%{p}" for p in parents] + consts
        extra = "".join(f", {k}={v!r}" for k, v in kwargs.items() if k != "dtype" or v is not None)
        return (f"%{i} = {prim.__name__}({shown}{extra}) -> {_describe(ans)}"
                f"  keeps {', '.join(saved) if saved else 'nothing'}")

    def _outer_name(self, tape, i):
        value = _input_value(tape, i)
        if type(value) is Traced and any(p is value.tape for p in self.pushforwards):
            return f"(pushforward {[id(p) for p in self.pushforwards].index(id(value.tape)) + 1} value)"
        for other in self.tapes:
            if type(value) is Traced and value.tape is other:
                return f"(tape {self.tapes.index(other) + 1} %{value.index})"
        return "input"

    def backward(self):
        """The backward listing: pullbacks that ran, cotangent kinds, accumulation points."""
        lines = []
        for k, tape in enumerate(self.tapes):
            events = [e for e in self.events if e[0] is tape]
            lines.append(f"backward of tape {k + 1} (level {tape.level})")
            received = {}
            names = {i: n for (t, i), n in self.input_names.items() if t == id(tape)}
            for _, i, entry, g, parent_cts in events:
                lines.append("  " + _event_line(i, entry, g, parent_cts, names))
                for p in entry[1]:
                    received[p] = received.get(p, 0) + 1
            for p, n in sorted(received.items()):
                if n > 1:
                    lines.append(f"  accumulated: %{p} received {n} cotangents and added them")
        return "\n".join(lines)

    def to_dot(self):
        """DOT text: one cluster per tape, nodes coloured by level, a tie is one node with several uses."""
        from ._dot import to_dot

        return to_dot(self)

    def render(self, path, format=None):
        """Write SVG or PNG (by ``path``'s suffix) with Graphviz's ``dot`` (apt-get install graphviz)."""
        from ._dot import render

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


def _tangent(d):
    """A dual's tangent: ``zero`` (symbolic) or ``dtype[shape]``."""
    t = d.tangent
    if type(t) is tuple:
        return "(" + ", ".join("zero" if type(x) is ZeroTangent else _describe(x) for x in t) + ")"
    return "zero" if type(t) is ZeroTangent else _describe(t)


def _how(prim, args, level):
    """Which forward rule ran: none (every tangent in was zero), the op's own, or its pullback's linearisation."""
    if not any(type(a) is Traced and a.tape is level and type(a.tangent) is not ZeroTangent for a in args):
        return "  (zeros in: no rule ran)"
    return "  (jvp rule)" if prim in _jvp_rules else "  (via its pullback)"


def _input_value(tape, i):
    return tape.entries[i][3]  # an input entry keeps the value it stands for


def _uses(tape):
    uses = {}
    for j, entry in enumerate(tape.entries):
        for p in entry[1]:
            uses.setdefault(p, []).append(j)
    return uses


def _output_indices(record, tape):
    out = []
    for _, leaf in leaves(record.output, ()):
        for j in range(len(tape.entries) - 1, -1, -1):
            if tape.entries[j][3] is leaf:
                out.append(j)
                break
    return out


def _arguments(args, argnums, parents):
    """Each operand: a traced one as ``%k:dtype[shape]``, a constant by its value or type."""
    by_position = dict(zip(argnums, parents))
    return ", ".join(f"%{by_position[k]}:{_describe(a)}" if k in by_position else _short(a)
                     for k, a in enumerate(args))


def _short(a):
    if _is_array(a):
        return _describe(a, "const ")
    if isinstance(a, (float, int, complex, np.generic)):
        return repr(a.item() if isinstance(a, np.generic) else a)
    if type(a) is Traced:
        return f"(level {a.level} value)"
    text = repr(a)
    return text if len(text) <= 30 else type(a).__name__


def _is_array(a):
    return isinstance(a, np.ndarray) or (type(a) is Traced and np.ndim(_plain(a)) > 0)


def _plain(a):
    while type(a) is Traced:
        a = a.value
    return a


def _describe(value, prefix=""):
    v = _plain(value)
    if isinstance(v, tuple):
        return "(" + ", ".join(_describe(x) for x in v) + ")"
    if v is None:
        return "?"
    level = f" @level {value.level}" if type(value) is Traced else ""
    shape = ",".join(map(str, np.shape(v)))
    return f"{prefix}{np.result_type(v)}[{shape}]{level}"


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


def _event_line(i, entry, g, parent_cts, names):
    prim, parents = entry[0], entry[1]
    head = f"%{i} {prim.__name__}: got {_ct(g)}"
    if parent_cts is None:
        return head + " -> skipped, zero passed to " + ", ".join(f"%{p}" for p in parents)
    outs = [f"%{p}{' ' + names[p] if p in names else ''} {_ct(c)}" for p, c in zip(parents, parent_cts)]
    dropped = [c for c in getattr(parent_cts, "dropped", ()) if type(c) is Thunk]
    tail = f"; {len(dropped)} thunk(s) for constants dropped" if dropped else ""
    return head + " -> " + ", ".join(outs) + tail


def _ct(c):
    k = kind(c)
    if k == "dense" or k == "thunk (evaluated)":
        v = c() if type(c) is Thunk else c
        return f"{k} {_describe(v)}"
    return k

