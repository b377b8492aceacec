"""Regenerate the convention table of docs/semantics.md with ``autodiff.compare``.

    python -m docs.gen_semantics          # rewrite the table in docs/semantics.md
    python -m docs.gen_semantics --check  # exit 1 if the committed table differs from a fresh one

Each row is one ``compare`` call: our gradient (or ``H v``), PyTorch's, JAX's and the finite-difference
referee's (at a kink, its left and right derivatives).  Only the part of the page between the two markers
is generated; the sections around it are written by hand, so more conventions can be appended.  Where JAX
is not installed (``pip install jax``, or the ``[compare]`` extra) its column is kept as committed, and said
so.
"""

import importlib
import os
import sys

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff._study.compare import format_value
from autodiff._study.compare_semantics import referee_cell
from autodiff.extend import defvjp, primitive

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "semantics.md")
BEGIN = "<!-- BEGIN generated table: python -m docs.gen_semantics -->"
END = "<!-- END generated table -->"
HEADER = "| case | at | autodiff | PyTorch | JAX | finite differences |\n|---|---|---|---|---|---|"


def _double_where(xp, x):
    safe = xp.where(x > 0, x, 1.0)  # the branch not taken sees a harmless input, so its derivative is finite
    return xp.sum(xp.where(x > 0, xp.sqrt(safe), 0.0))


# The straight-through estimator: rounds forward, passes the cotangent through unchanged backward.
ste = primitive(np.round, "ste")
defvjp(ste, lambda g, ans, x: g)


def _torch_ste():
    import torch

    class STE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.round(x)

        @staticmethod
        def backward(ctx, g):
            return g

    return lambda x: x * STE.apply(x)


def _jax_ste():
    import jax

    @jax.custom_vjp
    def ste_jax(x):
        return jax.numpy.round(x)

    ste_jax.defvjp(lambda x: (jax.numpy.round(x), None), lambda res, g: (g,))
    return lambda x: x * ste_jax(x)


def _relu(system):
    if system == "torch":
        import torch

        return lambda x: torch.relu(x).sum()
    if system == "jax":
        import jax

        return lambda x: jax.nn.relu(x).sum()
    import autodiff.nn.functional as F

    return lambda x: anp.sum(F.relu(x))


def _numpy_style(f):
    return lambda systems: f


_MODULES = {"torch": "torch", "jax": "jax.numpy"}


def _spelled(ours, numpy, **theirs):
    """One function per system where their names differ: ``theirs[s](module)`` is system ``s``'s, its module
    imported only when that system runs."""
    def build(systems):
        made = {s: theirs[s](importlib.import_module(_MODULES[s])) for s in systems if s in theirs}
        return {"autodiff": ours, "numpy": numpy} | made
    return build


# std with ddof 0 in every system (torch's default is 1); torch has no cbrt: its users write sign(x) |x|**(1/3)
_STD_SQUARED = _spelled(lambda x: anp.std(x) ** 2, lambda x: np.std(x) ** 2,
                        torch=lambda t: lambda x: t.std(x, correction=0) ** 2, jax=lambda j: lambda x: j.std(x) ** 2)
_CBRT = _spelled(anp.cbrt, np.cbrt, torch=lambda t: lambda x: t.sign(x) * t.abs(x) ** (1 / 3), jax=lambda j: j.cbrt)


# (case, where, functions by system, arguments, "grad", or "hvp" (direction ones) or an hvp direction)
CASES = [
    ("`clip(x, 0, 1)` at its bounds", "x = [0, 1]",
     _numpy_style(lambda xp, x: xp.sum(xp.clip(x, 0.0, 1.0))), (np.array([0.0, 1.0]),), "grad"),
    ("`abs(x)` at 0", "x = 0", _numpy_style(lambda xp, x: xp.abs(x)), (0.0,), "grad"),
    ("`max(x)`, a tie", "x = [1, 1, 0.5]", _numpy_style(lambda xp, x: xp.max(x)), (np.array([1.0, 1.0, 0.5]),), "grad"),
    ("`maximum(x, y)`, a tie", "x = y = 1", _numpy_style(lambda xp, x, y: xp.maximum(x, y)), (1.0, 1.0), "grad"),
    ("`relu(x)` at 0", "x = [0, 1]", None, (np.array([0.0, 1.0]),), "grad"),
    ("`hypot(x, y)` at 0", "x = y = 0", _numpy_style(lambda xp, x, y: xp.hypot(x, y)), (0.0, 0.0), "grad"),
    ("Hessian of `hypot(x, y)` at 0, `H v`", "x = y = 0, v = (1, 1)",
     _numpy_style(lambda xp, x, y: xp.hypot(x, y)), (0.0, 0.0), "hvp"),
    ("`norm(x)` at 0", "x = [0, 0]", _numpy_style(lambda xp, x: xp.linalg.norm(x)), (np.zeros(2),), "grad"),
    ("Hessian of `norm(x)` at 0, `H v`", "x = [0, 0], v = [1, 1]",
     _numpy_style(lambda xp, x: xp.linalg.norm(x)), (np.zeros(2),), "hvp"),
    ("Hessian of `norm(x) ** 2` at 0, `H v`", "x = [0, 0], v = [1, 1]",
     _numpy_style(lambda xp, x: xp.linalg.norm(x) ** 2), (np.zeros(2),), "hvp"),
    ("Hessian of `abs(x) ** 2` at 0, `H v`", "x = 0, v = 1",
     _numpy_style(lambda xp, x: xp.abs(x) ** 2), (0.0,), "hvp"),
    ("Hessian of `std(x) ** 2` (= `var(x)`), `H v`", "x = [1, 1], v = [1, -1]",
     _STD_SQUARED, (np.ones(2),), np.array([1.0, -1.0])),
    ("`sqrt(x)` at 0", "x = 0", _numpy_style(lambda xp, x: xp.sqrt(x)), (0.0,), "grad"),
    ("`cbrt(x)` at 0", "x = 0", _CBRT, (0.0,), "grad"),
    ("`where(x > 0, sqrt(x), 0)`", "x = [0, 4]",
     _numpy_style(lambda xp, x: xp.sum(xp.where(x > 0, xp.sqrt(x), 0.0))), (np.array([0.0, 4.0]),), "grad"),
    ("the double `where`", "x = [0, 4]", _numpy_style(_double_where), (np.array([0.0, 4.0]),), "grad"),
    ("`x * ste(x)`, f″ (straight-through `round`)", "x = 0.7", None, (0.7,), "hvp"),
]


def _functions(case, systems):
    name, _, functions, args, _ = case
    if functions is not None:
        return functions(systems)
    if name.startswith("`relu"):
        return {s: _relu(s) for s in systems} | {"numpy": lambda x: np.sum(np.maximum(x, 0.0))}
    made = {"autodiff": lambda x: x * ste(x), "numpy": lambda x: x * np.round(x)}
    builders = {"torch": _torch_ste, "jax": _jax_ste}
    return made | {s: builders[s]() for s in systems if s in builders}


def jax_installed():
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def rows(systems):
    """One table row per case: its name, where, and the cells of autodiff, torch, JAX (``None`` when JAX
    does not run) and finite differences."""
    out = []
    for case in CASES:
        name, where, _, args, kind = case
        hvp = kind if not isinstance(kind, str) else kind == "hvp"
        c = autodiff.compare(_functions(case, ("autodiff",) + systems), *args, against=systems, hvp=hvp)
        cell = {s: format_value(r.grad if hvp is False else r.hvp) for s, r in c.results.items()}
        referee = referee_cell(c, hvp is not False)  # at a kink: its one-sided derivatives, not a number
        out.append([name, where, cell["autodiff"], cell["torch"], cell.get("jax"), referee])
    return out


def committed_jax_column(page):
    """The JAX cells of the committed table, by case name."""
    table = page.split(BEGIN)[1].split(END)[0]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.strip().splitlines()[2:]]
    return {row[0]: row[4] for row in cells}


def regenerate(page):
    """``page`` with its table made afresh (JAX's column kept as committed where JAX is not installed)."""
    systems = ("torch", "jax") if jax_installed() else ("torch",)
    kept = committed_jax_column(page) if "jax" not in systems else {}
    lines = [HEADER]
    for row in rows(systems):
        row[4] = row[4] if row[4] is not None else kept.get(row[0], "(not generated: JAX not installed)")
        lines.append("| " + " | ".join(row) + " |")
    head, rest = page.split(BEGIN)
    return head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + rest.split(END)[1]


def main(argv):
    with open(PAGE, encoding="utf-8") as f:
        page = f.read()
    fresh = regenerate(page)
    if not jax_installed():
        print("JAX is not installed: its column is kept as committed (pip install jax to regenerate it)",
              file=sys.stderr)
    if "--check" in argv:
        print("docs/semantics.md is up to date" if fresh == page else "docs/semantics.md differs from a fresh table")
        return 0 if fresh == page else 1
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
