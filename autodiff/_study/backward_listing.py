"""The backward listing of a trace: each pullback that ran, the kind of cotangent it got and sent, and where
cotangents of one value were added up (an accumulation point: a tie, a value used twice)."""

from .._tangents import Thunk, ZeroTangent
from .listing import describe
from .listing_values import value_text


def backward_listing(record):
    """``backward of tape k (level L)`` per tape, one line per pullback in the order they ran."""
    lines = []
    for k, tape in enumerate(record.tapes):
        events = [e for e in record.events if e[0] is tape]
        lines.append(f"backward of tape {k + 1} (level {tape.level})")
        received = {}
        names = {i: n for (t, i), n in record.input_names.items() if t == id(tape)}
        for _, i, entry, g, parent_cts in events:
            lines.append("  " + _event_line(i, entry, g, parent_cts, names, record.values))
            for p in entry[1]:
                received[p] = received.get(p, 0) + 1
        for p, n in sorted(received.items()):
            if n > 1:
                lines.append(f"  accumulated: %{p} received {n} cotangents and added them")
    return "\n".join(lines)


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

