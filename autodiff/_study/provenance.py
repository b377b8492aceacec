"""What a trace's listing says beside each entry: who recorded it, and whether it is dead.

Under nested differentiation an outer level records entries for three
reasons, and the listing names which:

* ``forward of tape 2 %3``: the inner entry ``%3`` was called on values traced
  at this level too, so the primitive recorded its outer-level image here;
* ``pullback of tape 2 %3``: the inner backward pass ran ``%3``'s pullback,
  whose differentiable ops were recorded here (this is what the outer
  derivative differentiates);
* ``sum of cotangents for tape 2 %0``: the inner backward pass added two
  cotangents of ``%0`` (an input or a value used twice);

and entries with no note were recorded by the differentiated function itself.
An entry is *dead* when no path leads from it to the level's output, so no
derivative ever reads it (JAX marks such a variable ``_``).

Each level (a tape, or a pushforward's pushes) is seen as a :class:`Graph` of
rows with parents.  A pullback's rows are found by walking back from the
cotangents it returned, never past a row that existed before it ran: the rows
of its residuals and incoming cotangent, and the mark (row count) taken when
the previous pullback of the same tape returned.
"""

from .._batching import Batch
from .._tangents import Thunk
from .._traced import Traced


class Graph:
    """One level's record: rows in listing order, their parents, clocks and primitive names.

    ``clocks[j]`` orders a row against the marks taken while pullbacks ran (an
    entry's index on a tape; the serial number of the push in a pushforward,
    -1 for an input); ``row_of(value)`` finds a traced value's row, looking
    through tracing at higher levels.
    """

    def __init__(self, owner, name, parents, clocks, names, row_of):
        self.owner, self.name = owner, name
        self.parents, self.clocks, self.names, self.row_of = parents, clocks, names, row_of
        self.notes = {}  # row -> who recorded it
        self.outputs = None  # rows of the level's output, when known
        self.labelled = None  # [(label, row or None, value)] when each output has a name
        self.dead = set()

    def note(self, row, text):
        if row is not None and row not in self.notes:
            self.notes[row] = text


def tape_graph(tape, name):
    """A tape as a :class:`Graph`: one row per entry."""
    entries = tape.entries
    names = [e[0].__name__ if e[0] is not None else None for e in entries]

    def row_of(value):
        while type(value) is Traced:
            if value.tape is tape:
                return value.index
            value = value.value
        return None

    return Graph(tape, name, [list(e[1]) for e in entries], list(range(len(entries))), names, row_of)


def pushforward_rows(pushes, level):
    """The rows of one pushforward: each dual input (when first used) and each push, in order.

    Returns ``(rows, numbers)``: a row is ``("in", dual, -1)`` or
    ``("push", (prim, args, kwargs, result), serial)`` with the push's serial
    number among all pushes; ``numbers`` maps ``id`` of a dual (and of a
    push's primal output) to its row.
    """
    rows, numbers = [], {}
    for serial, (lvl, prim, args, kwargs, result) in enumerate(pushes):
        if lvl is not level:
            continue
        for a in args:
            if type(a) is Traced and a.tape is level and id(a) not in numbers:
                numbers[id(a)] = len(rows)
                rows.append(("in", a, -1))
        numbers[id(result)] = len(rows)
        if type(result) is Traced and result.tape is level:  # a batching rule's output the same for every
            numbers[id(result.value)] = len(rows)              # example is not batched: it is its own value
        rows.append(("push", (prim, args, kwargs, result), serial))
    return rows, numbers


def pushforward_graph(pushes, level, name):
    """A pushforward as a :class:`Graph`: its rows from :func:`pushforward_rows`."""
    rows, numbers = pushforward_rows(pushes, level)
    parents, names = [], []
    for kind, item, _ in rows:
        args = item[1] if kind == "push" else ()
        parents.append([numbers[id(a)] for a in args if type(a) is Traced and a.tape is level])
        names.append(item[0].__name__ if kind == "push" else None)

    def row_of(value):
        while type(value) is Traced:
            if value.tape is level:
                return numbers.get(id(value))
            value = value.value
        return None

    return Graph(level, name, parents, [serial for _, _, serial in rows], names, row_of)


def annotate(record, graphs):
    """Fill each graph's ``notes``, ``outputs`` and ``dead`` from what ``record`` observed."""
    by_owner = {id(g.owner): g for g in graphs}
    _note_batch_rules(record, by_owner)
    for g in graphs:
        _note_forwards(record, g, by_owner)
    _note_pullbacks(record, by_owner)
    _note_sums(record, by_owner)
    for g in graphs:
        if g.outputs is not None:
            g.dead = _dead_rows(g)


def _note_forwards(record, g, by_owner):
    """Rows of lower levels that are the images of this level's entries (or pushes)."""
    for row, output in _outputs_per_row(record, g):
        for v in _flat(output):
            lower = by_owner.get(id(v.tape)) if type(v) is Traced else None
            if lower is not None:
                lower.note(lower.row_of(v), f"forward of {g.name} %{row}")


def _outputs_per_row(record, g):
    """``(row, output one level down)``: a tape entry keeps it unwrapped, a push's dual holds it as its value."""
    if any(t is g.owner for t in record.tapes):
        return [(i, e[3]) for i, e in enumerate(g.owner.entries) if e[0] is not None]
    rows, _ = pushforward_rows(record.pushes, g.owner)
    return [(j, one_level_down(item[3], g.owner)) for j, (kind, item, _) in enumerate(rows) if kind == "push"]


def one_level_down(result, level):
    """What a push's result holds one level down: a dual's primal, a batched value's batch (a batching rule's
    output that is the same for every example is that value itself)."""
    return result.value if type(result) is Traced and result.tape is level else result


def _note_batch_rules(record, by_owner):
    """Rows of lower levels a batching rule recorded: those made while its push ran (a loop's picks and
    stack, a rule's reshapes, the op itself at the level below)."""
    numbers = {id(b): pushforward_rows(record.pushes, b)[1] for b in record.batches}
    for serial, how in record.batch_pushes.items():
        level = record.pushes[serial][0]
        row = numbers[id(level)][id(record.pushes[serial][4])]
        label = f"batching rule of {by_owner[id(level)].name} %{row}"
        for graph in by_owner.values():
            if graph.owner.level < level.level and id(graph.owner) in how.before:
                start, end = how.before[id(graph.owner)], how.after[id(graph.owner)]
                for r, clock in enumerate(graph.clocks):
                    if start <= clock < end:
                        graph.note(r, label)


def _note_pullbacks(record, by_owner):
    last = {}  # id(tape) -> the marks taken when its previous pullback returned
    for (tape, i, entry, g, cts), marks in zip(record.events, record.marks):
        inner = by_owner.get(id(tape))
        if inner is None:
            continue
        before = last.get(id(tape), {})
        for graph in by_owner.values():
            if _below(graph.owner, tape) and id(graph.owner) in marks:  # a level opened later saw nothing
                _note_one_pullback(graph, inner, i, entry, g, cts, before, marks)
        last[id(tape)] = marks


def _below(owner, tape):
    """Can ``tape``'s pullbacks record on ``owner``?  A lower level can; so can a batch at the tape's own level
    number, opened after the tape closed (``jacobian``'s ``vmap`` over the basis pulls back the record of ``f``)."""
    return owner.level < tape.level or (type(owner) is Batch and owner.level == tape.level)


def _note_one_pullback(graph, inner, i, entry, g, cts, before, marks):
    """Rows of ``graph`` that entry ``i``'s pullback recorded: the cotangents' ancestors inside its window."""
    start = before.get(id(graph.owner), 0)
    for v in _flat((g, entry[3], entry[4])):
        row = graph.row_of(v)
        if row is not None:
            start = max(start, graph.clocks[row] + 1)
    end = marks[id(graph.owner)]
    label = f"pullback of {inner.name} %{i}"
    given = _flat(cts if cts is not None else ())
    for c in given:
        _walk(graph, graph.row_of(c), start, end, label)
    for c in given + list(getattr(cts, "all", None) or ()):  # thunks, maybe evaluated after it returned
        if type(c) is Thunk and c.evaluated:
            _walk(graph, graph.row_of(c.value), start, None, label)


def _walk(graph, row, start, end, label):
    """Note ``row`` and its ancestors whose clocks lie in ``[start, end)`` (iteratively)."""
    stack = [row] if row is not None else []
    seen = set()
    while stack:
        r = stack.pop()
        clock = graph.clocks[r]
        if r in seen or clock < start or (end is not None and clock >= end):
            continue
        seen.add(r)
        graph.note(r, label)
        stack.extend(graph.parents[r])


def _note_sums(record, by_owner):
    """An ``add`` of two cotangents sent to the same inner entry (or of their running sum): the backward
    pass adding them up.  Found by what it adds, not when it ran, since the pass adds before or after it
    reports a pullback."""
    for graph in by_owner.values():
        sent = _cotangent_rows(record, by_owner, graph)  # row -> {(inner name, entry)} it was sent to
        for j, parents in enumerate(graph.parents):
            if graph.names[j] != "add" or len(parents) != 2:
                continue
            common = sent.get(parents[0], set()) & sent.get(parents[1], set())
            if common and j not in graph.notes:
                name, p = min(common)
                graph.note(j, f"sum of cotangents for {name} %{p}")
                sent.setdefault(j, set()).update(common)


def _cotangent_rows(record, by_owner, graph):
    sent = {}
    for tape, _, entry, _, cts in record.events:
        inner = by_owner.get(id(tape))
        if inner is None or tape.level <= graph.owner.level:
            continue
        for p, c in zip(entry[1], cts if cts is not None else ()):
            row = graph.row_of(c.value if type(c) is Thunk and c.evaluated else c)
            if row is not None:
                sent.setdefault(row, set()).add((inner.name, p))
    return sent


def _dead_rows(g):
    """Rows (not inputs) from which no path leads to an output."""
    live, stack = set(), list(g.outputs)
    while stack:
        r = stack.pop()
        if r not in live:
            live.add(r)
            stack.extend(g.parents[r])
    return {r for r in range(len(g.parents)) if r not in live and g.names[r] is not None}


def seeded_rows(record, tape):
    """The entries an inner tape's backward pass was seeded at: those that ran a pullback (or passed a zero)
    without receiving a cotangent from another entry of the tape.  ``None`` when no pullback ran."""
    ran, fed = [], set()
    for t, i, entry, _, _ in record.events:
        if t is tape:
            ran.append(i)
            fed.update(entry[1])
    if not ran:
        return None
    return sorted({i for i in ran if i not in fed})


def _flat(value):
    """The leaves of nested tuples and lists (a pullback's cotangents, an entry's arguments)."""
    out, stack = [], [value]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        else:
            out.append(x)
    return out
