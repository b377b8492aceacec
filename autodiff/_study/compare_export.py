"""A :class:`~autodiff.Comparison` as text, Markdown, LaTeX or plain data, and the numbers in its cells.

Every rendering is built from one grid, ``(title, header, rows, notes)``, so the four can never disagree;
:func:`autodiff.semantics_table` renders its own grid through the same functions.
"""

import numpy as np

from .._containers import node_of
from .._trees import walk_flatten


def format_value(x):
    """A number, an array (4 significant digits; complex as ``0.6-0.8j``) or a structure of them (a dict, a
    dataclass, with arrays at its leaves); a tuple (one entry per argument) is joined by ``;``.

    >>> format_value((np.array([0.5, 1.0]), {"w": 3 + 4j, "b": None}))
    "[0.5, 1.0]; {'w': 3.0+4.0j, 'b': None}"
    """
    if isinstance(x, tuple):
        return format_value(x[0]) if len(x) == 1 else "; ".join(format_value(a) for a in x)
    if node_of(x) is None:
        return _leaf(x)
    leaves, treedef = walk_flatten(x)
    return repr(treedef.unflatten([_Text(_leaf(v)) for v in leaves]))


class _Text:
    """A formatted leaf that ``repr`` of its container shows as it is (no quotes)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _leaf(x):
    if x is None:
        return "None"
    a = np.asarray(x)
    if a.dtype.kind not in "biufc":
        return repr(x)
    if a.ndim == 0:
        return _number(a.item())
    if a.size > 8:
        return f"{a.dtype}[{','.join(map(str, a.shape))}] norm {_number(float(np.linalg.norm(a)))}"
    return _nested(a.tolist())


def _nested(rows):
    """``[[1.0, 2.0], [3.0, 4.0]]`` for a matrix: the shape stays visible."""
    if not isinstance(rows, list):
        return _number(rows)
    return "[" + ", ".join(_nested(r) for r in rows) + "]"


def _number(v):
    if isinstance(v, (int, bool)):
        return str(v)
    if isinstance(v, complex):
        sign = "-" if v.imag < 0 else "+"  # -0.0j prints as +0.0j: a sign of zero is no convention
        return f"{_real(v.real)}{sign}{_real(abs(v.imag))}j"
    return _real(float(v))


def _real(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v + 0.0:.4g}"  # + 0.0: no "-0"
    return text if any(c in text for c in ".en") else text + ".0"


def grid(c):
    """``(title, header, rows, notes)`` of a comparison: one row per system, then the missing ones."""
    hv, jv = c.results["autodiff"].hvp is not None, c.results["autodiff"].jvp is not None
    header = ["system", "value", "gradient"] + (["Hv"] if hv else []) + (["Jv (forward)"] if jv else []) + ["vs FD"]
    rows = [[name, format_value(r.value), format_value(r.grad)] + ([format_value(r.hvp)] if hv else [])
            + ([format_value(r.jvp)] if jv else []) + [c.verdict(name)] for name, r in c.results.items()]
    title = "compare at " + ", ".join(f"x{i} = {format_value(a)}" for i, a in enumerate(c.args))
    return title, header, rows, c.notes()


def _missing_noted(c):
    title, header, rows, notes = grid(c)
    return title, header, rows, [f"{name}: {why}" for name, why in c.missing.items()] + notes


def to_text(c):
    return render_text(*grid(c), missing=c.missing)


def render_text(title, header, rows, notes, missing=()):
    """Columns padded to their widest cell; a missing system's line is aligned under the system names."""
    widths = [max(len(row[k]) for row in [header] + rows) for k in range(len(header))]
    lines = [title] + ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header] + rows]
    lines += [f"{name:<{widths[0]}}  {why}" for name, why in dict(missing).items()]
    lines += notes
    return "\n".join(lines)


def to_markdown(c):
    return render_markdown(*_missing_noted(c))


def render_markdown(title, header, rows, notes):
    def line(cells):
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    table = [line(header), "|" + "---|" * len(header)] + [line(row) for row in rows]
    return "\n".join([title, ""] + table + ([""] + [f"- {note}" for note in notes] if notes else []))


def to_latex(c):
    return render_latex(*_missing_noted(c))


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text):
    return "".join(_LATEX.get(ch, ch) for ch in text)


def render_latex(title, header, rows, notes):
    """A ``tabular`` with ``\\hline`` rules only (no packages), the title above, notes in an ``itemize``."""
    def line(cells):
        return " & ".join(latex_escape(cell) for cell in cells) + r" \\"

    out = [latex_escape(title), "", r"\begin{tabular}{" + "l" * len(header) + "}", r"\hline", line(header),
           r"\hline"] + [line(row) for row in rows] + [r"\hline", r"\end{tabular}"]
    if notes:
        out += [r"\begin{itemize}"] + [r"\item " + latex_escape(note) for note in notes] + [r"\end{itemize}"]
    return "\n".join(out)


def to_dict(c):
    """The comparison as plain Python data (lists, floats, complex), by leaf name."""
    names = c.arguments.names
    systems = {name: _system_dict(c, name, r, names) for name, r in c.results.items()}
    return {"at": {n: _plain(x) for n, x in zip(names, c.arguments.values)}, "systems": systems,
            "missing": dict(c.missing), "notes": c.notes()}


def _system_dict(c, name, r, names):
    out = {"value": _plain(r.value), "gradient": _by_leaf(names, r.flat_grad),
           "Hv": None if r.flat_hvp is None else _by_leaf(names, r.flat_hvp), "verdict": c.verdict(name)}
    if r.flat_left is not None:
        out |= {"left": _by_leaf(names, r.flat_left), "right": _by_leaf(names, r.flat_right)}
    if r.jvp is not None:
        out["Jv"] = _plain(r.jvp)
    if r.jvp_sides is not None:
        out["Jv left"], out["Jv right"] = map(_plain, r.jvp_sides)
    return out


def _by_leaf(names, flat):
    return {n: _plain(x) for n, x in zip(names, flat)}


def _plain(x):
    return np.asarray(x).tolist()
