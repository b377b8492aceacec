"""Graphviz export of a Trace: DOT text, and SVG/PNG where the ``dot`` program is installed."""

import shutil
import subprocess

from .._traced import Traced
from .listing import input_value

_COLOURS = ["lightblue", "lightsalmon", "palegreen", "plum", "khaki", "lightgrey"]


def to_dot(record):
    """DOT text for ``record``: one cluster per tape, nodes coloured by nesting level.

    A tied parameter is one input node with an edge to every use.  A value
    handed to an inner tape is linked to that tape's input by a dashed edge.
    """
    lines = ["digraph trace {", "  rankdir=LR;", '  node [style=filled, fontname="monospace"];']
    for k, tape in enumerate(record.tapes):
        colour = _COLOURS[(tape.level - 1) % len(_COLOURS)]
        lines.append(f'  subgraph cluster_{k} {{ label="tape {k + 1} (level {tape.level})";')
        for i, entry in enumerate(tape.entries):
            lines.append(f"    {_node(k, i)} [{_label(record, tape, i, entry)}, fillcolor={colour}];")
        lines.append("  }")
        for i, entry in enumerate(tape.entries):
            lines.extend(f"  {_node(k, p)} -> {_node(k, i)};" for p in entry[1])
        lines.extend(_links_from_outer(record, k, tape))
    lines.append("}")
    return "\n".join(lines)


def _node(k, i):
    return f"t{k}_{i}"


def _label(record, tape, i, entry):
    if entry[0] is None:
        name = record.input_names.get((id(tape), i), "input")
        return f'shape=box, label="%{i} {_escape(name)}"'
    return f'shape=ellipse, label="%{i} {_escape(entry[0].__name__)}"'


def _escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _links_from_outer(record, k, tape):
    links = []
    for i, entry in enumerate(tape.entries):
        if entry[0] is not None:
            continue
        value = input_value(tape, i)
        if type(value) is Traced and value.tape in record.tapes:
            outer = record.tapes.index(value.tape)
            links.append(f"  {_node(outer, value.index)} -> {_node(k, i)} [style=dashed];")
    return links


def render(record, path, format=None):
    """Write ``record`` as SVG or PNG (by ``path``'s suffix) with Graphviz's ``dot``."""
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(
            "autodiff.Trace.render needs Graphviz's `dot` program, which is not installed. "
            "Install it (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
            "conda: conda install graphviz), or use Trace.to_dot() and render the text elsewhere"
        )
    format = format or str(path).rsplit(".", 1)[-1]
    subprocess.run([dot, f"-T{format}", "-o", str(path)], input=to_dot(record), text=True, check=True)
    return path
