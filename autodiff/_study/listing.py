"""The text of a trace's listing: one line per tape entry or push, then the level's ``out`` line.

A traced operand prints as ``%k:dtype[shape]`` (in a pushforward just ``%k``),
a constant by its value when it has at most ``SHOWN`` elements
(``[1.0, 0.5]``, with its dtype when that is not float64, int64 or bool),
otherwise as ``const dtype[shape]``.  What :mod:`autodiff._study.provenance`
found about a line follows it after ``#``: ``dead`` and who recorded it.
"""

import numpy as np

from .._batching import Batch, example_shape
from .._jvp_rules import _jvp_rules
from .._paths import dotted
from .._tangents import ZeroTangent, is_inexact
from .._traced import Traced
from .._trees import leaves
from .compare_export import _number
from .listing_values import cotangents_received, value_line, value_text

SHOWN = 6  # a constant with at most this many elements is printed by value
UNDER = "      "  # a row's values line up under its text
_PLAIN_DTYPES = frozenset(map(np.dtype, (np.float64, np.int64, np.bool_)))


def tape_listing(record, k, tape, graph):
    """``tape k (level L)``, each entry with its notes, and the ``out`` line; with ``record.values`` each
    entry's value and the cotangent it received on a line under it."""
    lines = [f"tape {k + 1} (level {tape.level})"]
    uses = _uses(tape)
    shown = record.values and id(tape) not in record.silent
    received = cotangents_received(record, tape) if shown else {}
    for i, entry in enumerate(tape.entries):
        lines.append("  " + _entry_line(record, tape, i, entry, uses) + notes(graph, i))
        if record.values:
            lines.append(UNDER + value_line(entry[3], "cotangent", received.get(i)))
    lines.append("  out " + outputs_text(graph, "the inputs"))
    return "\n".join(lines)


def pushforward_listing(record, k, level, graph, rows, numbers):
    """``pushforward k (level L)``: each input and push with primal and tangent, then ``out`` when known."""
    lines = [f"pushforward {k + 1} (level {level.level})"]
    for j, (kind, item, _) in enumerate(rows):
        if kind == "in":
            name = input_name(record, item.value)
            lines.append(f"  in  %{j} {name} {describe(item.value)}  tangent {_tangent(item)}")
        else:
            lines.append("  " + _push_line(j, item, numbers, level) + notes(graph, j))
        if record.values:
            dual = item if kind == "in" else item[3]
            lines.append(UNDER + value_line(dual.value, "tangent", dual.tangent))
    if graph.outputs is not None:
        lines.append("  out " + outputs_text(graph, "the direction"))
    return "\n".join(lines)


def notes(graph, row):
    """``  # dead; pullback of tape 2 %3``: what is known about a row, or nothing."""
    said = (["dead"] if row in graph.dead else []) + ([graph.notes[row]] if row in graph.notes else [])
    return "  # " + "; ".join(said) if said else ""


def outputs_text(graph, depends_on):
    if graph.labelled is not None:
        return ", ".join(f"{label} = {_output_text(row, value)}" for label, row, value in graph.labelled)
    if graph.outputs is None:
        return "? (no pullback ran on this tape, so which entries are its output is not known)"
    if not graph.outputs:
        return f"(a constant: it does not depend on {depends_on})"
    return ", ".join(f"%{i}" for i in graph.outputs)


def _output_text(row, value):
    """``%3``, or what an output no entry made is: a symbolic zero (the rule said no derivative flows) or a
    constant."""
    if row is not None:
        return f"%{row}"
    v = plain(value)
    if type(v) is ZeroTangent or v is None or not np.any(np.asarray(v)):
        return "symbolic zero (no derivative flows)"
    return f"constant {value_text(v)}"


def _entry_line(record, tape, i, entry, uses):
    prim, parents, argnums, ans, args, kwargs = entry
    if prim is None:
        return _input_line(record, tape, i, uses.get(i, []))
    shown = _arguments(args, argnums, parents)
    consts = [describe(a, "const ") for k, a in enumerate(args) if k not in argnums and _is_array(a)]
    saved = [f"%{p}" for p in parents] + consts
    return (f"%{i} = {prim.__name__}({shown}{keywords(kwargs)}) -> {describe(ans)}"
            f"  keeps {', '.join(saved) if saved else 'nothing'}")


def _input_line(record, tape, i, used):
    name = record.input_names.get((id(tape), i)) or input_name(record, input_value(tape, i))
    tie = f"  used by {', '.join(f'%{u}' for u in used)}" if len(used) > 1 else ""
    return f"in  %{i} {name} {describe(input_value(tape, i))}{tie}"


def _push_line(j, push, numbers, level):
    prim, args, kwargs, result = push
    shown = ", ".join(f"%{numbers[id(a)]}" if id(a) in numbers else short(a) for a in args)
    return (f"%{j} = {prim.__name__}({shown}{keywords(kwargs)}) -> "
            f"{describe(result.value)}  tangent {_tangent(result)}{_how(prim, args, level)}")


def keywords(kwargs):
    return "".join(f", {k}={v!r}" for k, v in kwargs.items() if k != "dtype" or v is not None)


def input_name(record, value):
    """A level's input: the argument leaf it is (by key path), else the outer value it stands for: an entry
    of a tape, or a value of a pushforward or a batch."""
    return _named_input(record, value) or _argument_leaf(record, value) or _outer_value(record, value) or "input"


def _named_input(record, value):
    """The name the first tape gave the input (ties joined), if ``value`` is one."""
    for (tape_id, i), name in record.input_names.items():
        tape = next(t for t in record.tapes if id(t) == tape_id)
        if input_value(tape, i) is value:
            return name
    return None


def _argument_leaf(record, value):
    """``x['w']``: the argument leaf ``value`` is, by key path."""
    for arg, name in zip(record.args, record.arg_names):
        for path, leaf in leaves(arg, ()):
            if leaf is value:
                return name + dotted(path)
    return None


def _outer_value(record, value):
    """The outer value ``value`` stands for: an entry of a tape, or a value of a pushforward or a batch."""
    if type(value) is not Traced:
        return None
    for kind, levels in (("tape", record.tapes), ("pushforward", record.pushforwards), ("batch", record.batches)):
        k = next((k for k, owner in enumerate(levels) if owner is value.tape), None)
        if k is not None:
            return f"(tape {k + 1} %{value.index})" if kind == "tape" else f"({kind} {k + 1} value)"
    return None


def _tangent(d):
    """A dual's tangent: ``zero`` (symbolic) or ``dtype[shape]``."""
    t = d.tangent
    if type(t) is tuple:
        return "(" + ", ".join("zero" if type(x) is ZeroTangent else describe(x) for x in t) + ")"
    return "zero" if type(t) is ZeroTangent else describe(t)


def _how(prim, args, level):
    """Which forward rule ran: none (every tangent in was zero), the op's own, or its pullback's linearisation."""
    if not any(type(a) is Traced and a.tape is level and type(a.tangent) is not ZeroTangent for a in args):
        return "  (zeros in: no rule ran)"
    return "  (jvp rule)" if prim in _jvp_rules else "  (via its pullback)"


def input_value(tape, i):
    return tape.entries[i][3]  # an input entry keeps the value it stands for


def _uses(tape):
    uses = {}
    for j, entry in enumerate(tape.entries):
        for p in entry[1]:
            uses.setdefault(p, []).append(j)
    return uses


def _arguments(args, argnums, parents):
    """Each operand: a traced one as ``%k:dtype[shape]``, a constant by its value or type."""
    by_position = dict(zip(argnums, parents))
    return ", ".join(f"%{by_position[k]}:{describe(a)}" if k in by_position else short(a)
                     for k, a in enumerate(args))


def short(a):
    """A constant operand: small arrays and scalars by value, large arrays by type, others by repr or type."""
    if _is_array(a):
        return constant(a)
    if isinstance(a, (float, int, complex, np.generic)):
        v = a.item() if isinstance(a, np.generic) else a
        return _number(v) if isinstance(v, (float, complex)) else repr(v)  # 4 significant digits, as values
    if type(a) is Traced:
        return f"(level {a.level} value)"
    if type(a) is tuple and all(isinstance(x, (int, np.integer)) for x in a):
        return repr(tuple(int(x) for x in a))  # axes a rule computed: (1, 0), not (np.int64(1), np.int64(0))
    text = repr(a)
    return text if len(text) <= 30 else type(a).__name__


def constant(a):
    """``[1.0, 0.5]`` for an array of at most :data:`SHOWN` elements (dtype added unless plain), else
    ``const float64[100]``; an array traced at a lower level is described, never printed.

    >>> constant(np.array([1.0, 0.5])), constant(np.ones(2, np.float32)), constant(np.zeros(100))
    ('[1.0, 0.5]', '[1.0, 1.0]:float32', 'const float64[100]')
    """
    if type(a) is Traced or np.size(a) > SHOWN:
        return describe(a, "const ")
    inexact = is_inexact(a.dtype)
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) if inexact else a
    text = repr(np.round(wide, 4).tolist() if inexact else wide.tolist())
    return text if a.dtype in _PLAIN_DTYPES else f"{text}:{a.dtype}"


def _is_array(a):
    return isinstance(a, np.ndarray) or (type(a) is Traced and np.ndim(plain(a)) > 0)


def plain(a):
    while type(a) is Traced:
        a = a.value
    return a


def describe(value, prefix=""):
    """``dtype[shape]``, with ``@level L`` for a value traced at a lower level; a value batched by a ``vmap``
    shows one example's shape, as code inside the ``vmap`` sees it (``@level L batched``)."""
    v = plain(value)
    if isinstance(v, tuple):
        return "(" + ", ".join(describe(x) for x in v) + ")"
    if v is None:
        return "?"
    level = f" @level {value.level}" if type(value) is Traced else ""
    shape = np.shape(v)
    if type(value) is Traced and type(value.tape) is Batch:
        level, shape = level + " batched", example_shape(value)
    return f"{prefix}{np.result_type(v)}[{','.join(map(str, shape))}]{level}"
