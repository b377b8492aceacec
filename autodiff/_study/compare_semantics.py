"""semantics_table: :func:`autodiff.compare` over a list of cases, one row each, as docs/semantics.md shows.

A researcher's own conventions page: each case names a function and a point, each row holds every system's
gradient (or ``H v``) and the referee's, and a kink's cell says so with its one-sided derivatives.
"""

import numpy as np

from .compare import REFEREE, SYSTEMS, compare
from .compare_export import _Text, format_value, render_latex, render_markdown, render_text

_NAMES = {"autodiff": "autodiff", "torch": "PyTorch", "jax": "JAX", "autograd": "autograd", REFEREE: REFEREE}


def semantics_table(cases, against=None):
    """One :func:`compare` per case and a table of them: ``cases`` holds ``(name, f, args)`` or
    ``(name, f, args, hvp)`` (``f`` numpy-style or a dict per system, ``args`` a tuple, ``hvp`` as for
    ``compare``: the row then shows ``H v``).  The columns are autodiff and ``against`` (by default torch, JAX
    and autograd; a dict case without one of them shows ``(not given)`` there).  Returns a
    :class:`SemanticsTable` (``str`` is Markdown).

    >>> import numpy as np
    >>> table = semantics_table([("abs", lambda xp, x: xp.abs(x), (0.0,)),
    ...                          ("relu", lambda xp, x: xp.sum(xp.nn.relu(x)), (np.array([0.0, 1.0]),))],
    ...                         against=("torch",))
    >>> print(table)
    | case | at | autodiff | PyTorch | finite differences |
    |---|---|---|---|---|
    | abs | x0 = 0.0 | 0.0 | 0.0 | no derivative: left -1.0, right 1.0 |
    | relu | x0 = [0.0, 1.0] | [0.0, 1.0] | [0.0, 1.0] | [(left 0.0, right 1.0), 1.0] |
    """
    rows = [_Case(*case) for case in cases]
    return SemanticsTable([(case, compare(case.f, *case.args, against=against, hvp=case.hvp)) for case in rows],
                          ("autodiff", *(SYSTEMS if against is None else against)))


class _Case:
    def __init__(self, name, f, args, hvp=False):
        self.name, self.f, self.args, self.hvp = name, f, tuple(args), hvp


class SemanticsTable:
    """The rows of :func:`semantics_table`: ``comparisons`` (``(name, Comparison)`` pairs), and the table as
    Markdown (``str``, :meth:`to_markdown`), aligned text (:meth:`to_text`), LaTeX or plain data."""

    def __init__(self, rows, systems):
        self.comparisons = [(case.name, c) for case, c in rows]
        self._hvp = [case.hvp is not False and case.hvp is not None for case, _ in rows]
        self.systems = systems

    def _grid(self):
        header = ["case", "at"] + [_NAMES[s] for s in self.systems] + [REFEREE]
        rows = [[name, _at(c)] + [_cell(c, s, hv) for s in self.systems] + [referee_cell(c, hv)]
                for (name, c), hv in zip(self.comparisons, self._hvp)]
        return "", header, rows, []

    def __str__(self):
        return self.to_markdown()

    __repr__ = __str__

    def to_markdown(self):
        return render_markdown(*self._grid()).lstrip("\n")

    def to_text(self):
        return render_text(*self._grid()).lstrip("\n")

    def to_latex(self):
        return render_latex(*self._grid()).lstrip("\n")

    def to_dict(self):
        """``{case name: the comparison's to_dict()}``."""
        return {name: c.to_dict() for name, c in self.comparisons}


def _at(c):
    return ", ".join(f"x{i} = {format_value(a)}" for i, a in enumerate(c.args))


def _cell(c, system, hv):
    if system in c.missing:
        return "(not installed)"
    if system not in c.results:
        return "(not given)"
    r = c.results[system]
    return format_value(r.hvp if hv else r.grad)


def referee_cell(c, hv):
    """The referee's gradient with each kink's entry written as its sides, ``(left 0.0, right 1.0)``; a single
    scalar argument at a kink reads ``no derivative: left -1.0, right 1.0``."""
    kinks = [] if hv else c.kinks()
    if not kinks:
        return _cell(c, REFEREE, hv)
    if len(c.arguments.values) == 1 and np.ndim(c.arguments.values[0]) == 0:
        *_, left, right = kinks[0]
        return f"no derivative: left {format_value(left)}, right {format_value(right)}"
    sides = {(name, i): f"(left {format_value(left)}, right {format_value(right)})"
             for name, i, _, left, right in kinks}
    flat = [_Text(_with_sides(name, g, sides)) for name, g in zip(c.arguments.names,
                                                                   c.results[REFEREE].flat_grad)]
    return format_value(c.arguments.structure(flat))


def _with_sides(name, g, sides):
    a = np.asarray(g)
    texts = np.empty(a.shape, object)
    for i in np.ndindex(a.shape):
        texts[i] = sides.get((name, i), format_value(a[i]))
    return texts.item() if a.ndim == 0 else _nested(texts.tolist())


def _nested(rows):
    return "[" + ", ".join(_nested(r) if isinstance(r, list) else r for r in rows) + "]"
