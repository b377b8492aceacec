"""The numbers a listing shows with ``values=True``: each row's value, and the tangent or cotangent it got.

Every number has :func:`autodiff._study.compare_export.format_value`'s four significant digits (complex as
``0.6-0.8j``); an array of more than :data:`WHOLE` elements shows its first and last three, as numpy prints a
long array.  A value traced at a lower level shows its number (the listing says the level already).
"""

import numpy as np

from .._tangents import Thunk, ZeroTangent
from .._traced import Traced
from .compare_export import _number

WHOLE = 8  # an array with more elements than this is shown by its first and last three


def value_text(x):
    """A value, a tangent or a cotangent in a few characters: ``zero (symbolic)`` for a symbolic zero.

    >>> value_text(np.array([0.5, 1.0])), value_text(np.arange(10.0)), value_text(3 + 4j)
    ('[0.5, 1.0]', '[0.0, 1.0, 2.0, ..., 7.0, 8.0, 9.0]', '3.0+4.0j')
    """
    x = _plain(x)
    if type(x) is ZeroTangent:
        return "zero (symbolic)"
    if isinstance(x, tuple):
        return "(" + ", ".join(value_text(part) for part in x) + ")"
    a = np.asarray(x)
    if a.dtype.kind not in "biufc":
        return type(x).__name__
    if a.ndim == 0:
        return _number(a.item())
    formatter = {"float_kind": _number, "complex_kind": _number, "int_kind": str, "bool": str}
    text = np.array2string(a, separator=", ", threshold=WHOLE, edgeitems=3, max_line_width=10 ** 9,
                           formatter=formatter)
    return " ".join(text.split())  # a matrix's rows on one line


def _plain(x):
    if type(x) is Thunk:
        x = x.value if x.evaluated else x
    while type(x) is Traced:
        x = x.value
    return x


def cotangents_received(record, tape):
    """``{row: cotangent}``: what each entry of ``tape`` received in its backward pass (the sum of its
    children's), inputs included; rows no cotangent reached are absent."""
    got = {}
    inputs = {i for i, e in enumerate(tape.entries) if e[0] is None}
    for t, i, entry, g, cts in record.events:
        if t is not tape:
            continue
        got[i] = g  # the pass adds an entry's cotangents up before running its pullback
        for p, c in zip(entry[1], cts if cts is not None else [ZeroTangent()] * len(entry[1])):
            if p in inputs:
                got[p] = _add(got.get(p), _plain(c))
    return got


def _add(total, c):
    if total is None or type(total) is ZeroTangent:
        return c
    if type(c) is ZeroTangent or type(c) is Thunk:  # a thunk never evaluated gave nothing
        return total
    return _plain(total) + c


def value_line(value, other_name, other):
    """The line under a row: ``value [...]  tangent [...]`` (or ``cotangent``); ``other`` ``None`` omits it."""
    text = f"value {value_text(value)}"
    return text if other is None else f"{text}  {other_name} {value_text(other)}"
