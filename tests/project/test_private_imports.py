"""Tests reach internals in two places only: ``tests/accel/`` (an acceleration is tested against its reference
twin, both internal) and ``tests/internals.py`` (the few internal names other tests need, each with its reason).
Everywhere else a test imports public names, so moving an internal module breaks one file of tests, not dozens."""

import ast
import pathlib

TESTS = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("autodiff", "traversal", "layers", "optimisers")
ALLOWED = (TESTS / "accel", TESTS / "internals.py")


def _private(module):
    """Is ``module`` (dotted) one of our packages' private modules (``autodiff._x``, ``layers._conv``)?"""
    parts = module.split(".")
    return parts[0] in PACKAGES and any(p.startswith("_") for p in parts[1:])


def private_imports(source):
    """The private modules and names of our packages that ``source`` imports or reads as attributes.

    >>> private_imports("import autodiff._trees\\nfrom layers import _conv, Dense\\nx = autodiff._accel.REFERENCE")
    ['autodiff._accel', 'autodiff._trees', 'layers._conv']
    """
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if _private(a.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _private(node.module):
                found.add(node.module)
            elif node.module.split(".")[0] in PACKAGES:
                found.update(f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in PACKAGES:
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                found.add(f"{node.value.id}.{node.attr}")
    return sorted(found)


def test_no_test_outside_accel_imports_a_private_module():
    files = [f for f in sorted(TESTS.rglob("*.py")) if not any(f == a or a in f.parents for a in ALLOWED)]
    assert len(files) > 80  # the walk found the suite
    offenders = {str(f.relative_to(TESTS)): found for f in files if (found := private_imports(f.read_text()))}
    assert offenders == {}, ("import the public name (autodiff, autodiff.extend, traversal, layers, optimisers), "
                             f"or add the internal one to tests/internals.py with its reason: {offenders}")
