"""The backward pass: walk one tape in reverse, accumulating cotangents."""

from ._primitive import _rules, rule_of
from ._tangents import ZERO, Thunk, ZeroTangent, add_tangents

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
    entries = tape.entries
    cts = [None] * len(entries)
    for index, ct in seeds.items():
        cts[index] = ct if cts[index] is None else add_tangents(cts[index], ct)
    for i in range(max(seeds) if seeds else -1, -1, -1):
        g = cts[i]
        if g is None:
            continue
        entry = entries[i]
        if free:
            entries[i] = None
        prim, parents, argnums, ans, args, kwargs = entry
        if prim is None:
            continue
        cts[i] = None
        if type(g) is Thunk:
            g = g()
        if type(g) is ZeroTangent:
            _pass_zero(cts, parents)
            if observers:
                for observe in observers:
                    observe(tape, i, entry, g, None)
            continue
        rule = _rules.get(prim) or rule_of(prim)
        if type(rule) is tuple:  # one pullback per argument
            if len(argnums) == 1:
                c = rule[argnums[0]](g, ans, *args, **kwargs)
                p = parents[0]
                old = cts[p]
                cts[p] = c if old is None else add_tangents(old, c)
                if observers:
                    for observe in observers:
                        observe(tape, i, entry, g, (c,))
                continue
            parent_cts = [rule[k](g, ans, *args, **kwargs) for k in argnums]
        else:
            parent_cts = rule(g, argnums, ans, args, kwargs)
        if observers:
            for observe in observers:
                observe(tape, i, entry, g, parent_cts)
        for p, c in zip(parents, parent_cts):
            old = cts[p]
            cts[p] = c if old is None else add_tangents(old, c)
    return cts


def _pass_zero(cts, parents):
    for p in parents:
        if cts[p] is None:
            cts[p] = ZERO
