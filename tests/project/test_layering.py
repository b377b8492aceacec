"""The layering of docs/design.md, enforced: the core imports nothing above it.

The core is ``autodiff``'s root modules but its three doors: ``__init__.py``, which assembles the package,
``extend.py``, the rule writer's door, and ``_for_traversal.py``, traversal's (it names the known reductions).
Above the core: the rules (``autodiff.numpy``, ``.nn``, ``.scipy``),
the accelerations (``autodiff._accel``), the study tools (``autodiff._study``) and the packages built on
autodiff.  Every import statement counts, including one inside a function.
"""

import ast
import os

import pytest

import autodiff

PACKAGE = os.path.dirname(os.path.abspath(autodiff.__file__))
DOORS = {"__init__.py", "extend.py", "_for_traversal.py"}
ABOVE = ("autodiff._accel", "autodiff._study", "autodiff.numpy", "autodiff.nn", "autodiff.scipy",
         "traversal", "layers", "optimisers")
CORE = sorted(f for f in os.listdir(PACKAGE) if f.endswith(".py") and f not in DOORS)


def imported(path):
    """The absolute names of the modules ``path`` (a module of the autodiff package's root) imports."""
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative to the autodiff package (level 1) or above it
                base = ".".join(["autodiff"][: 2 - node.level] + ([base] if base else []))
            yield from ([base] if node.module else [f"{base}.{alias.name}" for alias in node.names])


def test_the_core_is_what_design_md_names():
    assert len(CORE) >= 25 and "_primitive.py" in CORE and "_backward.py" in CORE


@pytest.mark.parametrize("name", CORE)
def test_a_core_module_imports_nothing_above_the_core(name):
    above = [m for m in imported(os.path.join(PACKAGE, name)) if m.startswith(ABOVE)]
    assert above == [], f"autodiff/{name} imports {above}: the core must not (docs/design.md, layers)"


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from ._study import trace\n    from . import _accel\n")
    assert set(imported(str(path))) == {"autodiff._study", "autodiff._accel"}
