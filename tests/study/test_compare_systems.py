"""compare's arguments and systems (issue 41): dicts, tuples and dataclasses with each system's gradient in
their structure, symbolic zeros on every side, HIPS autograd's column, the numpy-style namespaces (torch's
maximum with a float, torch's sort, xp.nn.relu) and no global state changed in JAX."""

import dataclasses
import sys

import numpy as np
import pytest

import autodiff
from autodiff import compare

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float
    n: int = 3  # an int field: a constant, whose gradient is None


def loss(xp, p, d):
    return xp.sum(xp.tanh(p.w) * p.b) * d["s"] + d["t"][0] ** 2


def torch_loss_grads(w, b, s, t0):
    leaves = [torch.tensor(np.asarray(v, float), requires_grad=True) for v in (w, b, s, t0)]
    lw, lb, ls, lt = leaves
    out = (torch.tanh(lw) * lb).sum() * ls + lt ** 2
    return [g.numpy() for g in torch.autograd.grad(out, leaves)]


def test_dicts_tuples_and_dataclasses_get_each_systems_gradient_in_their_structure():
    p, d = Params(np.array([0.3, -1.0]), 0.5), {"s": 2.0, "t": (3.0, "label")}
    against = tuple(s for s in ("torch", "jax", "autograd") if _installed(s))
    c = compare(loss, p, d, against=against, hvp=True)
    gw, gb, gs, gt = torch_loss_grads(p.w, p.b, d["s"], d["t"][0])
    for name in ("autodiff", *against, "finite differences"):
        gp, gd = c.results[name].grad
        assert isinstance(gp, Params) and gp.n is None and gd["t"][1] is None
        assert np.allclose(gp.w, gw) and np.isclose(gp.b, gb) and np.isclose(gd["s"], gs)
        assert np.isclose(gd["t"][0], gt)
    assert all(c.verdict(name) == "=" for name in ("autodiff", *against))
    assert "Params(w=" in str(c) and "'t': (" in str(c)


def test_an_hvp_direction_in_the_arguments_structure():
    x = {"a": np.array([1.0, 2.0]), "b": 0.5}
    v = {"a": np.array([1.0, -1.0]), "b": 2.0}
    c = compare(lambda xp, x: xp.sum(x["a"] ** 3) * x["b"], x, against=("torch",), hvp=v)
    ours = autodiff.hvp(lambda x: autodiff.numpy.sum(x["a"] ** 3) * x["b"], (x,), (v,))
    assert np.allclose(c.results["torch"].hvp[0]["a"], ours[0]["a"]) and c.verdict("torch") == "="
    with pytest.raises(ValueError, match="not in the arguments' structure"):
        compare(lambda xp, x: xp.sum(x["a"]), x, against=(), hvp={"a": np.ones(2)})


def test_symbolic_zeros_on_every_side():
    """An unused argument and a constant function: torch gives None (or no graph at all), JAX and autograd
    zeros; every column shows zeros of the argument's shape, and H v too."""
    against = tuple(s for s in ("torch", "jax", "autograd") if _installed(s))
    c = compare(lambda xp, x, y: xp.sum(x * x), np.ones(2), np.ones(3), against=against, hvp=True)
    constant = compare(lambda xp, x: 3.0, np.ones(2), against=against, hvp=True)
    for name in ("autodiff", *against):
        assert np.array_equal(c.results[name].grad[1], np.zeros(3))
        assert np.array_equal(c.results[name].hvp[1], np.zeros(3))
        assert np.array_equal(constant.results[name].grad[0], np.zeros(2))
        assert constant.verdict(name) == "=" == c.verdict(name)


def test_numpy_style_f_runs_on_each_systems_namespace():
    """Was: torch.maximum(x, 0.0) TypeError, torch.sort's (values, indices), no way to reach jax.nn.relu."""
    x0 = np.array([3.0, -1.0, 2.0])
    against = tuple(s for s in ("torch", "jax", "autograd") if _installed(s))
    cases = [lambda xp, x: xp.sum(xp.maximum(x, 0.0) * x), lambda xp, x: xp.sum(xp.sort(x) * x),
             lambda xp, x: xp.sum(xp.nn.relu(x) * x), lambda xp, x: xp.sum(xp.max(x, axis=0) * x)]
    references = [np.maximum(x0, 0.0) * x0, np.sort(x0) * x0, np.maximum(x0, 0.0) * x0, np.max(x0) * x0]
    for f, reference in zip(cases, references):
        c = compare(f, x0, against=against)
        assert np.isclose(c.results["finite differences"].value, np.sum(reference))
        for name in ("autodiff", *against):
            assert np.isclose(c.results[name].value, np.sum(reference)), name
            assert c.verdict(name) == "=", (name, str(c))


def test_autograd_is_a_column_where_installed_and_listed_with_its_install_where_not(monkeypatch):
    autograd = pytest.importorskip("autograd", reason="pip install autograd (or the [compare] extra)")
    x0 = np.array([0.3, -1.2])
    c = compare(lambda xp, x: xp.sum(xp.sin(x) * x), x0, against=("autograd",))
    expected = autograd.grad(lambda x: autograd.numpy.sum(autograd.numpy.sin(x) * x))(x0)
    assert np.allclose(c.results["autograd"].grad[0], expected) and c.verdict("autograd") == "="
    monkeypatch.setitem(sys.modules, "autograd", None)  # import autograd now raises ImportError, as if not installed
    gone = compare(lambda xp, x: xp.sum(x), x0, against=("autograd",))
    assert "autograd" not in gone.results and "pip install autograd" in str(gone)


def test_jax_runs_in_64_bits_without_changing_jax_config():
    jax = pytest.importorskip("jax", reason="pip install jax (or the [compare] extra)")
    before = jax.config.jax_enable_x64
    c = compare(lambda xp, x: xp.sum(xp.sin(x)), np.array([0.1, 0.2]), against=("jax",))
    assert jax.config.jax_enable_x64 == before
    assert c.results["jax"].grad[0].dtype == np.float64 and c.verdict("jax") == "="
    assert np.allclose(c.results["jax"].grad[0], np.cos([0.1, 0.2]), rtol=1e-12)  # float32 would miss this


def test_a_dict_of_functions_per_system_with_structured_arguments():
    fs = {"autodiff": lambda d: autodiff.numpy.sum(d["w"] ** 2), "torch": lambda d: (d["w"] ** 2).sum()}
    c = compare(fs, {"w": np.array([1.0, -2.0])}, against=("torch",))
    assert np.allclose(c.results["torch"].grad[0]["w"], c.results["autodiff"].grad[0]["w"])
    assert c.verdict("torch") == "="


def test_no_float_argument_is_a_clear_error():
    with pytest.raises(TypeError, match=r"compare: no float or complex argument.*given int"):
        compare(lambda xp, n: n * 2.0, 3, against=())


def _installed(name):
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def test_a_dict_of_functions_runs_the_systems_it_names_by_default():
    fs = {"autodiff": lambda x: autodiff.numpy.sum(x ** 2), "torch": lambda x: (x ** 2).sum()}
    c = compare(fs, np.array([1.0, -2.0]))
    assert list(c.results) == ["autodiff", "torch", "finite differences"] and c.missing == {}
    with pytest.raises(ValueError, match=r"no entry for \['jax'\]"):
        compare(fs, np.array([1.0, -2.0]), against=("torch", "jax"))
