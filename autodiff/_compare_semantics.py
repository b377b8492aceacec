"""semantics_table: :func:`autodiff.compare` over a list of cases, one row each, as docs/semantics.md shows.

A researcher's own conventions page: each case names a function and a point, each row holds every system's
gradient (or ``H v``) and the referee's, and a kink's cell says so with its one-sided derivatives.
"""

from ._compare import REFEREE, SYSTEMS, compare
from ._compare_export import format_value, render_latex, render_markdown, render_text

_NAMES = {"autodiff": "autodiff", "torch": "PyTorch", "jax": "JAX", "autograd": "autograd", REFEREE: REFEREE}


def semantics_table(cases, against=SYSTEMS):
    """One :func:`compare` per case and a table of them: ``cases`` holds ``(name, f, args)`` or
    ``(name, f, args, hvp)`` (``f`` numpy-style or a dict per system, ``args`` a tuple, ``hvp`` as for
    ``compare``: the row then shows ``H v``).  Returns a :class:`SemanticsTable` (``str`` is Markdown).

    >>> import numpy as np
    >>> table = semantics_table([("abs", lambda xp, x: xp.abs(x), (0.0,)),
    ...                          ("relu", lambda xp, x: xp.sum(xp.nn.relu(x)), (np.array([0.0, 1.0]),))],
    ...                         against=("torch",))
    >>> print(table)
    | case | at | autodiff | PyTorch | finite differences |
    |---|---|---|---|---|
    | abs | x0 = 0.0 | 0.0 | 0.0 | no derivative: left -1.0, right 1.0 |
    | relu | x0 = [0.0, 1.0] | [0.0, 1.0] | [0.0, 1.0] | [nan, 1.0]; at x0[0] no derivative: left 0.0, right 1.0 |
    """
    rows = [_Case(*case) for case in cases]
    return SemanticsTable([(case, compare(case.f, *case.args, against=against, hvp=case.hvp)) for case in rows],
                          ("autodiff", *against))


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
        rows = [[name, _at(c)] + [_cell(c, s, hv) for s in self.systems] + [_referee_cell(c, hv)]
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
    if system not in c.results:
        return "(not installed)"
    r = c.results[system]
    return format_value(r.hvp if hv else r.grad)


def _referee_cell(c, hv):
    """The referee's gradient, and where it has none, the one-sided derivatives instead of a number."""
    kinks = [] if hv else c.kinks()
    sides = [f"no derivative: left {format_value(left)}, right {format_value(right)}" for *_, left, right in kinks]
    if len(kinks) == 1 and kinks[0][1] == () and len(c.arguments.values) == 1:
        return sides[0]  # a single scalar argument at its kink: the sides are the whole answer
    value = _cell(c, REFEREE, hv)
    where = [f"at {name}{''.join(f'[{j}]' for j in i)} {s}" for (name, i, *_), s in zip(kinks, sides)]
    return "; ".join([value] + where)
