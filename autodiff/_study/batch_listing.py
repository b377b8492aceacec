"""The listing of a ``vmap`` level: the batched program, one row per primitive with the batching rule it took.

A row reads ``%2 = multiply(%1, 2.0) -> float64[3]  batch axes (0, None) -> 0  (rule elementwise)``: shapes
are one example's; the batch axes are where each operand carries the examples as the rule saw them (``0``,
vmap having moved ``in_axes`` first; ``None``: the same for every example) and where the output does (``None``
when the rule found it the same for every example); the rule is the one the batching registry gave
(``loop over the examples`` for a primitive without one).  The ops each rule called on lower levels are
listed there, noted ``# batching rule of batch 1 %2``.
"""

from .._batching import example_shape
from .._traced import Traced
from .._trees import leaves
from .listing import UNDER, input_name, keywords, notes, outputs_text, plain, short
from .listing_values import value_line


def batch_listing(record, k, level, graph, rows, numbers):
    """``batch k (level L, n examples)``: each batched input and each push, then ``out`` when known."""
    program = record.title is not None  # a rule's program: a batch of one only to see every op, no columns
    lines = [record.title if program else f"batch {k + 1} (level {level.level}, {level.size} examples)"]
    for j, (kind, item, serial) in enumerate(rows):
        if kind == "in":
            batch = "" if program else f"  batched {_whole(item)}"
            lines.append(f"  in  %{j} {input_name(record, item.value)} {_example(item)}{batch}")
        else:
            how = None if program else record.batch_pushes[serial]
            lines.append("  " + _push_line(j, item, numbers, how) + notes(graph, j))
        if record.values:
            lines.append(UNDER + value_line(item if kind == "in" else item[3], None, None))
    if graph.outputs is not None:
        lines.append("  out " + outputs_text(graph, "the examples"))
    return "\n".join(lines)


def batch_outputs(pushes, level, output):
    """The rows whose results are the traced function's output (looked for down each result's levels), or
    ``None`` when none is: the vmap's output was moved (``out_axes``) or is not the function's."""
    found = {}
    for j, result in enumerate(p[4] for p in pushes if p[0] is level):
        v = result
        while True:
            found[id(v)] = j
            if type(v) is not Traced:
                break
            v = v.value
    rows = _rows(pushes, level)
    out = [rows[found[id(leaf)]] for _, leaf in leaves(output, ()) if id(leaf) in found]
    return out or None


def _rows(pushes, level):
    """Push number (among ``level``'s) -> its row in the listing (inputs take rows before their first use)."""
    from .provenance import pushforward_rows

    rows, _ = pushforward_rows(pushes, level)
    return [j for j, (kind, _, _) in enumerate(rows) if kind == "push"]


def _push_line(j, push, numbers, how):
    prim, args, kwargs, result = push
    shown = ", ".join(f"%{numbers[id(a)]}" if id(a) in numbers else short(a) for a in args)
    line = f"%{j} = {prim.__name__}({shown}{keywords(kwargs)}) -> {_example(result)}"
    if how is None:
        return line
    axes = "(" + ", ".join(map(str, how.axes_in)) + ")"
    return f"{line}  batch axes {axes} -> {how.axis_out}  (rule {how.rule})"


def _example(value):
    """One example's ``dtype[shape]``."""
    v = plain(value)
    if isinstance(v, tuple):
        return "(" + ", ".join(_example(x) for x in v) + ")"
    shape = example_shape(value)
    dtype = getattr(v, "dtype", None) or type(v).__name__
    return f"{dtype}[{','.join(map(str, shape))}]"


def _whole(value):
    v = plain(value)
    return f"{v.dtype}[{','.join(map(str, v.shape))}]"
