"""compare(..., jvp=v): each system's forward mode beside finite differences along v, with the sides at a kink;
a system that raises is reported, not raised (issue 41: where in forward and reverse mode)."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import compare

pytest.importorskip("torch", reason="torch is an oracle; pip install -e '.[test]'")


def test_jvp_is_each_systems_forward_mode_and_agrees_with_finite_differences_where_smooth():
    x, v = np.array([0.3, 1.0]), np.array([1.0, -2.0])
    c = compare(lambda xp, x: xp.sum(xp.sin(x) * x), x, jvp=v, against=("torch",))
    ours = autodiff.jvp(lambda x: anp.sum(anp.sin(x) * x), (x,), (v,))[1]
    assert np.isclose(c.results["autodiff"].jvp, ours) and np.isclose(c.results["torch"].jvp, ours)
    assert np.isclose(c.results["finite differences"].jvp, ours, rtol=1e-6)
    assert c.verdict("torch") == "=" and "Jv (forward)" in c.to_markdown()
    assert np.isclose(c.to_dict()["systems"]["autodiff"]["Jv"], ours)


def test_at_a_kink_along_v_the_referee_gives_both_sides_and_forward_mode_is_a_convention():
    where = lambda xp, x: xp.sum(xp.where(x > 0, xp.sqrt(x), 0.0))  # noqa: E731
    c = compare(where, np.array([0.0, 4.0]), jvp=np.array([1.0, 0.0]), against=("torch",))
    left, right = c.jvp_kink()
    assert left == 0.0 and right == np.inf
    assert c.results["autodiff"].jvp == 0.0  # forward mode: where selects the tangent of the branch taken
    assert np.isnan(c.results["autodiff"].grad[0][0])  # reverse mode: 0 * inf
    assert "J v: no derivative along v here: left 0.0, right inf" in c.notes()


def test_a_system_that_raises_is_reported_in_its_row():
    autograd = pytest.importorskip("autograd", reason="pip install autograd (or the [compare] extra)")
    del autograd
    c = compare(lambda xp, x: xp.cbrt(x), 0.0, against=("autograd",))
    assert c.missing["autograd"].startswith("raised NotImplementedError")
    assert "autograd            raised NotImplementedError" in str(c) and c.results["autodiff"].grad[0] == np.inf


def test_jvp_with_complex_arguments_is_refused_with_the_fix():
    with pytest.raises(TypeError, match=r"jvp with complex arguments \(x0\) is not supported"):
        compare(lambda xp, z: xp.abs(z), 1 + 1j, jvp=True, against=())
