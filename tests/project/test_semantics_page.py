"""docs/semantics.md has what issue 41 asked for: an autograd column, one row per spelling of norm/hypot/std at 0
at first and second order, torch's max(x) against max(x, dim), where in forward and reverse mode, the sides at
every kink, and the complex conjugate relation; each row checked here against our own grad/jvp/hvp and torch."""

import os

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from tests.internals import format_value

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "semantics.md")
COLUMNS = ["case", "at", "autodiff", "PyTorch", "JAX", "autograd", "finite differences"]


def _table():
    text = open(PAGE, encoding="utf-8").read()
    lines = text.split("<!-- BEGIN generated table")[1].split("<!-- END generated table")[0].strip().splitlines()[1:]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    assert cells[0] == COLUMNS
    return {row[0]: dict(zip(COLUMNS, row)) for row in cells[2:]}


def test_the_table_has_an_autograd_column_filled_by_autograd():
    rows = _table()
    assert all(row["autograd"] and "not generated" not in row["autograd"] for row in rows.values())
    assert rows["`cbrt(x)` at 0"]["autograd"] == "(raised NotImplementedError)"


SPELLINGS = {  # the row's name (first order) -> our function and its point
    "`norm(x)`": (anp.linalg.norm, np.zeros(2)),
    "`norm(x, 2)`": (lambda x: anp.linalg.norm(x, 2), np.zeros(2)),
    "`norm(x, axis=0)`": (lambda x: anp.linalg.norm(x, axis=0), np.zeros(2)),
    "`sum(norm(x, keepdims=True))`": (lambda x: anp.sum(anp.linalg.norm(x, keepdims=True)), np.zeros(2)),
    "`norm(X, 'fro')`": (lambda x: anp.linalg.norm(x, "fro"), np.zeros((2, 2))),
}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_each_norm_spelling_has_a_first_and_a_second_order_row_with_our_values(name):
    rows, (f, x) = _table(), SPELLINGS[name]
    first, second = rows[f"{name} at 0"], rows[f"Hessian of {name} at 0, `H v`"]
    assert first["autodiff"] == format_value(autodiff.grad(f)(x))
    assert second["autodiff"] == format_value(autodiff.hvp(f, (x,), (np.ones_like(x),)))
    assert "(left -1.0, right 1.0)" in first["finite differences"]  # the kink, as its two sides


def test_hypot_and_std_rows_at_first_and_second_order():
    rows = _table()
    assert rows["`hypot(x, y)` at 0"]["autodiff"] == format_value(autodiff.grad(anp.hypot, argnums=(0, 1))(0.0, 0.0))
    x = np.ones(2)
    assert rows["`std(x)` at a constant slice"]["autodiff"] == format_value(autodiff.grad(anp.std)(x))
    hv = autodiff.hvp(anp.std, (x,), (np.array([1.0, -1.0]),))
    assert rows["Hessian of `std(x)` at a constant slice, `H v`"]["autodiff"] == format_value(hv)


def test_torch_max_and_max_dim_disagree_on_a_tie_and_the_page_says_so():
    rows = _table()
    x = torch.tensor([1.0, 1.0, 0.5], dtype=torch.float64, requires_grad=True)
    plain, = torch.autograd.grad(torch.max(x), x)
    along, = torch.autograd.grad(torch.max(x, dim=0).values, x)
    assert rows["`max(x)`, a tie"]["PyTorch"] == format_value(plain.numpy())
    assert rows["`max(x, axis=0)` (torch: `max(x, dim=0)`), a tie"]["PyTorch"] == format_value(along.numpy())
    assert not np.allclose(plain.numpy(), along.numpy())
    assert "`max(x, dim)` does not" in open(PAGE, encoding="utf-8").read()


def test_where_in_reverse_and_forward_mode():
    rows = _table()
    f = lambda x: anp.sum(anp.where(x > 0, anp.sqrt(x), 0.0))  # noqa: E731
    x = np.array([0.0, 4.0])
    reverse = rows["`where(x > 0, sqrt(x), 0)`, reverse mode"]["autodiff"]
    forward = rows["`where(x > 0, sqrt(x), 0)`, forward mode `J v`"]
    assert reverse == format_value(autodiff.grad(f)(x)) and "nan" in reverse
    assert forward["autodiff"] == format_value(autodiff.jvp(f, (x,), (np.array([1.0, 0.0]),))[1]) == "0.0"
    assert forward["finite differences"].startswith("no derivative along v: left 0.0")


def test_complex_rows_show_torch_as_our_conjugate():
    rows = _table()
    for name, f, z in (("`abs(z)`, complex", anp.abs, 3 + 4j), ("`real(z ** 2)`, complex", lambda z: anp.real(z * z),
                                                               1 + 2j)):
        ours = autodiff.grad(f)(z)
        assert rows[name]["autodiff"] == format_value(ours)
        assert rows[name]["PyTorch"] == format_value(np.conj(ours))


def test_every_first_order_kink_row_gives_its_sides():
    for name, row in _table().items():
        if "Hessian" in name or "f″" in name or "complex" in name or "forward mode" in name:
            continue
        if "nan" in row["finite differences"] or "left" in row["finite differences"]:
            assert "left" in row["finite differences"], name
