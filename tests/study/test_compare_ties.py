"""compare on tied arrays (one array at two positions of an argument): one variable, as design.md section 3 and
our grad have it, the sum at the first position and None at the others, in every column; ties=False gives each
position its own partial; a note says what each system does natively (issue 41)."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import compare

torch = pytest.importorskip("torch", reason="torch is an oracle; pip install -e '.[test]'")

W = np.array([1.0, 2.0])


def f(xp, m):
    return xp.sum(m["enc"] * 3.0) + xp.sum(xp.sin(m["dec"])) * m["b"]


def test_a_tie_is_one_variable_in_every_column_as_our_grad_gives_it():
    model = {"enc": W, "dec": W, "b": 0.5}
    c = compare(f, model, against=("torch",))
    ours = autodiff.grad(lambda m: f(anp, m))(model)
    for system in ("autodiff", "torch", "finite differences"):
        g = c.results[system].grad[0]
        assert g["dec"] is None and np.allclose(g["enc"], ours["enc"]) and np.isclose(g["b"], ours["b"])
    assert c.verdict("torch") == "="
    assert any(note.startswith("x0['enc'] = x0['dec']: one array, one variable") for note in c.notes())
    assert list(c.to_dict()["systems"]["torch"]["gradient"]) == ["x0['enc']", "x0['b']"]


def test_torch_accumulates_a_shared_tensor_the_same_way():
    p = torch.tensor(W, requires_grad=True)
    total = torch.sum(p * 3.0) + torch.sum(torch.sin(p)) * 0.5  # the tensor at both positions
    grad, = torch.autograd.grad(total, p)
    c = compare(f, {"enc": W, "dec": W, "b": 0.5}, against=("torch",))
    assert np.allclose(c.results["torch"].grad[0]["enc"], grad.numpy())


def test_ties_false_gives_each_position_its_partial_as_jax_and_autograd_pytrees_do():
    c = compare(f, {"enc": W, "dec": W, "b": 0.5}, against=("torch",), ties=False)
    g = c.results["autodiff"].grad[0]
    assert np.allclose(g["enc"], 3.0) and np.allclose(g["dec"], 0.5 * np.cos(W))
    assert not any("one variable" in note for note in c.notes())
    jax = pytest.importorskip("jax", reason="pip install jax (or the [compare] extra)")
    with jax.experimental.enable_x64() if hasattr(jax, "experimental") and hasattr(
            jax.experimental, "enable_x64") else jax.enable_x64(True):
        native = jax.grad(lambda m: f(jax.numpy, m))({"enc": W, "dec": W, "b": 0.5})
    assert np.allclose(native["dec"], g["dec"])  # JAX's own gradient of the pytree: per position


def test_ties_across_arguments_and_of_scalars_are_not_ties():
    c = compare(lambda xp, a, b: xp.sum(a * b), W, W, against=("torch",))  # two arguments: two variables
    assert np.allclose(c.results["autodiff"].grad[0], W) and np.allclose(c.results["autodiff"].grad[1], W)
    assert not c.arguments.ties
    c = compare(lambda xp, m: m["a"] * m["b"], {"a": 2.0, "b": 2.0}, against=())  # equal floats are values
    assert c.results["autodiff"].grad[0] == {"a": 2.0, "b": 2.0}


def test_hvp_direction_of_a_tie_is_read_at_its_first_position():
    model = {"enc": W, "dec": W, "b": 0.5}
    d = np.array([1.0, -1.0])
    v = {"enc": d, "dec": d, "b": 0.0}  # one variable, one direction (our hvp refuses two)
    c = compare(f, model, hvp=v, against=("torch",))
    hv, = autodiff.hvp(lambda m: f(anp, m), (model,), (v,))
    assert np.allclose(c.results["torch"].hvp[0]["enc"], hv["enc"]) and c.results["torch"].hvp[0]["dec"] is None
