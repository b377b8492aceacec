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
    ``(name, f, args, shown)`` (``f`` numpy-style or a dict per system, ``args`` a tuple).  ``shown`` is what
    the row shows: the gradient (``False``, the default), ``H v`` (``True`` for the direction ones, or a
    direction, as ``compare``'s ``hvp``), or ``J v`` by forward mode (``"jvp"`` along ones, or ``("jvp", v)``).
    The columns are autodiff and ``against`` (by default torch, JAX and autograd; a dict case without one of
    them shows ``(not given)`` there).  Returns a :class:`SemanticsTable` (``str`` is Markdown).

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
    return SemanticsTable([(case, compare(case.f, *case.args, against=against, hvp=case.hvp, jvp=case.jvp))
                           for case in rows], ("autodiff", *(SYSTEMS if against is None else against)))


class _Case:
    def __init__(self, name, f, args, shown=False):
        self.name, self.f, self.args = name, f, tuple(args)
        self.jvp = _jvp_direction(shown)
        jvp = self.jvp is not False
        self.hvp = False if jvp else shown
        self.kind = "jvp" if jvp else "hvp" if shown is not False and shown is not None else "grad"


def _jvp_direction(shown):
    """A case's ``jvp``: ``False`` unless it shows one; ``True`` for ``"jvp"`` (a random direction), the direction
    given for ``("jvp", v)``."""
    if isinstance(shown, str) and shown == "jvp":
        return True
    if isinstance(shown, tuple) and len(shown) == 2 and isinstance(shown[0], str) and shown[0] == "jvp":
        return shown[1]
    return False


class SemanticsTable:
    """The rows of :func:`semantics_table`: ``comparisons`` (``(name, Comparison)`` pairs), and the table as
    Markdown (``str``, :meth:`to_markdown`), aligned text (:meth:`to_text`), LaTeX or plain data."""

    def __init__(self, rows, systems):
        self.comparisons = [(case.name, c) for case, c in rows]
        self.kinds = [case.kind for case, _ in rows]  # what each row shows: "grad", "hvp" or "jvp"
        self.systems = systems

    def rows(self):
        """Each row's cells: the case, where, one per system, the referee's (a kink's as its sides)."""
        return [[name, _at(c)] + [cell(c, s, kind) for s in self.systems] + [referee_cell(c, kind)]
                for (name, c), kind in zip(self.comparisons, self.kinds)]

    def _grid(self):
        return "", ["case", "at"] + [_NAMES[s] for s in self.systems] + [REFEREE], self.rows(), []

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


def cell(c, system, kind):
    """One system's number in a row showing ``kind`` (``"grad"``, ``"hvp"`` or ``"jvp"``)."""
    if system in c.missing:  # not installed, or it raised (autograd's cbrt has no derivative)
        return "(" + c.missing[system].split(":")[0] + ")"
    if system not in c.results:
        return "(not given)"
    r = c.results[system]
    return format_value({"grad": r.grad, "hvp": r.hvp, "jvp": r.jvp}[kind])


def referee_cell(c, kind):
    """The referee's gradient with each kink's entry written as its sides, ``(left 0.0, right 1.0)``; a single
    scalar argument at a kink reads ``no derivative: left -1.0, right 1.0``, and so does ``J v`` at a kink
    along its direction."""
    if kind == "jvp" and c.jvp_kink() is not None:
        left, right = c.jvp_kink()
        return f"no derivative along v: left {format_value(left)}, right {format_value(right)}"
    kinks = c.kinks() if kind == "grad" else []
    if not kinks:
        return cell(c, REFEREE, kind)
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
