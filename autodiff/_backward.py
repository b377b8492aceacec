"""The backward pass: walk one tape in reverse, accumulating cotangents."""

from ._hooks import slot
from ._primitive import pull
from ._tangents import ZERO, ZeroTangent, add_tangents, unthunk

observers = []  # callables (tape, entry_index, entry, g, parent_cts); used by autodiff.trace


def backward(tape, seeds, free=False):
    """Pull the cotangents ``seeds`` ({entry index: cotangent}) back to every entry.

    Iterative, so a chain of any length works.  Entries that received no
    cotangent are skipped; one that received only a symbolic zero passes the
    zero on without running its pullback.  Returns the list of cotangents,
    where input entries keep theirs (``None`` when nothing reached them).
    With ``free`` (a tape pulled back once, as ``grad``'s is) each entry is
    dropped from the tape as its pullback starts, so the values it saved go
    as soon as they are read for the last time, as torch frees saved tensors.
    """
    entries, cts = tape.entries, seeded(tape, seeds)
    for i in range(max(seeds, default=-1), -1, -1):
        entry = entries[i]
        if cts[i] is not None and entry[0] is not None:  # something reached it, and it is no input
            step(tape, i, entry, cts, free)
    return cts


def seeded(tape, seeds):
    """One cotangent slot per entry of ``tape``, the ``seeds`` ({entry index: cotangent}) in theirs."""
    cts = [None] * len(tape.entries)
    for index, ct in seeds.items():
        cts[index] = add_tangents(cts[index], ct)
    return cts


def step(tape, i, entry, cts, free):
    """Pull entry ``i``'s cotangent back through its rule and add the results to its parents' cotangents."""
    g, cts[i] = unthunk(cts[i]), None
    prim, parents, argnums, ans, args, kwargs = entry
    residuals = _take(tape, i, free)
    parent_cts = None if type(g) is ZeroTangent else pull(prim, g, argnums, ans, args, kwargs, residuals)
    for observe in observers:
        observe(tape, i, entry, g, parent_cts)
    for p, c in zip(parents, parent_cts or [ZERO] * len(parents)):  # a zero passes on as a zero
        cts[p] = add_tangents(cts[p], c)


def _take(tape, i, free):
    """Entry ``i``'s residuals; with ``free``, the entry and its residuals leave the tape."""
    if not free:
        return tape.residuals.get(i)
    tape.entries[i] = None
    return tape.residuals.pop(i, None)


slot("backward", backward, "the backward pass over a tape (the accelerated twin unrolls the common rules)")
