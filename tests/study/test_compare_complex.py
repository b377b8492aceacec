"""compare with complex inputs and outputs (issue 41): each system's convention shown as it is, imaginary
parts kept everywhere, and a note where two columns differ only by conjugation."""

import numpy as np
import pytest

import autodiff
from autodiff import compare

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")


def torch_z_grad(f, z):
    t = torch.tensor(np.asarray(z), requires_grad=True)
    out = f(t)
    (g,) = torch.autograd.grad(out, t, grad_outputs=torch.ones_like(out))
    return g.numpy()


def test_a_scalar_complex_input_keeps_every_imaginary_part():
    """Was: TypeError (a complex gradient cast to float); before that, FD at Re(z) and torch's 0.6+0.8j as 0.6."""
    c = compare(lambda xp, z: xp.abs(z), 3 + 4j, against=("torch",))
    ours = autodiff.grad(autodiff.numpy.abs)(3 + 4j)
    theirs = torch_z_grad(torch.abs, 3 + 4j)
    assert np.isclose(c.results["autodiff"].grad[0], ours) and np.isclose(c.results["torch"].grad[0], theirs)
    assert np.isclose(c.results["finite differences"].grad[0], ours)  # du/dx - i du/dy, our convention
    assert np.iscomplexobj(c.results["torch"].grad[0]) and c.results["torch"].grad[0].imag != 0
    text = str(c)
    assert "0.6+0.8j" in text and "0.6-0.8j" in text
    assert c.verdict("torch") == "= up to conjugation" and c.verdict("autodiff") == "="
    assert "torch differs from autodiff and finite differences only by conjugation" in text


def test_complex_arrays_and_a_complex_output():
    z = np.array([3 + 4j, 1j])
    c = compare(lambda xp, z: xp.sum(z * z), z, against=("torch",))
    theirs = torch_z_grad(lambda t: (t * t).sum(), z)
    assert np.allclose(c.results["torch"].grad[0], theirs)
    _, pullback = autodiff.vjp(lambda z: autodiff.numpy.sum(z * z), z)
    assert np.allclose(c.results["autodiff"].grad[0], pullback(1.0 + 0j)[0])
    assert np.allclose(c.results["finite differences"].grad[0], np.conj(theirs))
    assert np.iscomplexobj(c.results["finite differences"].value)


def test_jax_and_autograd_show_their_own_convention():
    jax = pytest.importorskip("jax", reason="pip install jax (or the [compare] extra)")
    autograd = pytest.importorskip("autograd", reason="pip install autograd (or the [compare] extra)")
    c = compare(lambda xp, z: xp.abs(z) ** 3, 1 - 2j, against=("jax", "autograd"))
    with jax.enable_x64(True):
        expected_jax = complex(jax.grad(lambda z: jax.numpy.abs(z) ** 3)(jax.numpy.asarray(1 - 2j)))
    expected_autograd = autograd.grad(lambda z: autograd.numpy.abs(z) ** 3)(1 - 2j)
    assert np.isclose(c.results["jax"].grad[0], expected_jax)
    assert np.isclose(c.results["autograd"].grad[0], expected_autograd)


def test_hvp_with_complex_arguments_says_what_to_do():
    with pytest.raises(TypeError, match=r"hvp with complex arguments \(x0\['z'\]\).*real and imaginary parts"):
        compare(lambda xp, d: xp.abs(d["z"]), {"z": 1j}, against=(), hvp=True)
