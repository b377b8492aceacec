"""numpy's einsum forms, rewritten as one canonical form that the einsum primitive and its pullback read.

numpy accepts a subscript string or interleaved sublists, ``...`` for
unnamed axes, an implicit output (no ``->``), and size-1 axes that broadcast.
The canonical form names every axis with a letter, always has ``->``, and
every letter has one size across operands (size-1 axes are broadcast first,
with the differentiable ``broadcast_to``).  Repeated letters within one
operand (``'ii->i'``) stay: the pullback handles them.
"""

import string

import numpy as np

from ._broadcast import broadcast_to, shape_of

LABELS = string.ascii_letters  # numpy's own label set, in the order its sublist integers use


def _error(message):
    return ValueError(f"autodiff.numpy.einsum: {message}")


def from_sublists(args):
    """``(x, [0, 1], y, [1, 2], [0, 2])`` -> ``('ab,bc->ac', [x, y])``."""
    has_out = len(args) % 2 == 1
    pairs = args[:-1] if has_out else args
    subscripts = ",".join(_sublist_term(sub) for sub in pairs[1::2])
    if has_out:
        subscripts += "->" + _sublist_term(args[-1])
    return subscripts, list(pairs[0::2])


def _sublist_term(sub):
    try:
        items = list(sub)
    except TypeError:
        raise _error(f"in the sublist form, expected a list of axis integers, got {sub!r}") from None
    return "".join("..." if item is Ellipsis else _label(item) for item in items)


def _label(item):
    if not isinstance(item, (int, np.integer)) or not 0 <= item < len(LABELS):
        raise _error(f"sublist labels must be integers in [0, {len(LABELS)}) or Ellipsis, got {item!r}")
    return LABELS[item]


def canonical(subscripts, operands):
    """The explicit, ellipsis-free subscripts for ``operands``, and the operands with size-1 axes broadcast."""
    if not isinstance(subscripts, str):
        raise _error(f"expected a subscript string or the sublist form, got {type(subscripts).__name__}")
    subscripts = subscripts.replace(" ", "")
    ins, _, out = subscripts.partition("->")
    terms = ins.split(",")
    if len(terms) != len(operands):
        raise _error(f"{len(terms)} operands in {subscripts!r} but {len(operands)} given")
    shapes = [shape_of(op) for op in operands]
    terms, ellipsis = _expand_ellipses(terms, shapes, subscripts)
    out = _output(terms, ellipsis, out if "->" in subscripts else None)
    sizes = _sizes(terms, shapes, out)
    operands = [_broadcast(op, t, sizes) for op, t in zip(operands, terms)]
    return ",".join(terms) + "->" + out, operands


def _expand_ellipses(terms, shapes, subscripts):
    """Replace each ``...`` by fresh letters, right-aligned across operands (numpy's broadcasting)."""
    for t in terms:
        _check_term(t, subscripts)
    widths = [_ellipsis_width(t, s) for t, s in zip(terms, shapes)]
    fresh = [c for c in LABELS if c not in subscripts][: max(widths, default=0)]
    if len(fresh) < max(widths, default=0):
        raise _error("too many axes: einsum has 52 labels in all")
    ellipsis = "".join(fresh)
    return [t.replace("...", ellipsis[len(ellipsis) - w:]) for t, w in zip(terms, widths)], ellipsis


def _check_term(term, subscripts):
    """Letters a-zA-Z and at most one ``...``, or an error naming the term."""
    named = term.replace("...", "")
    if set(named) - set(LABELS) or term.count("...") > 1 or "." in named:
        raise _error(f"invalid term {term!r} in {subscripts!r}: use letters a-zA-Z and at most one '...'")


def _ellipsis_width(term, shape):
    """How many axes of ``shape`` the term's ``...`` stands for (0 without one); an error if they do not fit."""
    named = len(term.replace("...", ""))
    width = len(shape) - named if "..." in term else 0
    if width < 0 or ("..." not in term and named != len(shape)):
        raise _error(f"term {term!r} names {named} axes but its operand has shape {shape}")
    return width


def _output(terms, ellipsis, out):
    """The explicit output: numpy's implicit rule is '...' then the letters used once, sorted."""
    if out is None:
        letters = "".join(terms)
        once = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis)
        return ellipsis + "".join(once)
    out = out.replace("...", ellipsis)
    if len(set(out)) != len(out):
        raise _error(f"output {out!r} names an axis twice; use autodiff.numpy.diagonal for a diagonal")
    if not set(out) <= set("".join(terms)):
        raise _error(f"output {out!r} names {sorted(set(out) - set(''.join(terms)))}, which no operand has")
    return out


def _sizes(terms, shapes, out):
    """Each letter's size across operands: equal, or 1 (which broadcasts)."""
    sizes = {}
    for t, s in zip(terms, shapes):
        for c, n in zip(t, s):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise _error(f"axis {c!r} has sizes {sizes[c]} and {n} in different places; they must match or be 1")
            sizes[c] = n if n != 1 else sizes.get(c, 1)
    for t, s in zip(terms, shapes):
        for c, n in zip(t, s):
            if t.count(c) > 1 and n != sizes[c]:
                raise _error(f"the repeated index {c!r} in {t!r} needs equal sizes, got shape {s}")
    return sizes


def _broadcast(operand, term, sizes):
    target = tuple(sizes[c] for c in term)
    return operand if shape_of(operand) == target else broadcast_to(operand, target)
