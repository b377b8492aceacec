"""Regenerate the convention table of docs/semantics.md with ``autodiff.semantics_table``.

    python -m docs.gen_semantics          # rewrite the table in docs/semantics.md
    python -m docs.gen_semantics --check  # exit 1 if the committed table differs from a fresh one

Each row is one ``compare`` call, made by :func:`autodiff.semantics_table` from the case list below: our
gradient (or ``H v``, or ``J v`` by forward mode), PyTorch's, JAX's, HIPS autograd's and the finite-difference
referee's (at a kink, its left and right derivatives).  Only the part of the page between the two markers is
generated; the sections around it are written by hand, so more conventions can be appended.  Where JAX or
autograd is not installed (``pip install jax autograd``, or the ``[compare]`` extra) its column is kept as
committed, and said so.
"""

import importlib
import os
import sys

import numpy as np

import autodiff.numpy as anp
from autodiff import semantics_table
from autodiff.extend import defvjp, primitive

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "semantics.md")
BEGIN = "<!-- BEGIN generated table: python -m docs.gen_semantics -->"
END = "<!-- END generated table -->"
OPTIONAL = ("jax", "autograd")  # kept as committed where not installed; torch is a test dependency
HEADER = ("| case | at | autodiff | PyTorch | JAX | autograd | finite differences |\n"
          "|---|---|---|---|---|---|---|")


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


def _autograd_ste():
    from autograd.extend import defvjp as autograd_defvjp
    from autograd.extend import primitive as autograd_primitive

    ste_autograd = autograd_primitive(np.round)
    autograd_defvjp(ste_autograd, lambda ans, x: lambda g: g)
    return lambda x: x * ste_autograd(x)


def _numpy_style(f):
    return lambda systems: f


_MODULES = {"torch": "torch", "jax": "jax.numpy", "autograd": "autograd.numpy"}


def _spelled(ours, numpy, **theirs):
    """One function per system where their names differ: ``theirs[s](module)`` is system ``s``'s, its module
    imported only when that system runs."""
    def build(systems):
        made = {s: theirs[s](importlib.import_module(_MODULES[s])) for s in systems if s in theirs}
        return {"autodiff": ours, "numpy": numpy} | made
    return build


# std with ddof 0 in every system (torch's default is 1); torch has no cbrt: its users write sign(x) |x|**(1/3)
_STD = _spelled(anp.std, np.std, torch=lambda t: lambda x: t.std(x, correction=0), jax=lambda j: j.std,
                autograd=lambda a: a.std)
_STD_SQUARED = _spelled(lambda x: anp.std(x) ** 2, lambda x: np.std(x) ** 2,
                        torch=lambda t: lambda x: t.std(x, correction=0) ** 2, jax=lambda j: lambda x: j.std(x) ** 2,
                        autograd=lambda a: lambda x: a.std(x) ** 2)
_CBRT = _spelled(anp.cbrt, np.cbrt, torch=lambda t: lambda x: t.sign(x) * t.abs(x) ** (1 / 3), jax=lambda j: j.cbrt,
                 autograd=lambda a: a.cbrt)
_NORM, _HYPOT = (lambda xp, x: xp.linalg.norm(x)), (lambda xp, x, y: xp.hypot(x, y))
_WHERE = (lambda xp, x: xp.sum(xp.where(x > 0, xp.sqrt(x), 0.0)))
_RANKS = np.array([1.0, 2.0, 3.0])  # sort(x) weighted by rank: which tied key got which place shows


GRAD, HVP, JVP = False, True, "jvp"  # what a row shows, as semantics_table reads it (an array: H v along it;
# (JVP, v): J v along v)

# (case, where, functions by system, arguments, what the row shows)
CASES = [
    ("`clip(x, 0, 1)` at its bounds", "x = [0, 1]",
     _numpy_style(lambda xp, x: xp.sum(xp.clip(x, 0.0, 1.0))), (np.array([0.0, 1.0]),), GRAD),
    ("`abs(x)` at 0", "x = 0", _numpy_style(lambda xp, x: xp.abs(x)), (0.0,), GRAD),
    ("`max(x)`, a tie", "x = [1, 1, 0.5]", _numpy_style(lambda xp, x: xp.max(x)), (np.array([1.0, 1.0, 0.5]),), GRAD),
    ("`max(x, axis=0)` (torch: `max(x, dim=0)`), a tie", "x = [1, 1, 0.5]",
     _numpy_style(lambda xp, x: xp.max(x, axis=0)), (np.array([1.0, 1.0, 0.5]),), GRAD),
    ("`maximum(x, y)`, a tie", "x = y = 1", _numpy_style(lambda xp, x, y: xp.maximum(x, y)), (1.0, 1.0), GRAD),
    ("`sort(x) · [1, 2, 3]`, equal keys", "x = [1, 1, 0]",
     _numpy_style(lambda xp, x: xp.sum(xp.sort(x) * xp.asarray(_RANKS))), (np.array([1.0, 1.0, 0.0]),), GRAD),
    ("`relu(x)` at 0", "x = [0, 1]", _numpy_style(lambda xp, x: xp.sum(xp.nn.relu(x))), (np.array([0.0, 1.0]),),
     GRAD),
    ("`hypot(x, y)` at 0", "x = y = 0", _numpy_style(_HYPOT), (0.0, 0.0), GRAD),
    ("Hessian of `hypot(x, y)` at 0, `H v`", "x = y = 0, v = (1, 1)", _numpy_style(_HYPOT), (0.0, 0.0), HVP),
    ("`norm(x)` at 0", "x = [0, 0]", _numpy_style(_NORM), (np.zeros(2),), GRAD),
    ("Hessian of `norm(x)` at 0, `H v`", "x = [0, 0], v = [1, 1]", _numpy_style(_NORM), (np.zeros(2),), HVP),
    ("`norm(x, 2)` at 0", "x = [0, 0]", _numpy_style(lambda xp, x: xp.linalg.norm(x, 2)), (np.zeros(2),), GRAD),
    ("Hessian of `norm(x, 2)` at 0, `H v`", "x = [0, 0], v = [1, 1]",
     _numpy_style(lambda xp, x: xp.linalg.norm(x, 2)), (np.zeros(2),), HVP),
    ("`norm(x, axis=0)` at 0", "x = [0, 0]", _numpy_style(lambda xp, x: xp.linalg.norm(x, axis=0)),
     (np.zeros(2),), GRAD),
    ("Hessian of `norm(x, axis=0)` at 0, `H v`", "x = [0, 0], v = [1, 1]",
     _numpy_style(lambda xp, x: xp.linalg.norm(x, axis=0)), (np.zeros(2),), HVP),
    ("`sum(norm(x, keepdims=True))` at 0", "x = [0, 0]",
     _numpy_style(lambda xp, x: xp.sum(xp.linalg.norm(x, keepdims=True))), (np.zeros(2),), GRAD),
    ("Hessian of `sum(norm(x, keepdims=True))` at 0, `H v`", "x = [0, 0], v = [1, 1]",
     _numpy_style(lambda xp, x: xp.sum(xp.linalg.norm(x, keepdims=True))), (np.zeros(2),), HVP),
    ("`norm(X, 'fro')` at 0", "X = 0 (2 × 2)", _numpy_style(lambda xp, x: xp.linalg.norm(x, "fro")),
     (np.zeros((2, 2)),), GRAD),
    ("Hessian of `norm(X, 'fro')` at 0, `H v`", "X = 0 (2 × 2), V = ones",
     _numpy_style(lambda xp, x: xp.linalg.norm(x, "fro")), (np.zeros((2, 2)),), HVP),
    ("`std(x)` at a constant slice", "x = [1, 1]", _STD, (np.ones(2),), GRAD),
    ("Hessian of `std(x)` at a constant slice, `H v`", "x = [1, 1], v = [1, -1]", _STD, (np.ones(2),),
     np.array([1.0, -1.0])),
    ("Hessian of `norm(x) ** 2` at 0, `H v`", "x = [0, 0], v = [1, 1]",
     _numpy_style(lambda xp, x: xp.linalg.norm(x) ** 2), (np.zeros(2),), HVP),
    ("Hessian of `abs(x) ** 2` at 0, `H v`", "x = 0, v = 1",
     _numpy_style(lambda xp, x: xp.abs(x) ** 2), (0.0,), HVP),
    ("Hessian of `std(x) ** 2` (= `var(x)`), `H v`", "x = [1, 1], v = [1, -1]",
     _STD_SQUARED, (np.ones(2),), np.array([1.0, -1.0])),
    ("`sqrt(x)` at 0", "x = 0", _numpy_style(lambda xp, x: xp.sqrt(x)), (0.0,), GRAD),
    ("`cbrt(x)` at 0", "x = 0", _CBRT, (0.0,), GRAD),
    ("`where(x > 0, sqrt(x), 0)`, reverse mode", "x = [0, 4]", _numpy_style(_WHERE), (np.array([0.0, 4.0]),),
     GRAD),
    ("`where(x > 0, sqrt(x), 0)`, forward mode `J v`", "x = [0, 4], v = [1, 0]", _numpy_style(_WHERE),
     (np.array([0.0, 4.0]),), (JVP, np.array([1.0, 0.0]))),
    ("the double `where`", "x = [0, 4]", _numpy_style(_double_where), (np.array([0.0, 4.0]),), GRAD),
    ("`abs(z)`, complex", "z = 3 + 4i", _numpy_style(lambda xp, z: xp.abs(z)), (3 + 4j,), GRAD),
    ("`real(z ** 2)`, complex", "z = 1 + 2i", _numpy_style(lambda xp, z: xp.real(z * z)), (1 + 2j,), GRAD),
    ("`x * ste(x)`, f″ (straight-through `round`)", "x = 0.7", None, (0.7,), HVP),
]


def _functions(case, systems):
    name, _, functions, args, _ = case
    if functions is not None:
        return functions(systems)
    made = {"autodiff": lambda x: x * ste(x), "numpy": lambda x: x * np.round(x)}
    builders = {"torch": _torch_ste, "jax": _jax_ste, "autograd": _autograd_ste}
    return made | {s: builders[s]() for s in systems if s in builders}


def installed(system):
    try:
        importlib.import_module(system)
    except ImportError:
        return False
    return True


def rows(systems):
    """One table row per case: its name, where, and the cells of autodiff, torch, JAX and autograd (``None``
    for a system that does not run) and finite differences."""
    cases = [(case[0], _functions(case, ("autodiff",) + systems), case[3], case[4]) for case in CASES]
    table = semantics_table(cases, against=systems)
    cells = {system: k + 2 for k, system in enumerate(table.systems)}
    out = []
    for case, row in zip(CASES, table.rows()):
        out.append([case[0], case[1]] + [row[cells[s]] if s in cells else None
                                         for s in ("autodiff", "torch", "jax", "autograd")] + [row[-1]])
    return out


def committed_columns(page):
    """The committed cells of each optional system's column, by case name."""
    table = page.split(BEGIN)[1].split(END)[0]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.strip().splitlines()[2:]]
    header = [c.strip() for c in table.strip().splitlines()[0].strip().strip("|").split("|")]
    columns = {"jax": "JAX", "autograd": "autograd"}
    return {s: {row[0]: row[header.index(title)] for row in cells} if title in header else {}
            for s, title in columns.items()}


def regenerate(page):
    """``page`` with its table made afresh (an optional system's column kept as committed where it is not
    installed)."""
    systems = ("torch",) + tuple(s for s in OPTIONAL if installed(s))
    kept = committed_columns(page)
    lines = [HEADER]
    for row in rows(systems):
        for k, s in ((4, "jax"), (5, "autograd")):
            row[k] = row[k] if row[k] is not None else kept[s].get(row[0], f"(not generated: {s} not installed)")
        lines.append("| " + " | ".join(row) + " |")
    head, rest = page.split(BEGIN)
    return head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + rest.split(END)[1]


def main(argv):
    with open(PAGE, encoding="utf-8") as f:
        page = f.read()
    fresh = regenerate(page)
    for system in OPTIONAL:
        if not installed(system):
            print(f"{system} is not installed: its column is kept as committed (pip install {system} to "
                  "regenerate it)", file=sys.stderr)
    if "--check" in argv:
        print("docs/semantics.md is up to date" if fresh == page else "docs/semantics.md differs from a fresh table")
        return 0 if fresh == page else 1
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
