"""autodiff.compare: the same f in autodiff, torch and JAX (where installed), finite differences as referee."""

import numpy as np
import pytest

import autodiff
from autodiff import compare

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

X = np.array([0.3, -1.2, 2.0])


def smooth(xp, x, y):
    return xp.sum(xp.sin(x) * y) + xp.sum(x * x) * y


def test_a_smooth_function_agrees_everywhere_with_torch_and_finite_differences():
    c = compare(smooth, X, 0.7, against=("torch",), hvp=True)
    ours, theirs = c.results["autodiff"], c.results["torch"]
    for a, b in zip(ours.grad + ours.hvp, theirs.grad + theirs.hvp):
        assert np.allclose(a, b)
    assert c.verdict("autodiff") == "=" and c.verdict("torch") == "="
    assert np.allclose(ours.grad[0], autodiff.grad(lambda x: smooth(autodiff.numpy, x, 0.7))(X))


def test_the_table_names_every_system_and_the_referee():
    lines = str(compare(smooth, X, 0.7, against=("torch",))).splitlines()
    assert lines[0].startswith("compare at x0 = [0.3, -1.2, 2.0], x1 = 0.7")
    assert [line.split("  ")[0] for line in lines[1:4]] == ["system", "autodiff", "torch"]
    assert lines[4].startswith("finite differences") and lines[4].endswith("(referee)")


def one_sided(f, x, h=1e-3):
    """Plain numpy's one-sided difference quotients of ``f`` at ``x``, element by element: an independent oracle
    for the referee's left and right derivatives on piecewise-linear functions."""
    x = np.asarray(x, float)
    left, right = np.empty_like(x), np.empty_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        left[i], right[i] = (f(x) - f(x - e)) / h, (f(x + e) - f(x)) / h
    return left, right


def test_a_kink_shows_each_systems_convention_against_the_referee():
    x0 = np.array([0.0, 1.0, 0.5])
    c = compare(lambda xp, x: xp.sum(xp.clip(x, 0.0, 1.0)), x0, against=("torch",))
    fd = c.results["finite differences"]
    left, right = one_sided(lambda x: np.sum(np.clip(x, 0.0, 1.0)), x0)
    assert np.allclose(fd.left[0], left) and np.allclose(fd.right[0], right)
    assert np.isnan(fd.grad[0][:2]).all() and np.allclose(fd.grad[0][2], right[2])  # no derivative at the bounds
    x = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64, requires_grad=True)
    torch.clip(x, 0.0, 1.0).sum().backward()
    assert np.allclose(c.results["torch"].grad[0], x.grad.numpy())
    assert c.verdict("torch") == "= elsewhere; a convention at the kink" == c.verdict("autodiff")


def test_a_hessian_with_no_limit_is_nan_in_the_referee():
    c = compare(lambda xp, x: xp.linalg.norm(x), np.zeros(2), against=("torch",), hvp=True)
    fd = c.results["finite differences"]
    assert np.isnan(fd.hvp[0]).all()
    left, right = one_sided(np.linalg.norm, np.zeros(2))
    assert np.isnan(fd.grad[0]).all() and np.allclose(fd.left[0], left) and np.allclose(fd.right[0], right)


def test_one_function_per_system():
    import autodiff.nn.functional as F

    fs = {"autodiff": lambda x: autodiff.numpy.sum(F.relu(x)), "torch": lambda x: torch.relu(x).sum(),
          "numpy": lambda x: np.sum(np.maximum(x, 0.0))}
    c = compare(fs, np.array([-1.0, 0.0, 2.0]), against=("torch",))
    fd = c.results["finite differences"]
    left, right = one_sided(fs["numpy"], np.array([-1.0, 0.0, 2.0]))
    assert np.allclose(fd.left[0], left) and np.allclose(fd.right[0], right)
    assert np.allclose(fd.grad[0], np.where(left == right, left, np.nan), equal_nan=True)
    x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
    torch.relu(x).sum().backward()
    assert np.allclose(c.results["torch"].grad[0], x.grad.numpy())


def test_bad_calls_say_what_to_give():
    with pytest.raises(ValueError, match="the systems are"):
        compare(smooth, X, 0.7, against=("tensorflow",))
    with pytest.raises(ValueError, match=r"no entry for \['torch'\]"):
        compare({"autodiff": lambda x: x}, 1.0, against=("torch",))
    with pytest.raises(ValueError, match="give one each"):
        compare(smooth, X, 0.7, against=(), hvp=np.ones(3))


def test_jax_runs_where_it_is_installed_and_is_listed_as_missing_where_not():
    try:
        import jax  # noqa: F401
    except ImportError:
        c = compare(smooth, X, 0.7, against=("jax",))
        assert "jax" not in c.results and "pip install jax" in c.missing["jax"] and "pip install jax" in str(c)
    else:
        assert "jax" in compare(smooth, X, 0.7, against=("jax",)).results


def test_jax_agrees_on_smooth_functions_and_splits_clip_at_its_bounds():
    jax = pytest.importorskip("jax", reason="JAX is not installed: pip install jax (or the [compare] extra)")
    c = compare(smooth, X, 0.7, against=("jax",), hvp=True)
    assert c.verdict("jax") == "="
    ours, theirs = c.results["autodiff"], c.results["jax"]
    for a, b in zip(ours.grad + ours.hvp, theirs.grad + theirs.hvp):
        assert np.allclose(a, b)
    kink = compare(lambda xp, x: xp.sum(xp.clip(x, 0.0, 1.0)), np.array([0.0, 1.0]), against=("jax",))
    expected = jax.grad(lambda x: jax.numpy.sum(jax.numpy.clip(x, 0.0, 1.0)))(jax.numpy.array([0.0, 1.0]))
    assert np.allclose(kink.results["jax"].grad[0], np.asarray(expected))


def test_the_semantics_page_is_what_its_generator_makes():
    """docs/semantics.md's table is regenerated here: our column, torch's and finite differences' always,
    JAX's where JAX is installed (elsewhere the generator keeps the committed cells)."""
    import importlib.util
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location("gen_semantics", os.path.join(root, "docs", "gen_semantics.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(gen.PAGE, encoding="utf-8") as f:
        page = f.read()
    assert gen.BEGIN in page and gen.END in page
    assert gen.regenerate(page) == page, "run `python -m docs.gen_semantics` and commit docs/semantics.md"
    assert "(not generated" not in page  # the committed JAX column was generated with JAX installed
