"""Comparison.to_markdown / to_latex / to_dict and autodiff.semantics_table (issue 41): the same grid in every
format, and a table over a researcher's own cases."""

import json

import numpy as np
import pytest

import autodiff
from autodiff import compare, semantics_table

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")


def kinked():
    return compare(lambda xp, x: xp.sum(xp.abs(x) * (x + 1.0)), np.array([0.0, -2.0]), against=("torch",), hvp=True)


def test_markdown_has_one_row_per_system_and_the_notes():
    c = kinked()
    lines = c.to_markdown().splitlines()
    rows = [line for line in lines if line.startswith("| ")]
    assert rows[0] == "| system | value | gradient | Hv | vs FD |"
    assert lines[lines.index(rows[0]) + 1] == "|" + "---|" * 5
    assert [r.split(" | ")[0][2:] for r in rows[1:]] == list(c.results)
    assert [line[2:] for line in lines if line.startswith("- ")] == c.notes()
    assert any("no derivative here" in note for note in c.notes())


def test_latex_is_a_tabular_with_escaped_cells():
    c = compare({"autodiff": lambda d: autodiff.numpy.sum(d["w_1"] ** 2), "torch": lambda d: (d["w_1"] ** 2).sum()},
                {"w_1": np.array([1.0, 2.0])}, against=("torch",))
    tex = c.to_latex()
    assert tex.count(r"\begin{tabular}{llll}") == 1 and tex.count(r"\\") == 1 + len(c.results)
    assert r"w\_1" in tex and "w_1" not in tex.replace(r"w\_1", "")
    for name in c.results:
        assert "\n" + name + " & " in tex


def test_to_dict_is_plain_data_that_matches_the_results():
    c = kinked()
    d = c.to_dict()
    json.dumps(d)  # plain data (NaN is written as NaN)
    for name, r in c.results.items():
        assert np.allclose(d["systems"][name]["gradient"]["x0"], r.grad[0], equal_nan=True)
        assert np.allclose(d["systems"][name]["Hv"]["x0"], r.hvp[0], equal_nan=True)
        assert d["systems"][name]["verdict"] == c.verdict(name)
    fd = c.results["finite differences"]
    assert d["systems"]["finite differences"]["left"]["x0"] == fd.left[0].tolist()
    assert d["at"] == {"x0": [0.0, -2.0]} and d["notes"] == c.notes()


def _cells(c):
    """``{system: {column: cell}}`` read off ``c.to_markdown()``: what the comparison shows for each system."""
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in c.to_markdown().splitlines()
            if line.startswith("| ")]
    return {row[0]: dict(zip(rows[0], row)) for row in rows[1:]}


def test_semantics_table_builds_a_row_per_case_with_kinks_as_their_sides():
    cases = [("abs at 0", lambda xp, x: xp.abs(x), (0.0,)),
             ("relu", lambda xp, x: xp.sum(xp.nn.relu(x)), (np.array([0.0, 1.0]),)),
             ("norm, H v", lambda xp, x: xp.linalg.norm(x), (np.ones(2),), True)]
    table = semantics_table(cases, against=("torch",))
    assert autodiff.semantics_table is semantics_table
    lines = str(table).splitlines()
    assert lines[0] == "| case | at | autodiff | PyTorch | finite differences |" and len(lines) == 2 + len(cases)
    abs_row = [cell.strip() for cell in lines[2].strip("|").split("|")]
    c = table.comparisons[0][1]
    assert abs_row[2:4] == [_cells(c)[s]["gradient"] for s in ("autodiff", "torch")]  # as the case's own table
    left, right = c.results["finite differences"].left[0], c.results["finite differences"].right[0]
    assert abs_row[4] == f"no derivative: left {left:.1f}, right {right:.1f}"
    assert "[(left 0.0, right 1.0), 1.0]" in lines[3]
    norm = table.comparisons[2][1]
    assert _cells(norm)["torch"]["Hv"] in lines[4]
    assert set(table.to_dict()) == {name for name, *_ in cases}
    assert r"\begin{tabular}" in table.to_latex() and table.to_text().startswith("case")
